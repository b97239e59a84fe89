"""Task payloads: what crosses the `execute` and `finalize` queues (`plan` carries a Query)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from .plan import Step


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
