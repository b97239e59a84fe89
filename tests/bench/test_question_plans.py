"""Plans written from the question alone (bench/question_plans.py): an average or total
over periods the question does not name reads the row in every period and takes its
mean or sum; a question that counts its periods, or names them, gets no such plan."""

from __future__ import annotations

from bench.question_plans import derived_plan


def _steps(question: str) -> list[dict]:
    plan = derived_plan(question)
    assert plan is not None, question
    return plan["steps"]


def test_an_average_of_no_period_reads_the_row_in_every_period_and_takes_its_mean():
    steps = _steps("What is the average Cost of sales, according to Nevomif's annual report?")
    assert [s["operation"] for s in steps] == ["GET", "EXTRACT", "COMPUTE"]
    assert (steps[1]["row"], steps[1]["period"]) == ("Cost of sales", "all")
    assert steps[2]["expression"] == "mean($T1)"


def test_named_or_counted_periods_get_no_series():
    named = _steps("What is the average net income for 2018 and 2019, according to Tofevem's "
                   "annual report?")
    assert all(s.get("period") != "all" for s in named)
    assert derived_plan("What was the average losses recognized in other income (expense), "
                        "net, across the 3 year period, according to Mofaduz's annual "
                        "report?") is None
