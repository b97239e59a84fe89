"""Plans written from the question alone (bench/question_plans.py): an average or total
over periods the question does not name reads the row in every period and takes its
mean or sum (of a table of as many periods as the question counts, if it does), a change
of no period the change between the two it is stated in; a question that names its
periods gets no such plan."""

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


def test_named_periods_get_no_series_and_counted_ones_a_series_of_that_count():
    named = _steps("What is the average net income for 2018 and 2019, according to Tofevem's "
                   "annual report?")
    assert all(s.get("period") != "all" for s in named)
    counted = _steps("What was the average losses recognized in other income (expense), net, "
                     "across the 3 year period, according to Mofaduz's annual report?")
    assert counted[1]["period"] == "all 3" and counted[2]["expression"] == "mean($T1)"


def test_a_metric_of_one_year_over_it_and_the_year_before():
    change = _steps("What is the percentage change in audit-related fees in 2019, according to "
                    "Dezesur's annual report?")
    assert [(s["row"], s["period"]) for s in change[1:3]] == [("audit-related fees", "2018"),
                                                             ("audit-related fees", "2019")]
    assert change[3]["expression"] == "round(($T2 - $T1) / $T1 * 100, 2)"
    balance = _steps("What is the 2019 average free cash flow, according to Fidizub's annual "
                     "report?")
    assert [s.get("period") for s in balance[1:3]] == ["2018", "2019"]
    assert balance[3]["expression"] == "($T1 + $T2) / 2"
    row = _steps("What was the average invested capital in 2018, according to Sagevar's annual "
                 "report?")  # a row of averages, as its table may state it
    assert [(s["row"], s["period"]) for s in row[1:]] == [("average invested capital", "2018")]


def test_a_change_of_no_period_is_between_the_two_periods_its_row_is_stated_in():
    change = _steps("What was the change in closing cash, according to Nasirud's annual "
                    "report?")
    assert (change[1]["row"], change[1]["period"]) == ("closing cash", "all")
    assert change[2]["expression"] == "change($T1)"
    relative = _steps("What was the percentage change in total emissions, according to "
                      "Ledules's annual report?")
    assert (relative[1]["row"], relative[1]["period"]) == ("total emissions", "all")
    assert relative[2]["expression"] == "round(percent_change($T1), 2)"
    # a difference's sign is not said; a change of one year is from the year before
    assert all(s.get("period") != "all" for s in _steps(
        "What was the difference in net profit between both FYs, according to Tiganav's "
        "annual report?"))
    assert all(s.get("period") != "all" for s in _steps(
        "What is the percentage change in revenue in 2019, according to Dezesur's annual "
        "report?"))
