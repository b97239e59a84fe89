"""Plan JSON in (text or an already-decoded dict), a `Draft` out (see draft.py).

The format is the one in DESIGN.md: one object with `steps` (a list of step objects,
`$NAME` referring to an earlier step's `output_var`) and optional `domain`, `answer`,
`planner`, `drop_unused`. Raises PlanError (code `bad_json`) when the text is not one
JSON object, naming the line and column.
"""

from __future__ import annotations

import json

from shared.errors import PlanError
from shared.models import PlanProblem
from shared.plan.draft import Draft

EXAMPLE = '{"steps": [{"id": "E1", "operation": "GET", "source": "…"}], "answer": "…"}'


def read_json(source: str | dict) -> Draft:
    """The Draft of a plan JSON object; PlanError when `source` is not one."""
    data = source if isinstance(source, dict) else decode_json(source)
    fields = {k: v for k, v in data.items() if k != "steps"}
    return Draft(syntax="json", fields=fields, steps=data.get("steps"))


def decode_json(text: str) -> dict:
    """The JSON object in `text`; PlanError (code `bad_json`) naming what is wrong."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        where = f"line {e.lineno}, column {e.colno}"
        raise _json_error(f"plan is not valid JSON at {where}", f"{e.msg} at {where}; send "
                          f"one JSON object like {EXAMPLE}") from None
    except RecursionError:
        raise _json_error("plan JSON is nested too deeply", "send one flat JSON object "
                          f"like {EXAMPLE}") from None
    if not isinstance(data, dict):
        raise _json_error("plan JSON is not an object", f"the plan is a JSON "
                          f"{type(data).__name__}; send one JSON object like {EXAMPLE}")
    return data


def _json_error(summary: str, detail: str) -> PlanError:
    return PlanError(summary, [PlanProblem(step=None, code="bad_json", message=detail)])
