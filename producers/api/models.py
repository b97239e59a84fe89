"""The HTTP API's own request and response bodies (the rest are `shared.models`).

Consumes nothing; produces the pydantic models that `producers/api/app.py` validates request
bodies with and documents in `/openapi.json`: `QueryIn` (one query to submit, mirroring
`Query`), `QueryBatch` (one `QueryIn` or a list), `Submitted`/`SubmitReply`, `Health`,
`BatchOut` (`GET /batches/{name}`), `CancelReply` (the DELETE routes),
`StreamEnd` (the last server-sent event of `GET /queries/{id}/events`), and the error
bodies: `Unprocessable` (422, with one `BadField` per problem) and `Refusal` (400, 401,
404, 503).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema, field_validator

from shared.models import Answer, Mode, PlanProblem
from shared.models.fields import Text

MAX_BATCH = 1000
"""Queries one POST may carry; bigger loads go through the batch loader."""

PlanSource = Annotated[
    Any,
    WithJsonSchema({"anyOf": [{"$ref": "#/components/schemas/Plan"},
                              {"type": "string", "title": "ReWOO or LLMCompiler plan text"},
                              {"type": "null"}]}),
]


class QueryIn(BaseModel):
    """One question to answer; the fields of `Query` that a client may set."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, allow_inf_nan=False)

    question: Text = Field(min_length=1, max_length=4000)
    id: str | None = Field(None, pattern=r"^[A-Za-z0-9_.-]{1,64}$")
    """Your id for the query (letters, digits, `_.-`, at most 64). Submitting an id again
    enqueues nothing and answers `submitted: false`. Default: a new random id."""
    plan: PlanSource = None
    """The plan to run: a JSON plan object, or ReWOO (`#E1 = Tool[...]`) or LLMCompiler
    (`1. tool(...)`) text. It is repaired and checked before anything is enqueued;
    without one the planner writes it."""
    mode: Mode = "rewoo"
    """`rewoo` (plan, then run the steps), `react` (Thought/Action/Observation loop; needs
    an LLM) or `auto` (rewoo, continued by react when the answer is incomplete)."""
    domain: Text | None = None
    """Answer-template domain (`finance`, `legal`, `medical`, `generic`) for the plan,
    whoever writes it; default: the plan's own."""
    deadline_s: float | None = Field(None, gt=0)
    """Seconds until the query counts as failed (a finite number); default
    `CHORDAL_QUERY_TIMEOUT_S`."""

    @field_validator("plan")
    @classmethod
    def _object_or_text(cls, v: Any) -> Any:
        if v is not None and not isinstance(v, (dict, str)):
            raise ValueError(f"must be a plan object ({{\"steps\": [...]}}) or plan text, "
                             f"not {type(v).__name__}")
        return v


QueryBatch = Union[QueryIn, Annotated[list[QueryIn], Field(min_length=1, max_length=MAX_BATCH)]]
"""One query object, or a list of 1 to `MAX_BATCH` of them."""


class Submitted(BaseModel):
    model_config = ConfigDict(use_attribute_docstrings=True)

    id: str
    submitted: bool
    """False when a query with this id was submitted before: nothing was enqueued again,
    and the first submission is the one that runs."""


class SubmitReply(BaseModel):
    model_config = ConfigDict(use_attribute_docstrings=True)

    queries: list[Submitted]
    """One entry per query of the request, in its order."""


class Health(BaseModel):
    model_config = ConfigDict(use_attribute_docstrings=True)

    status: Literal["ok", "degraded", "down"]
    """`ok`: Redis answers and every queue has a worker; `degraded`: some queue has none
    (its queries wait); `down`: Redis does not answer (HTTP 503)."""
    redis: bool
    workers: dict[str, int] = {}
    """Queue name -> live workers consuming it (a heartbeat within `worker_dead_after_s`)."""
    problems: list[str] = []


class StreamEnd(BaseModel):
    """Data of the `end` event, the last one of a query's event stream."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    query_id: str
    status: str | None
    """`done` or `failed` (None when the record expired from the run store)."""
    answer: Answer | None = None
    error: str | None = None
    problems: list[PlanProblem] = []


class BadField(BaseModel):
    """One problem with a request; the input itself is never sent back."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    type: str
    """`missing`, `extra_forbidden`, `string_too_long`, `finite_number`, `json_invalid`,
    `plan_invalid`, `input_error`, …"""
    loc: list[str | int]
    """Where: `["body", "question"]`, `["body", 1, "plan"]` (a list's item 1)."""
    msg: str
    """What is wrong (any one text here is cut to 1000 characters)."""
    problems: list[PlanProblem] = []
    """For `plan_invalid`: one `{step, code, message}` per problem of the plan."""


class Unprocessable(BaseModel):
    """The 422 body: nothing of the request was submitted."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    message: str
    """One sentence per bad field, naming it and the fix."""
    detail: list[BadField]
    """The problems, in request order (at most 20; `message` counts the rest)."""


class Refusal(BaseModel):
    """The body of a 400, 401, 404 or 503: what happened and what to do."""

    detail: str


class CancelReply(BaseModel):
    """What a DELETE did: queries ended `cancelled`, and those left as they were."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    cancelled: int
    finished: int
    """Already done, failed or cancelled: untouched."""
    missing: int = 0
    """Queries of the batch whose records expired."""


class BatchOut(BaseModel):
    """One batch's status (`chordal status --json`), read from its counters."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    batch: str
    total: int
    """Queries in the batch."""
    counts: dict[str, int]
    """Queries per state; `missing`: records that expired before they were counted."""
    unfinished: int
    answers_per_s: float | None
    answers_per_s_last_minute: float | None
    p50_s: float | None
    """Latency queued→done (upper bound of a 10%-wide bucket)."""
    p95_s: float | None
    oldest_unfinished: dict | None
    """`{"id", "status", "age_s"}` of the unfinished query queued first."""
