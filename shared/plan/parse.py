"""Plan JSON in, checked `Plan` out: consumes the plan-JSON format of README.md (text,
bytes or an already-decoded dict), produces a `Plan` that passed the static checks of
`shared/plan/validate.py`, or raises `PlanError` carrying every problem at once.

Each step is validated on its own, so one bad step does not hide the others: a step
gets one `PlanProblem` (code `unknown_operation` or `bad_field`) naming all that is
wrong with it; the plan-level fields (`domain`, `answer`, `planner`) get one problem each.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from pydantic import BaseModel, TypeAdapter, ValidationError

from shared.errors import InputError, PlanError
from shared.models import OPERATIONS, ComputeStep, ExtractStep, GetStep, Plan, PlanProblem, Step
from shared.models.plan import STEP_ID_RE
from shared.plan.validate import check_plan, plan_invalid, validate_plan

_STEP = TypeAdapter(Step)
_MODELS: dict[str, type[BaseModel]] = {"GET": GetStep, "EXTRACT": ExtractStep,
                                       "COMPUTE": ComputeStep}
_EXAMPLE = '{"steps": [{"id": "E1", "operation": "GET", "source": "…"}], "answer": "…"}'
_PLACEHOLDER = ComputeStep(id="E1", operation="COMPUTE", expression="0")


def parse_plan(source: str | bytes | dict) -> Plan:
    """The checked Plan that `source` describes; PlanError listing all its problems."""
    data = _decode(source)
    problems: list[PlanProblem] = []
    raw_steps = data.get("steps")
    steps: list[Step] = []
    if not isinstance(raw_steps, list) or not raw_steps:
        problems.append(PlanProblem(step=None, code="bad_field", message="field 'steps' must "
                                    f"be a non-empty list of step objects, like {_EXAMPLE}"))
    else:
        stand_ins: set[str] = set()
        for index, raw in enumerate(raw_steps):
            parsed = _parse_step(index, raw)
            if isinstance(parsed, PlanProblem):
                problems.append(parsed)
                parsed = _stand_in(index, raw)
                stand_ins.add(parsed.id)
            steps.append(parsed)
    fields = _plan_fields(data)
    if problems or fields:
        if steps and not fields:  # check the good steps too: one round trip shows all
            plan = Plan.model_validate({**data, "steps": steps})
            problems += [p for p in validate_plan(plan) if p.step not in stand_ins]
        raise PlanError(plan_invalid(len(problems + fields)), problems + fields)
    return check_plan(Plan.model_validate({**data, "steps": steps}))


def _stand_in(index: int, raw: object) -> GetStep:
    """A placeholder for a step that did not parse: binds its variable, reads nothing."""
    raw = raw if isinstance(raw, dict) else {}
    var = raw.get("output_var")
    step_id = raw.get("id") if isinstance(raw.get("id"), str) else ""
    return GetStep(
        id=step_id if re.fullmatch(STEP_ID_RE, step_id) else f"invalid-step-{index}",
        operation="GET", source="stand-in",
        output_var=var if isinstance(var, str) and re.fullmatch(r"\$?[A-Za-z_]\w*", var) else None)


def load_plan_file(path: str | Path) -> Plan:
    """The checked Plan in the JSON file at `path`; InputError when it cannot be read."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"plan file {str(path)!r} does not exist or is not a file; pass the "
                         "path of a JSON plan file (format: 'The plan format' in README.md)")
    try:
        data = path.read_bytes()
    except OSError as e:
        raise InputError(f"plan file {str(path)!r} cannot be read ({e.strerror}); check "
                         "its permissions") from None
    try:
        return parse_plan(data)
    except PlanError as e:
        raise PlanError(f"{path}: {e.message}", e.problems) from None


