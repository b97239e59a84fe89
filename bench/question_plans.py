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

from shared.planners.metric import Refusal, read_metric

_NAMED = regex.compile(r"according to (?P<name>[\w&.\- ]+?)'s annual report", regex.I)


def derived_plan(question: str) -> dict | None:
    """The plan an LLM would write for `question`; None when there is none to write."""
    named = _NAMED.search(question)
    metric = read_metric(question)
    if named is None or isinstance(metric, Refusal) or metric.open:
        return None  # open: the periods are the table's, which the plan does not see
    steps = [{"id": "E1", "operation": "GET", "source": f"{named['name']} annual report",
              "output_var": "$DOC"}]
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
