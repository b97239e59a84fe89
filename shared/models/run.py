"""RunRecord: everything the run store knows of one query (`chordal ask --json`)."""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict

from .answer import Answer
from .llm import LLMCall, ReactIteration
from .plan import Plan
from .result import StepResult

Terminal = Literal["done", "failed", "cancelled"]
"""The states a query ends in; no task moves it on from them (`cancelled`: by
`chordal cancel` or a DELETE, before it was answered)."""
Status = Literal["queued", "planning", "executing", "finalizing", Terminal]
STATUSES: tuple[Status, ...] = get_args(Status)
TERMINAL: tuple[Terminal, ...] = get_args(Terminal)


class PlanProblem(BaseModel):
    """One thing wrong with a plan, in a form that can be fed back to an LLM."""

    model_config = ConfigDict(extra="forbid")

    step: str | None
    """Step id (or `steps[3]` when the step has no usable id); None for the whole plan."""
    code: str
    """`undefined_variable`, `bad_pattern`, `unknown_operation`, …"""
    message: str
    """What is wrong and how to fix it."""


class StepDispatch(BaseModel):
    """When one step of the dispatch graph went to the executors."""

    model_config = ConfigDict(extra="forbid")

    step_id: str
    attempt: int = 1
    """The planner reply that wrote the step."""
    dispatched_at: float | None = None
    """Unix time its task was sent; None while it waits for its inputs."""
    after_reply_start_ms: float | None = None
    """`dispatched_at` after the reply that wrote it was requested (streamed plans): a
    step sent before the reply ended shows a figure below the call's latency."""
    in_plan: bool = True
    """False for a step an earlier reply wrote and the final plan does not keep. Sent
    before that reply was rejected (`dispatched_at`), it counts against CHORDAL_MAX_STEPS
    and nothing waits for it: it ran (its result is in `steps`, read by nothing), is
    still running, or its executor skipped it (no result)."""
    dropped: bool = False
    """A step of a rejected reply that was never sent and that the final plan does not
    keep: dropped when the plan was closed, it never runs and takes no place in the
    step budget."""


PlanMode = Literal["streamed", "whole"]
"""How the plan reached the executors: step by step while the model wrote it, or once
the whole reply (or a given or heuristic plan) was checked."""


class RunRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query_id: str
    question: str
    status: Status
    planner: str | None = None
    """Which planner wrote the plan: `user`, `heuristic` or `llm`; `heuristic` too when
    the heuristic planner abstained (no plan, an answer saying what was not found)."""
    plan: Plan | None = None
    problems: list[PlanProblem] = []
    repairs: list[str] = []
    steps: list[StepResult] = []
    answer: Answer | None = None
    error: str | None = None
    """Why the query failed, when it did."""
    timings: dict[str, float] = {}
    """Unix time each status was entered (`queued`, `planning`, …, `done`)."""
    usage: dict[str, int] = {}
    """Token usage summed over the query's LLM calls."""
    mode: str = "rewoo"
    llm_calls: list[LLMCall] = []
    """Every LLM call of the query, in order, with tokens and latency."""
    iterations: list[ReactIteration] = []
    """Every ReAct iteration (react and auto modes)."""
    plan_mode: PlanMode | None = None
    """`streamed` or `whole` (None until the plan is closed, and for ReAct)."""
    dispatch: list[StepDispatch] = []
    """Every step of the dispatch graph (sent, waiting for its inputs, or dropped), in
    plan order, then the steps of rejected replies (ReAct iterations are not here)."""
    finalizer_runs: int = 0
    """Finalizer runs that got past rendering (1 unless the callback was delivered
    twice); a run killed mid-render, whose message ran again, is not counted."""

    @property
    def latency_s(self) -> float | None:
        end = next((self.timings[t] for t in TERMINAL if t in self.timings), None)
        start = self.timings.get("queued")
        return None if end is None or start is None else end - start
