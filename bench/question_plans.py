"""Plans written from a question alone, as an LLM planner writes them: consumes a TAT-QA
bench question, produces a plan (GET the report the question names → EXTRACT each line
item by row and period, in the question's own words → COMPUTE), or None when the
question does not read as line items and arithmetic.

A stand-in for an LLM that writes sensible plans without seeing the tables: it measures
what the executors make of such plans (EXTRACT by row, COMPUTE), not the planner. It
reads the question with the heuristic planner's own reader (shared/planners/metric.py), but
never looks at a document, a table, the gold answer or its derivation.
"""

from __future__ import annotations

import regex

from shared.planners.metric import (Metric, Refusal, Term, average_over_periods,
                                    percent_change_of, read_metric, year_before)

_YEAR_AVERAGE = regex.compile(r"\b(?:FY\s?)?\d{4}\s+(?:average|mean)\b", regex.I)
"""A year before its average: "the 2019 average free cash flow"."""
_NAMED = regex.compile(r"according to (?P<name>[\w&.\- ]+?)'s annual report", regex.I)


def derived_plan(question: str) -> dict | None:
    """The plan an LLM would write for `question`; None when there is none to write."""
    named = _NAMED.search(question)
    metric = read_metric(question)
    if named is None or isinstance(metric, Refusal):
        return None
    steps = [{"id": "E1", "operation": "GET", "source": f"{named['name']} annual report",
              "output_var": "$DOC"}]
    if over := _over_every_period(metric):
        # "the average X", "the total X across all years": the periods are the table's,
        # which the plan does not see: the row in every period, and their mean or sum
        item, function, period = over
        return _over_series(steps, item, period, f"{function}($T1)", metric)
    if over := _over_both_periods(metric):
        # "the change in closing cash", "the percentage change in total emissions": of no
        # period, the change between the two the table shows (COMPUTE refuses more)
        item, expression = over
        return _over_series(steps, item, "all", expression, metric)
    metric = _over_the_year_before(metric, question)
    if metric.open:
        return None  # a percentage change of one period: which other, the table says
    for n, term in enumerate(metric.terms, 1):
        step = {"id": f"E{len(steps) + 1}", "operation": "EXTRACT", "source": "$DOC",
                "row": term.item, "output_var": f"$T{n}"}
        if term.when is not None:
            step["period"] = term.when.text
        steps.append(step)
    answer = "{{ T1 }}"
    if metric.expression is not None:
        steps.append({"id": f"E{len(steps) + 1}", "operation": "COMPUTE",
                      "expression": metric.expression, "output_var": "$VALUE"})
        answer = "{{ VALUE }}" + ("%" if metric.percent else "")
    return {"domain": "finance", "steps": steps,
            "answer": f"{answer}: the {metric.name}.", "planner": "user"}


def _over_series(steps: list[dict], item: str, period: str, expression: str,
                 metric: Metric) -> dict:
    """The plan that reads `item` in every period (`period`: all, all 3) and COMPUTEs
    `expression` over the list."""
    steps = [*steps, {"id": "E2", "operation": "EXTRACT", "source": "$DOC", "row": item,
                      "period": period, "output_var": "$T1"},
             {"id": "E3", "operation": "COMPUTE", "expression": expression,
              "output_var": "$VALUE"}]
    percent = "%" if metric.kind == "percent_change" else ""
    return {"domain": "finance", "steps": steps,
            "answer": f"{{{{ VALUE }}}}{percent}: the {metric.name}.", "planner": "user"}


def _over_every_period(metric: Metric) -> tuple[str, str, str] | None:
    """The line item, COMPUTE function and EXTRACT period of a mean or total over every
    period a table shows, asked of no period ("the average Cost of sales", "the total X
    across all years": `all`; "across the 3 year period": `all 3`, which a table of
    other periods does not answer); None for any other metric."""
    term = metric.terms[0]
    if term.when is not None:
        return None
    if metric.open and metric.kind in ("average", "sum"):
        period = f"all {metric.periods}" if metric.periods else "all"
        return term.item, "mean" if metric.kind == "average" else "sum", period
    if metric.periods is None and (m := average_over_periods(metric)) is not None:
        return m["item"], "mean", "all"
    return None


_CHANGE_IN = regex.compile(r"^(?:the\s+)?(?:change|movement)\s+in\s+(?:the\s+)?(?P<item>.+?)"
                          r"(?:\s+between\s+(?:both|the\s+two)\s+(?:fys|(?:fiscal\s+)?years|"
                          r"periods))?$", regex.I)
"""A change asked of no period, as the line item's words: "change in closing cash" (not
a difference, whose sign TAT-QA's answers give both ways)."""


def _over_both_periods(metric: Metric) -> tuple[str, str] | None:
    """The line item and COMPUTE expression of a change or percentage change asked of no
    period ("the change in closing cash", "the percentage change in total emissions"):
    between the two periods its table shows, which the plan does not see; None for any
    other metric."""
    term = metric.terms[0]
    if len(metric.terms) != 1 or term.when is not None or metric.periods is not None:
        return None
    if metric.open and metric.kind == "percent_change":
        return term.item, f"round(percent_change($T1), {metric.places})"
    if metric.kind == "value" and (m := _CHANGE_IN.match(term.item)) and \
            " between " not in f" {m['item']} ":
        return m["item"], "change($T1)"
    return None


def _over_the_year_before(metric: Metric, question: str) -> Metric:
    """A metric of one whole year that is over that year and the one before: "the
    percentage change in X in 2019" is from 2018 to 2019; "the 2019 average X" the mean of
    X in 2019 and 2018 (a year's average balance, of its opening and closing ones), where
    "the average X in 2019" may be a row of averages. Any other metric as it is."""
    term = metric.terms[0]
    if len(metric.terms) != 1 or term.when is None or (before := year_before(term.when)) is None:
        return metric
    if metric.open and metric.kind == "percent_change":
        return Metric((Term(term.item, before), term), percent_change_of(metric.places),
                      "percent_change", percent=True, places=metric.places,
                      name=f"{metric.name} from {before.text} to {term.when.text}")
    if _YEAR_AVERAGE.search(question) and (m := average_over_periods(metric)) is not None:
        return Metric((Term(m["item"], before), Term(m["item"], term.when)), "($T1 + $T2) / 2",
                      "average", scale=metric.scale, places=metric.places,
                      name=f"average {m['item']} of {before.text} and {term.when.text}")
    return metric
