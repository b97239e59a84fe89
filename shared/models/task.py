"""Task payloads: what crosses the `execute`, `finalize` and `react` queues (`plan`
carries a Query).

Step and ReAct payloads lead with their `action_id`: Flower shows a task's arguments
(cut at 1024 characters) and its search box matches them, so the id is always visible
and one search finds the task (docs/monitoring.md).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

from shared.naming import action_id as make_action_id

from .plan import Step
from .query import Query


def _tagged(given: str, expected: str) -> str:
    if given and given != expected:
        raise ValueError(f"action_id {given!r} does not match the task it tags; "
                         f"it must be {expected!r} (or left out)")
    return expected


class StepTask(BaseModel):
    """One plan step of one query, for an executor."""

    model_config = ConfigDict(extra="forbid")

    action_id: str = ""
    """`{query_id}:{step.id}`; filled in when left out."""
    query_id: str
    step: Step
    inputs: dict[str, str] = {}
    """Bare variable name -> id of the step that binds it, for every variable read."""

    @model_validator(mode="after")
    def _action_id(self) -> StepTask:
        self.action_id = _tagged(self.action_id, make_action_id(self.query_id, self.step.id))
        return self


class GraphStep(BaseModel):
    """One step of a query's dispatch graph (shared/journey/dispatch.py): the task an executor
    gets once every step it reads has stored its result."""

    model_config = ConfigDict(extra="forbid")

    task: StepTask
    key: str
    """What the step computes, whatever its names: a hash of its operation and arguments,
    each variable it reads replaced by the key of the step binding it. A later reply's
    step with the same key reuses this one's result instead of running again."""
    attempt: int = 1
    """The planner reply (1-based, in this planner run) that wrote it."""
    reply_started_at: float | None = None
    """Unix time that reply was requested, when the plan streamed (None: whole reply)."""


class FinalizeTask(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query_id: str


class ReactTask(BaseModel):
    """Iteration `n` of the ReAct loop of `query`, for a react worker."""

    model_config = ConfigDict(extra="forbid")

    action_id: str = ""
    """`{query.id}:R{n}`, where the iteration's tool result is stored; filled in when
    left out."""
    query: Query
    n: int = Field(ge=1)
    """1-based iteration number; the iterations before it are in the run store."""

    @model_validator(mode="after")
    def _action_id(self) -> ReactTask:
        self.action_id = _tagged(self.action_id, make_action_id(self.query.id, f"R{self.n}"))
        return self
