"""Task payloads: what crosses the `execute`, `finalize` and `react` queues (`plan`
carries a Query)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from .plan import Step
from .query import Query


class StepTask(BaseModel):
    """One plan step of one query, for an executor."""

    model_config = ConfigDict(extra="forbid")

    query_id: str
    step: Step
    inputs: dict[str, str] = {}
    """Bare variable name -> id of the step that binds it, for every variable read."""


class FinalizeTask(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query_id: str


class ReactTask(BaseModel):
    """Iteration `n` of the ReAct loop of `query`, for a react worker."""

    model_config = ConfigDict(extra="forbid")

    query: Query
    n: int = Field(ge=1)
    """1-based iteration number; the iterations before it are in the run store."""
