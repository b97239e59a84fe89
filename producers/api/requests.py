"""Request bodies of `POST /queries` in, `Query` models or a 422 out.

Consumes `QueryIn` items (producers/api/models.py) and the `Settings` (plan step limit,
default deadline); produces the `Query` of each, its plan parsed, repaired and checked by
`shared.plan.parse` (JSON object, ReWOO or LLMCompiler text), or a
`RequestValidationError` listing every problem of every item. `unprocessable` renders
any validation error as 422 `Unprocessable` `{"message", "detail"}`: a message that names
each bad field (`field 'question' is missing`, `field '[1].plan': …`) and one
`{type, loc, msg}` per problem, a plan's problems in `detail[].problems`. It never sends
the input back, cuts every text to `MAX_TEXT` characters and the lists to `MAX_SHOWN`
items, and escapes lone surrogates, so no request can make the 422 itself fail or grow.
"""

from __future__ import annotations

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import ValidationError

from producers.api.models import MAX_BATCH, BadField, QueryIn, Unprocessable
from shared.config import Settings
from shared.errors import InputError, PlanError
from shared.models import Query
from shared.plan.parse import parse_plan_with_repairs

SHAPES = ("QueryIn", "list[QueryIn]")
"""How pydantic labels the two shapes of a POST /queries body in error locations."""
MAX_TEXT = 1000
"""Characters of any one text in a 422 (a location, a message, a plan problem)."""
MAX_SHOWN = 20
"""Problems a 422 lists (sentences in `message`, entries in `detail`, plan problems)."""


def to_queries(items: list[QueryIn], settings: Settings, many: bool) -> list[Query]:
    """The Query of each item, plans parsed and checked; RequestValidationError listing
    every problem of every item when any has one."""
    queries, errors = [], []
    for i, item in enumerate(items):
        at = ("body", i) if many else ("body",)
        try:
            queries.append(_to_query(item, settings))
        except PlanError as e:
            errors.append({"type": "plan_invalid", "loc": (*at, "plan"), "msg": str(e),
                           "problems": [p.model_dump() for p in e.problems]})
        except InputError as e:
            errors.append({"type": "input_error", "loc": (*at, "plan"), "msg": str(e)})
        except ValidationError as e:
            errors += [{**err, "loc": (*at, *err["loc"])} for err in e.errors()]
    if errors:
        raise RequestValidationError(errors)
    return queries


def _to_query(item: QueryIn, settings: Settings) -> Query:
    if item.plan is not None and item.mode == "react":
        raise InputError("a ReAct loop does not run a given plan: drop 'plan', or set "
                         "'mode' to 'rewoo' or 'auto'")
    plan, repairs = (parse_plan_with_repairs(item.plan, max_steps=settings.max_steps,
                                             max_chars=settings.max_plan_chars)
                     if item.plan is not None else (None, []))
    fields = {k: v for k, v in (("id", item.id), ("domain", item.domain)) if v is not None}
    return Query(question=item.question, plan=plan, repairs=repairs, mode=item.mode,
                 deadline_s=item.deadline_s or settings.query_timeout_s, **fields)


async def unprocessable(request: Request, exc: RequestValidationError) -> JSONResponse:
    """422 naming every bad field (less the errors of the body shape the client did not
    send), bounded, and without the input."""
    errors = [e for e in map(_unlabelled, exc.errors()) if not _other_shape(e)]
    sentences = list(dict.fromkeys(_clip(describe(e)) for e in errors))
    message = "; ".join(sentences[:MAX_SHOWN]) + _more(len(sentences))
    body = Unprocessable(message=message, detail=[_bad_field(e) for e in errors[:MAX_SHOWN]])
    return JSONResponse(status_code=422, content=body.model_dump(exclude_defaults=True))


def _bad_field(err: dict) -> BadField:
    problems = [{k: _clip(p.get(k)) for k in ("step", "code", "message")}
                for p in err.get("problems", [])[:MAX_SHOWN]]
    msg = err.get("ctx", {}).get("error") if err.get("type") == "json_invalid" else None
    return BadField(type=_clip(err.get("type") or "invalid"), msg=_clip(msg or err.get("msg", "")),
                    loc=[p if isinstance(p, int) else _clip(p) for p in err.get("loc", ())],
                    problems=problems)


def _clip(text: object) -> str | None:
    """`text` as at most MAX_TEXT characters that UTF-8 can carry (None stays None)."""
    if text is None:
        return None
    text = str(text)
    if len(text) > MAX_TEXT:
        text = text[:MAX_TEXT - 1] + "…"
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _more(count: int) -> str:
    return f"; … and {count - MAX_SHOWN} more problems" if count > MAX_SHOWN else ""


def _unlabelled(err: dict) -> dict:
    """`err` without pydantic's name of the union member (`QueryIn`, `list[QueryIn]`) in
    its `loc`: clients see `["body", "question"]` and `["body", 1, "question"]`."""
    loc = list(err.get("loc", ()))
    if len(loc) > 1 and loc[0] == "body" and loc[1] in SHAPES:
        del loc[1]
    return {**err, "loc": loc}


def _other_shape(err: dict) -> bool:
    """True for "not a list" about an object body, and "not an object" about a list: the
    body is one query or a list of them, and each error is about the other kind."""
    if list(err.get("loc", ())) != ["body"]:
        return False
    sent = err.get("input")
    return (isinstance(sent, dict) and err["type"] == "list_type") or (
        isinstance(sent, list) and err["type"] in ("model_attributes_type", "model_type"))


def describe(err: dict) -> str:
    """One validation error as a sentence naming the field and what to do."""
    loc, kind, msg = err["loc"], err.get("type"), err.get("msg", "")
    if kind == "json_invalid":
        return f"the request body is not valid JSON ({err.get('ctx', {}).get('error', msg)})"
    path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc[1:]).lstrip(".")
    if not path:
        if kind == "missing":
            return "the request body is missing: send a query object or a list of them"
        if kind == "string_unicode":  # a field name pydantic could not read
            return ("a field name in the request body holds a lone surrogate, which UTF-8 "
                    "cannot carry; send field names and text as UTF-8")
        if kind in ("too_short", "too_long"):
            return f"send 1 to {MAX_BATCH} queries per request (larger loads: the batch loader)"
        return "the request body must be a query object ({\"question\": …}) or a list of them"
    if kind == "missing":
        return f"field {path!r} is missing"
    if kind == "extra_forbidden":
        return (f"field {path!r} is not allowed; a query takes "
                f"{', '.join(QueryIn.model_fields)}")
    return f"field {path!r}: {msg.removeprefix('Value error, ')}"
