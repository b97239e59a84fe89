"""Send the work of one query: steps in as the planner learns them (a whole plan, or one
step at a time while the model writes it), step tasks out the moment their inputs are
stored, and the finalizer once the plan is closed and every step sent has reported.

The steps that may run live in the query's *dispatch graph* in the run store (step id
-> `GraphStep`: the task and the ids of the steps it reads; RunStore.add_to_graph). Two
sides send from it, each right after its own write, so that one of them always sees
both writes:
- the planner adds steps, then reads which of them have every input stored, and sends
  those (`PlanDispatch`);
- an executor stores its step's result, then reads the graph, and sends the steps that
  read it and are now ready (`next_steps`).
A claim per step (`claimed_dispatch:<step>`) lets one of them send it, however often a
task is redelivered. The graph only grows until the planner closes it with the final
plan; the finalizer is sent when the graph is closed and every step in it has a stored
result (`joined`), by whichever task sees that first (`claimed_finalize`). A step an
earlier reply wrote and the final plan dropped still has to report: the join waits for
what was sent, not only for what the plan reads.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from shared import queues
from shared.models import GraphStep, Plan, Step, StepTask
from shared.placement import Placement
from shared.store import GraphView, RunStore, step_order


def ready_steps(view: GraphView, candidates: list[str]) -> list[str]:
    """The `candidates` without a stored result whose inputs are all stored."""
    if view.terminal:
        return []
    return [s for s in candidates if s not in view.stored
            and set(view.steps[s].task.inputs.values()) <= view.stored]


def claim_ready(store: RunStore, view: GraphView, query_id: str, candidates: list[str],
                owner: str) -> list[StepTask]:
    """The tasks of the ready `candidates` that `owner` may send (one claim each, all
    in one round trip)."""
    ready = ready_steps(view, candidates)
    claimed = store.claim_many(query_id, [queues.dispatch_claim(s) for s in ready], owner)
    return [view.steps[s].task for s, mine in zip(ready, claimed) if mine]


def next_steps(store: RunStore, view: GraphView, query_id: str, finished: str,
               owner: str) -> list[StepTask]:
    """The steps that read `finished`, are now ready and that `owner` may send; `view`
    read after `finished` stored its result."""
    readers = sorted((s for s, g in view.steps.items() if finished in g.task.inputs.values()),
                     key=step_order)
    return claim_ready(store, view, query_id, readers, owner)


def joined(store: RunStore, view: GraphView, query_id: str, owner: str) -> bool:
    """True when the graph is closed, every step in it has a stored result, and `owner`
    holds the claim to send the finalizer (the first task to see it so, and that task
    again when it is redelivered). Counting stored results, which are written once per
    step, counts a step once however often it ran."""
    return (view.closed and not view.terminal and set(view.steps) <= view.stored
            and store.claim(query_id, queues.finalize_claim(), owner))


class PlanDispatch:
    """The planner's side for one query: steps offered while a reply streams, the final
    plan closed, and what a planner killed before it sent needs sending."""

    def __init__(self, store: RunStore, query_id: str, owner: str,
                 send_step: Callable[[StepTask], None], send_finalize: Callable[[str], None]):
        self.store, self.query_id, self.owner = store, query_id, owner
        self._send_step, self._send_finalize = send_step, send_finalize
        self._placement: Placement | None = None
        self.attempt = 0

    def resume(self) -> bool:
        """Send the ready steps an earlier delivery of this planner added and did not
        send; True when it had closed the graph (the plan is final: nothing to plan)."""
        view = self.store.graph(self.query_id)
        sent = self.store.dispatched(self.query_id)
        self._send(view, [s for s in sorted(view.steps, key=step_order) if s not in sent])
        if joined(self.store, view, self.query_id, self.owner):
            self._send_finalize(self.query_id)
        return view.closed

    def begin(self, reply_started_at: float | None = None) -> None:
        """A new reply of the model: its steps are placed on the graph as it stands."""
        self.attempt += 1
        self._placement = Placement(self.query_id, self.store.graph(self.query_id).steps,
                                    self.attempt, reply_started_at)

    def offer(self, step: Step) -> None:
        """A step of the reply being written, checked with the steps before it: it runs
        now if its inputs are stored, else when they are (nothing runs twice)."""
        if self._placement is None:
            self.begin()
        _, added = self._placement.place(step)
        if added is not None:
            view = self.store.add_to_graph(self.query_id, [added])
            self._send(view, [added.task.step.id])

    def close(self, plan: Plan, repairs: list[str], mode: str) -> Plan:
        """Record the final plan (its steps renamed to the graph ids they run as), add
        what it adds, close the graph, send what is ready, and the finalizer if every
        step already reported. Returns the plan as recorded. `mode`: `streamed` or
        `whole` (its steps' dispatch is then not timed against a reply)."""
        started = (self._placement.reply_started_at
                   if self._placement is not None and mode == "streamed" else None)
        placement = Placement(self.query_id, self.store.graph(self.query_id).steps,
                              max(self.attempt, 1), started)
        final, added = placement.place_plan(plan)
        self.store.save_plan(self.query_id, final, repairs)  # before the finalizer can run
        view = self.store.add_to_graph(self.query_id, added, close=True, mode=mode)
        self._send(view, [g.task.step.id for g in added])
        if joined(self.store, view, self.query_id, self.owner):
            self._send_finalize(self.query_id)
        return final

    def _send(self, view: GraphView, candidates: list[str]) -> None:
        send_steps(self.store, self.query_id,
                   claim_ready(self.store, view, self.query_id, candidates, self.owner),
                   self._send_step)


def send_steps(store: RunStore, query_id: str, tasks: list[StepTask],
               send: Callable[[StepTask], None]) -> None:
    """Send `tasks`, then record when (after: a task sent and not recorded is at worst
    sent again by a redelivered planner, and runs once more harmlessly)."""
    for task in tasks:
        send(task)
    store.mark_dispatched(query_id, [t.step.id for t in tasks], time.time())


def graph_steps(query_id: str, plan: Plan) -> list[GraphStep]:
    """The graph of a whole plan, as PlanDispatch.close adds it to an empty graph."""
    return Placement(query_id, {}).place_plan(plan)[1]
