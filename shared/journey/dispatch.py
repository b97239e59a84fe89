"""Send the work of one query: steps in as the planner learns them (a whole plan, or one
step at a time while the model writes it), step tasks out the moment their inputs are
stored, and the finalizer once the plan is closed and every step it keeps has reported.

The steps that may run live in the query's *dispatch graph* in the run store (step id
-> `GraphStep`: the task and the ids of the steps it reads; shared/stores/graph.py). Two
sides send from it, each right after its own write, so that one of them always sees
both writes:
- the planner adds steps, then reads which of them have every input stored, and sends
  those (`PlanDispatch`);
- an executor stores its step's result, then reads the graph, and sends the steps that
  read it and are now ready (`next_steps`).
A claim per step (`claimed_dispatch:<step>`) lets one of them send it, however often a
task is redelivered. The graph only grows until the planner closes it with the final
plan, and never past the query's step budget (`max_steps`, CHORDAL_MAX_STEPS): a
streamed step that does not fit is not sent early, and a final plan that does not fit
beside what rejected replies already sent fails with `too_many_steps`. Closing drops
the rejected replies' steps that were never sent; those that were sent are not waited
for. The finalizer is sent when the graph is closed and every step the plan keeps has a
stored result (`joined`), by whichever task sees that first (`claimed_finalize`).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from shared import naming
from shared.config import MAX_STEPS
from shared.errors import PlanError
from shared.stores.graph import GraphView, step_order
from shared.models import GraphStep, Plan, PlanProblem, Step, StepTask
from shared.journey.placement import Placement
from shared.stores.runs import RunStore


def ready_steps(view: GraphView, candidates: list[str]) -> list[str]:
    """The `candidates` without a stored result whose inputs are all stored, but for
    steps the final plan left out."""
    if view.terminal:
        return []
    return [s for s in candidates if s not in view.stored and s not in view.left
            and set(view.steps[s].task.inputs.values()) <= view.stored]


def claim_ready(store: RunStore, view: GraphView, query_id: str, candidates: list[str],
                owner: str) -> list[StepTask]:
    """The tasks of the ready `candidates` that `owner` may send (one claim each, all
    in one round trip)."""
    ready = ready_steps(view, candidates)
    claimed = store.claim_many(query_id, [naming.dispatch_claim(s) for s in ready], owner)
    return [view.steps[s].task for s, mine in zip(ready, claimed) if mine]


def next_steps(store: RunStore, view: GraphView, query_id: str, finished: str,
               owner: str) -> list[StepTask]:
    """The steps that read `finished`, are now ready and that `owner` may send; `view`
    read after `finished` stored its result."""
    readers = sorted((s for s, g in view.steps.items() if finished in g.task.inputs.values()),
                     key=step_order)
    return claim_ready(store, view, query_id, readers, owner)


def joined(store: RunStore, view: GraphView, query_id: str, owner: str) -> bool:
    """True when the graph is closed, every step in it that the plan keeps has a stored
    result, and `owner` holds the claim to send the finalizer (the first task to see it
    so, and that task again when it is redelivered). Counting stored results, which are
    written once per step, counts a step once however often it ran."""
    return (view.closed and not view.terminal and set(view.steps) - view.left <= view.stored
            and store.claim(query_id, naming.finalize_claim(), owner))


class PlanDispatch:
    """The planner's side for one query: steps offered while a reply streams, the final
    plan closed, and what a planner killed before it sent needs sending."""

    def __init__(self, store: RunStore, query_id: str, owner: str,
                 send_step: Callable[[StepTask], None], send_finalize: Callable[[str], None],
                 max_steps: int = MAX_STEPS, first: bool = False):
        self.store, self.query_id, self.owner = store, query_id, owner
        self._send_step, self._send_finalize = send_step, send_finalize
        self.max_steps = max_steps
        self._placement: Placement | None = None
        # The graph's steps as this delivery found them: none for the first delivery
        # (every write to the graph comes after the planner's delivery was counted),
        # else what `resume` read; None: not read yet.
        self._found: dict[str, GraphStep] | None = {} if first else None
        self._full = False  # True: the rest of this reply waits for the final plan
        self._closing = False
        self.attempt = 0

    def resume(self) -> bool:
        """Send the ready steps an earlier delivery of this planner added and did not
        send; True when it had closed the graph (the plan is final: nothing to plan)."""
        view = self.store.graph(self.query_id)
        self._found = view.steps
        sent = self.store.dispatched(self.query_id)
        self._send(view, [s for s in sorted(view.steps, key=step_order) if s not in sent])
        if joined(self.store, view, self.query_id, self.owner):
            self._send_finalize(self.query_id)
        return view.closed

    def begin(self, reply_started_at: float | None = None) -> None:
        """A new reply of the model: its steps are placed on the graph as it stands."""
        self.attempt += 1
        graph = self.store.graph(self.query_id).steps
        self._placement = Placement(self.query_id, graph, self.attempt, reply_started_at)
        self._full = len(graph) >= self.max_steps

    def offer(self, step: Step) -> None:
        """A step of the reply being written, checked with the steps before it: it runs
        now if its inputs are stored, else when they are (nothing runs twice). Once the
        step budget is spent, the reply's later steps wait for the final plan (a step
        after one that did not fit may read it)."""
        if self._placement is None:
            self.begin()
        if self._full:
            return
        _, added = self._placement.place(step)
        if added is not None:
            view, refused = self.store.add_to_graph(self.query_id, [added], self.max_steps)
            if refused:
                self._full = True
                return
            self._send(view, [added.task.step.id])

    def close(self, plan: Plan, repairs: list[str], mode: str, status: str = "") -> Plan:
        """Record the final plan (its steps renamed to the graph ids they run as), drop
        the rejected replies' steps never sent, add what it adds, close the graph, send
        what is ready, and the finalizer if every kept step already reported. Returns
        the plan as recorded; PlanError (`too_many_steps`) when its steps and the sent
        steps it does not keep are more than `max_steps`. `mode`: `streamed` or `whole`
        (its steps' dispatch is then not timed against a reply); `status`: the status the
        query moves to as the plan closes (`executing`), in the same script."""
        self._closing = True
        started = (self._placement.reply_started_at
                   if self._placement is not None and mode == "streamed" else None)
        # a reply that placed steps read the graph as it began; without one, the graph
        # is as this delivery found it (the close script keeps a step written since)
        found = self._found if self._placement is None and self._found is not None \
            else self.store.graph(self.query_id).steps
        placement = Placement(self.query_id, found, max(self.attempt, 1), started)
        final, added = placement.place_plan(plan)
        closing = self.store.close_graph(self.query_id, final, repairs, added, mode,
                                         self.max_steps, status, self.owner)
        if closing.outcome == "over budget":
            raise over_budget(len(final.steps), closing.spent, self.max_steps)
        if closing.outcome == "closed before":  # by another delivery: its plan stands
            if joined(self.store, closing.view, self.query_id, self.owner):
                self._send_finalize(self.query_id)
            return self.store.plan(self.query_id) or final
        # the script claimed what is ready and the join
        send_steps(self.store, self.query_id,
                   [closing.view.steps[s].task for s in closing.claimed], self._send_step)
        if closing.joined:
            self._send_finalize(self.query_id)
        return final

    def spent_note(self) -> str:
        """For a query whose planning fails before the plan is closed: a clause saying
        its replies spent the step budget, when they did (else empty)."""
        if self._placement is None or self._closing:
            return ""
        sent = len(self.store.graph(self.query_id).steps)
        if sent < self.max_steps:
            return ""
        return (f"; {sent} steps of its replies were sent, all that one query may send "
                f"(CHORDAL_MAX_STEPS={self.max_steps}), and the steps written after them "
                "were not")

    def _send(self, view: GraphView, candidates: list[str]) -> None:
        send_steps(self.store, self.query_id,
                   claim_ready(self.store, view, self.query_id, candidates, self.owner),
                   self._send_step)


def over_budget(steps: int, spent: int, max_steps: int) -> PlanError:
    """The PlanError of a final plan of `steps` steps that does not fit beside the `spent`
    steps rejected replies already sent."""
    message = (f"the plan has {steps} steps, and earlier replies of this query already "
               f"sent {spent} steps it does not use: {steps + spent} in all, more than the "
               f"{max_steps} one query may run (CHORDAL_MAX_STEPS)")
    return PlanError(message, [PlanProblem(step=None, code="too_many_steps", message=(
        f"{message}; submit the question again (a new query starts with the whole "
        "budget) or raise CHORDAL_MAX_STEPS"))])


def send_steps(store: RunStore, query_id: str, tasks: list[StepTask],
               send: Callable[[StepTask], None]) -> None:
    """Send `tasks`, then record when (after: a task sent and not recorded is at worst
    sent again by a redelivered planner, and runs once more harmlessly)."""
    for task in tasks:
        send(task)
    store.mark_dispatched(query_id, [t.step.id for t in tasks], time.time())

