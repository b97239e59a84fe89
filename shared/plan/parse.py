"""Plan source in, checked `Plan` out: consumes a plan in any of the three syntaxes
(JSON (json_plan.py), ReWOO `#E1 = Tool[input]` text, LLMCompiler `1. tool(args)` text;
str, bytes or an already-decoded dict), detected by content (syntax.py); produces a
`Plan` that was repaired (repair.py) and passed the static checks (validate.py), or
raises `PlanError` carrying every problem at once. A plan too large, or written with too
many steps, is rejected first and alone (limits.py), so no work grows past the limits.

Each step is validated on its own, so one bad step does not hide the others: a step
gets one `PlanProblem` (code `unknown_operation`, `bad_syntax` or `bad_field`) naming all
that is wrong with it, and a stand-in binds its variable so that the steps reading it
are not reported too; the plan-level fields (`domain`, `answer`, …) get one problem each.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import get_args

from pydantic import TypeAdapter, ValidationError

from shared.config import MAX_PLAN_CHARS, MAX_STEPS
from shared.errors import InputError, PlanError
from shared.models import OPERATIONS, ComputeStep, GetStep, Plan, PlanProblem, Step
from shared.models.plan import OUTPUT_VAR_RE, STEP_ID_RE
from shared.plan.draft import Draft
from shared.plan.json_plan import EXAMPLE
from shared.plan.limits import check_size, check_step_count, too_large
from shared.plan.repair import prepare_plan, repair_plan
from shared.plan.syntax import read_draft
from shared.plan.validate import plan_invalid, validate_plan

_STEP = TypeAdapter(Step)
_STEP_MODELS = {get_args(cls.model_fields["operation"].annotation)[0]: cls
                for cls in get_args(get_args(Step)[0])}
_PLACEHOLDER = ComputeStep(id="E1", operation="COMPUTE", expression="0")


def parse_plan(source: str | bytes | dict, *, tools: Mapping[str, str] | None = None,
               max_steps: int = MAX_STEPS, max_chars: int = MAX_PLAN_CHARS) -> Plan:
    """The repaired, checked Plan that `source` describes; PlanError listing all its problems.

    `tools` maps the tool names of ReWOO/LLMCompiler text to operations (tools_table.py).
    A source of more than `max_chars` characters, or written with more than `max_steps`
    steps, is rejected before any step is read (limits.py).
    """
    return parse_plan_with_repairs(source, tools=tools, max_steps=max_steps,
                                   max_chars=max_chars)[0]


def parse_plan_with_repairs(source: str | bytes | dict, *,
                            tools: Mapping[str, str] | None = None,
                            max_steps: int = MAX_STEPS,
                            max_chars: int = MAX_PLAN_CHARS) -> tuple[Plan, list[str]]:
    """The Plan `source` describes and the repairs made to it, one sentence each."""
    check_size(source, max_chars)
    draft = read_draft(source, tools)
    if isinstance(draft.steps, list):
        check_step_count(len(draft.steps), max_steps)
    problems = list(draft.problems)
    steps: list[Step] = []
    stand_ins: dict[str, str] = {}  # step id -> variable
    if not isinstance(draft.steps, list) or not draft.steps:
        problems.append(_no_steps(draft))
    for index, raw in enumerate(draft.steps if isinstance(draft.steps, list) else []):
        parsed = _parse_step(index, raw, draft)
        if isinstance(parsed, PlanProblem):
            problems.append(parsed)
            parsed = _stand_in(index, {"id": raw.step} if isinstance(raw, PlanProblem) else raw)
            stand_ins[parsed.id] = parsed.var
        steps.append(parsed)
    fields = _plan_fields(draft.fields)
    if not problems and not fields:
        return prepare_plan(Plan.model_validate({**draft.fields, "steps": steps}), max_steps)
    if steps and not fields:  # check the good steps too: one round trip shows all
        plan, _ = repair_plan(Plan.model_validate({**draft.fields, "steps": steps}))
        problems += [p for p in validate_plan(plan, max_steps, unknown=stand_ins.values())
                     if p.step not in stand_ins]
    raise PlanError(plan_invalid(len(problems + fields)), problems + fields)


def load_plan_file(path: str | Path, *, tools: Mapping[str, str] | None = None,
                   max_steps: int = MAX_STEPS, max_chars: int = MAX_PLAN_CHARS) -> Plan:
    """The checked Plan in the file at `path`, in any of the three syntaxes (detected by
    content); InputError when it cannot be read, PlanError naming the file when invalid."""
    return load_plan_file_with_repairs(path, tools=tools, max_steps=max_steps,
                                       max_chars=max_chars)[0]


def load_plan_file_with_repairs(path: str | Path, *, tools: Mapping[str, str] | None = None,
                                max_steps: int = MAX_STEPS,
                                max_chars: int = MAX_PLAN_CHARS) -> tuple[Plan, list[str]]:
    """`load_plan_file`, plus the repairs made while preparing the plan; a file of more
    than `max_chars` characters is not read to its end."""
    path = Path(path)
    if not path.exists() or path.is_dir():  # not is_file(): pipes like <(…) are fine
        raise InputError(f"plan file {str(path)!r} does not exist or is not a file; pass the "
                         "path of a plan file (JSON, ReWOO or LLMCompiler text)")
    cap = 4 * max_chars  # a character is at most 4 UTF-8 bytes
    try:
        with path.open("rb") as f:
            data = f.read(cap + 1)
    except OSError as e:
        raise InputError(f"plan file {str(path)!r} cannot be read ({e.strerror}); check "
                         "its permissions") from None
    try:
        if len(data) > cap:
            raise too_large(f"more than {cap:,} bytes", max_chars)
        return parse_plan_with_repairs(data, tools=tools, max_steps=max_steps,
                                       max_chars=max_chars)
    except PlanError as e:
        raise PlanError(f"{path}: {e.message}", e.problems) from None


def parse_step(raw: object) -> Step | None:
    """One raw step (a dict as a syntax reader makes it) as a Step; None when it does not
    validate (the whole plan, parsed at the end, says why)."""
    try:
        return _STEP.validate_python(raw)
    except ValidationError:
        return None


def _stand_in(index: int, raw: object) -> GetStep:
    """A placeholder for a step that did not parse: binds its variable, reads nothing."""
    raw = raw if isinstance(raw, dict) else {}
    var = raw.get("output_var")
    step_id = raw.get("id") if isinstance(raw.get("id"), str) else ""
    step_id = step_id if re.fullmatch(STEP_ID_RE, step_id) else f"invalid-step-{index}"
    return GetStep(  # a source of its own, so that repair never merges two stand-ins
        id=step_id, operation="GET", source=f"stand-in for steps[{index}]",
        output_var=var if isinstance(var, str) and re.fullmatch(OUTPUT_VAR_RE, var) else None)


def _no_steps(draft: Draft) -> PlanProblem:
    like = {"json": EXAMPLE, "rewoo": "#E1 = Wikipedia[Tesla Q3 2023 report]",
            "llmcompiler": '1. search("Tesla Q3 2023")'}[draft.syntax]
    what = "field 'steps' must be a non-empty list of step objects" if draft.syntax == "json" \
        else "the plan has no steps"
    return PlanProblem(step=None, code="bad_field", message=f"{what}; write steps like {like}")


def _parse_step(index: int, raw: object, draft: Draft) -> Step | PlanProblem:
    if isinstance(raw, PlanProblem):
        return raw
    raw_id = raw.get("id") if isinstance(raw, dict) else None
    usable = isinstance(raw_id, str) and re.fullmatch(STEP_ID_RE, raw_id)
    label = raw_id if usable else f"steps[{index}]"
    where = f"line {draft.lines[index]}: " if index < len(draft.lines) else ""
    if not isinstance(raw, dict):
        return PlanProblem(step=label, code="bad_field", message=f"{label} is "
                           f"{type(raw).__name__}, not an object; write each step as "
                           '{"id": "E1", "operation": "GET", …}')
    op = raw.get("operation")
    if op not in OPERATIONS:
        hint = f" (operations are upper case: {op.upper()!r})" if (
            isinstance(op, str) and op.upper() in OPERATIONS) else ""
        what = ("has no operation" if op is None else
                f"has operation {op!r}, which is not known" if _is_name(op) else
                "has an operation that is not known")
        return PlanProblem(step=label, code="unknown_operation", message=f"step {label} "
                           f"{what}{hint}; set \"operation\" to one of {', '.join(OPERATIONS)}")
    try:
        return _STEP.validate_python(raw)
    except ValidationError as e:
        wrong = "; ".join(_field_error(err) for err in e.errors())
        form = f"; write it as {draft.forms[op]}" if op in draft.forms else ""
        return PlanProblem(step=label, code="bad_field",
                           message=f"{where}{op} step {label}: {wrong}. {_fields_of(op)}{form}")


def _is_name(value: object) -> bool:
    """Whether `value` is a short name (a problem names it), not text (never quoted back)."""
    return isinstance(value, str) and re.fullmatch(r"[A-Za-z_][\w.-]{0,31}", value) is not None


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
    fields = _STEP_MODELS[op].model_fields
    required = [f.alias or name for name, f in fields.items() if f.is_required()]
    optional = [f.alias or name for name, f in fields.items() if not f.is_required()]
    return f"{op} steps take {', '.join(required)}, and optionally {', '.join(optional)}"


def _plan_fields(fields: dict) -> list[PlanProblem]:
    try:  # the steps were checked one by one above; a stand-in isolates the rest
        Plan.model_validate({**fields, "steps": [_PLACEHOLDER]})
    except ValidationError as e:
        allowed = ", ".join(Plan.model_fields)
        return [PlanProblem(step=None, code="bad_field", message=(
            f"field {err['loc'][0]!r} is not allowed in a plan; allowed fields: {allowed}"
            if err["type"] == "extra_forbidden" else
            f"field {err['loc'][0]!r}: {err['msg']}; fix or remove it")) for err in e.errors()]
    return []
