"""The query: what a producer enqueues and the planner consumes."""

from __future__ import annotations

import uuid
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from .fields import Text
from .plan import Plan


Mode = Literal["rewoo", "react", "auto"]
"""How a query is answered (see `Query.mode`)."""
MODES: tuple[Mode, ...] = get_args(Mode)


def new_query_id() -> str:
    return uuid.uuid4().hex[:16]


class Query(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    id: str = Field(default_factory=new_query_id, pattern=r"^[A-Za-z0-9_.-]{1,64}$")
    """Query id; with a step id it forms each step's action_id."""
    question: Text = Field(min_length=1, max_length=4000)
    plan: Plan | None = None
    """A plan given by the user; without one the planner builds it."""
    domain: Text | None = None
    """Answer-template domain (`finance`, `legal`, `medical`, `generic`) the plan gets,
    whoever writes it; None keeps the plan's own (a batch line's `domain` sets it)."""
    repairs: list[Text] = []
    """Repairs already made to `plan` while a producer parsed it (text syntaxes)."""
    mode: Mode = "rewoo"
    """`rewoo`: plan once, run the steps, finalize; `react`: Thought/Action/Observation
    loop; `auto`: ReWOO, continued by ReAct when the answer is incomplete."""
    deadline_s: float = Field(60.0, gt=0)
    """Seconds from enqueue until the query counts as failed (finite: JSON stores `inf`
    as null, which no worker could read back)."""
    created_at: float = 0.0
    """Unix time the producer enqueued it."""

    @property
    def deadline_at(self) -> float | None:
        """Unix time the query counts as failed (the run store's deadline); None for a
        query no producer has stamped with `created_at`."""
        return self.created_at + self.deadline_s if self.created_at else None
