"""Plan JSON in (text or an already-decoded dict), a `Draft` out (see draft.py).

The format (docs/plans.md): one object with `steps` (a list of step objects,
`$NAME` referring to an earlier step's `output_var`) and optional `domain`, `answer`,
`planner`, `drop_unused`. Raises PlanError (code `bad_json`) when the text is not one
JSON object, naming the line and column. `json_size` measures a decoded plan as compact
JSON, for the size limit (limits.py).
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
        raise _too_deep() from None
    if not isinstance(data, dict):
        raise _json_error("plan JSON is not an object", f"the plan is a JSON "
                          f"{type(data).__name__}; send one JSON object like {EXAMPLE}")
    return data


def json_size(data: dict) -> int:
    """Characters of `data` written as compact JSON; PlanError (code `bad_json`) when it is
    nested too deeply to write."""
    try:
        return len(json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str))
    except (RecursionError, ValueError):  # ValueError: a container that contains itself
        raise _too_deep() from None


def _too_deep() -> PlanError:
    return _json_error("plan JSON is nested too deeply", f"send one flat JSON object like "
                       f"{EXAMPLE}")


def _json_error(summary: str, detail: str) -> PlanError:
    return PlanError(summary, [PlanProblem(step=None, code="bad_json", message=detail)])