def _decode(source: str | bytes | dict) -> dict:
    if isinstance(source, dict):
        return source
    if not isinstance(source, (str, bytes, bytearray)):
        raise TypeError(f"parse_plan takes JSON text, bytes or a dict, not {type(source).__name__}")
    try:
        text = source.decode("utf-8-sig") if not isinstance(source, str) else source
        data = json.loads(text)
    except UnicodeDecodeError as e:
        raise _json_error("plan is not UTF-8 text", f"byte {e.start} is not UTF-8; send "
                          "the plan as UTF-8 JSON") from None
    except json.JSONDecodeError as e:
        where = f"line {e.lineno}, column {e.colno}"
        raise _json_error(f"plan is not valid JSON at {where}", f"{e.msg} at {where}; send "
                          f"one JSON object like {_EXAMPLE}") from None
    except RecursionError:
        raise _json_error("plan JSON is nested too deeply", "send one flat JSON object "
                          f"like {_EXAMPLE}") from None
    if not isinstance(data, dict):
        raise _json_error("plan JSON is not an object", f"the plan is a JSON "
                          f"{type(data).__name__}; send one JSON object like {_EXAMPLE}")
    return data


def _json_error(summary: str, detail: str) -> PlanError:
    return PlanError(summary, [PlanProblem(step=None, code="bad_json", message=detail)])


def _parse_step(index: int, raw: object) -> Step | PlanProblem:
    raw_id = raw.get("id") if isinstance(raw, dict) else None
    label = raw_id if isinstance(raw_id, str) and re.fullmatch(STEP_ID_RE, raw_id) else f"steps[{index}]"
    if not isinstance(raw, dict):
        return PlanProblem(step=label, code="bad_field", message=f"{label} is "
                           f"{type(raw).__name__}, not an object; write each step as "
                           '{"id": "E1", "operation": "GET", …}')
    op = raw.get("operation")
    if op not in OPERATIONS:
        hint = f" (operations are upper case: {op.upper()!r})" if (
            isinstance(op, str) and op.upper() in OPERATIONS) else ""
        what = "has no operation" if op is None else f"has operation {op!r}, which is not known"
        return PlanProblem(step=label, code="unknown_operation", message=f"step {label} "
                           f"{what}{hint}; set \"operation\" to one of {', '.join(OPERATIONS)}")
    try:
        return _STEP.validate_python(raw)
    except ValidationError as e:
        wrong = "; ".join(_field_error(err) for err in e.errors())
        return PlanProblem(step=label, code="bad_field",
                           message=f"{op} step {label}: {wrong}. {_fields_of(op)}")


def _field_error(err: dict) -> str:
    field = ".".join(str(part) for part in err["loc"][1:]) or "step"
    if err["type"] == "missing":
        return f"field {field!r} is missing"
    if err["type"] == "extra_forbidden":
        return f"field {field!r} is not allowed"
    if err["type"] == "string_pattern_mismatch" and field == "id":
        return "field 'id' must be a letter then up to 31 letters, digits, _ or - (like E1)"
    return f"field {field!r}: {err['msg'].removeprefix('Value error, ')}"


def _fields_of(op: str) -> str:
    fields = _MODELS[op].model_fields
    required = [name for name, f in fields.items() if f.is_required()]
    optional = [name for name, f in fields.items() if not f.is_required()]
    return f"{op} steps take {', '.join(required)}, and optionally {', '.join(optional)}"


def _plan_fields(data: dict) -> list[PlanProblem]:
    try:  # the steps were checked one by one above; a stand-in isolates the rest
        Plan.model_validate({**data, "steps": [_PLACEHOLDER]})
    except ValidationError as e:
        allowed = ", ".join(Plan.model_fields)
        return [PlanProblem(step=None, code="bad_field", message=(
            f"field {err['loc'][0]!r} is not allowed in a plan; allowed fields: {allowed}"
            if err["type"] == "extra_forbidden" else
            f"field {err['loc'][0]!r}: {err['msg']}; fix or remove it")) for err in e.errors()]
    return []
