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
    as null, which no worker could read back); with `queue_wait_s`, seconds from the
    moment a planner takes it from the queue."""
    queue_wait_s: float | None = Field(None, gt=0, allow_inf_nan=False)
    """Seconds the query may wait in the queue before a planner takes it (a batch's
    queries: CHORDAL_BATCH_QUEUE_WAIT_S); its run deadline then counts from that moment.
    None: one deadline, `deadline_s` from enqueue (a single question)."""
    created_at: float = 0.0
    """Unix time the producer enqueued it."""
    planned_at: float = 0.0
    """Unix time a planner took it from the queue, set by the planner on a query with
    `queue_wait_s` (the run store's `planned_at`)."""

    @property
    def deadline_at(self) -> float | None:
        """Unix time the query counts as failed (the run store's deadline); None for a
        query no producer has stamped with `created_at`."""
        if self.queue_wait_s is not None and self.planned_at:
            return self.planned_at + self.deadline_s
        return self.created_at + self.deadline_s if self.created_at else None

    @property
    def first_deadline_s(self) -> float:
        """Seconds from enqueue to the deadline the query gets when it is created: the
        queue-wait budget, or the whole deadline of a single question."""
        return self.deadline_s if self.queue_wait_s is None else self.queue_wait_s
