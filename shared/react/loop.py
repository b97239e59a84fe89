"""One ReAct iteration: consumes the query, the iteration number and the run store
(which holds every earlier iteration), produces the iteration's record — and, when the
model calls `finish` or the last allowed iteration ends, the query's Answer.

    react_step(query, n, store, client, backend, settings) -> "continue" | "done"

1. An iteration already stored (a redelivered or re-sent task) is not run again: the
   loop just moves on from it ("continue", or concludes if it was the last).
2. Otherwise the messages are rebuilt from the stored iterations (plus, in auto mode,
   the ReWOO evidence, see seed.py), the model is asked once (`client.chat`), its reply
   parsed (actions.py) and the tool run with a timeout (act.py); the tool's StepResult
   is stored under `{query_id}:R{n}`, the observation cleaned (observe.py).
3. The iteration is stored (first write wins: a duplicate run keeps the first), with
   the LLM call and its tokens.
4. `finish` ends the loop with the model's answer, cited (answer.py), unless nothing
   the loop read supports it (support.py: the refusal goes back as feedback); reaching
   settings.react_max_iterations ends it with an answer that says it stopped, why, and
   the evidence gathered. The run store's terminal guard stores one answer only.
An LLM that fails after its retries fails the query.
"""

from __future__ import annotations

import json
import time
from typing import Literal, Protocol

from shared.config import Settings
from shared.errors import LLMError
from shared.models import TERMINAL, Query, ReactIteration, StepResult
from shared.search import SearchBackend
from shared.stores.graph import step_order
from shared.stores.runs import RunStore
from shared.stores.texts import TextReader

from .act import run_action
from .actions import parse_action
from .answer import finished_answer, stopped_answer
from .observe import observe
from .prompts import build_messages
from .reply_schema import reply_schema
from .support import document_texts, unsupported
from .seed import plan_seed
from .tools import FINISH, TOOLS

Outcome = Literal["continue", "done"]
STOP = ["\nObservation"]
"""Where a reply ends: the Observation is the tool's to write, never the model's."""
REPEATED = ("same observation as the previous turn: change the tool or the query "
            "instead of repeating it")


class ChatClient(Protocol):
    def chat(self, messages: list[dict], *, purpose: str, json_schema: dict | None = None,
             stop: list[str] | None = None, deadline: float | None = None): ...


def final_text(it: ReactIteration) -> str | None:
    """The answer a `finish` iteration gives; None for any other iteration."""
    if it.tool != FINISH or it.feedback:
        return None
    value = it.tool_input
    if isinstance(value, dict):
        value = value.get("answer", value.get("text", json.dumps(value)))
    return None if value is None or not str(value).strip() else str(value)


def next_iteration(iterations: list[ReactIteration], max_iterations: int) -> int:
    """The iteration to run after `iterations`; the last one again if it ends the loop."""
    if not iterations:
        return 1
    last = iterations[-1]
    ends = final_text(last) is not None or last.n >= max_iterations
    return last.n if ends else last.n + 1


def results_of(store: RunStore, query_id: str) -> dict[str, StepResult]:
    """Every stored result by step id: a ReWOO plan's steps first, then R1, R2, …"""
    steps = store.steps(query_id)
    plan = store.plan(query_id)
    order = [s.id for s in plan.steps if s.id in steps] if plan else []
    order += sorted(set(steps) - set(order), key=step_order)
    return {k: steps[k] for k in order}


def react_step(query: Query, n: int, store: RunStore, client: ChatClient,
               backend: SearchBackend | None, settings: Settings) -> Outcome:
    """Run (or move on from) iteration `n` of the query's loop; see the module docstring."""
    if store.status(query.id) in TERMINAL:
        return "done"
    done = {it.n: it for it in store.iterations(query.id)}
    if n in done:
        return conclude(query, done[n], list(done.values()), store, settings)
    if any(i not in done for i in range(1, n)):
        store.fail(query.id, f"ReAct iteration {n} was sent before iterations 1..{n - 1} were "
                             "stored; this is a dispatch bug")
        return "done"
    previous = [done[i] for i in range(1, n)]
    results = results_of(store, query.id)
    plan = store.plan(query.id) if query.mode == "auto" else None
    seed = plan_seed(plan, results, query.question) if plan is not None else None
    messages = build_messages(query.question, previous, TOOLS.values(),
                              settings.react_max_iterations,
                              chars=settings.react_observation_chars, seed=seed)
    store.set_status(query.id, "executing")
    started = time.perf_counter()
    try:
        reply = client.chat(messages, purpose=f"react {n}", stop=STOP,
                            json_schema=reply_schema(TOOLS) if settings.react_json_schema
                            else None, deadline=query.deadline_at)
    except LLMError as exc:
        if exc.call is not None:
            store.add_llm_call(query.id, exc.call)
        store.fail(query.id, f"ReAct iteration {n}: {exc.message}")
        return "done"
    store.add_llm_call(query.id, reply.call)
    it = _act(query, n, reply.content, previous, results, store, backend, settings)
    it.duration_ms = (time.perf_counter() - started) * 1000
    it.finished_at = time.time()
    stored = store.put_iteration(query.id, it)
    return conclude(query, stored, previous + [stored], store, settings)


def _act(query: Query, n: int, reply: str, previous: list[ReactIteration],
         results: dict[str, StepResult], store: RunStore, backend: SearchBackend | None,
         settings: Settings) -> ReactIteration:
    action = parse_action(reply)
    if not action.valid:
        return ReactIteration(n=n, thought=action.thought, feedback=action.error)
    it = ReactIteration(n=n, thought=action.thought, tool=action.tool, tool_input=action.input)
    if action.tool == FINISH:
        text = final_text(it)
        it.feedback = ("finish needs the final answer as its input (text)" if text is None
                       else unsupported(text, query.question, results,
                                        lambda docs: document_texts(backend, docs)))
        return it
    result = run_action(action.tool, action.input, query_id=query.id, n=n, results=results,
                        backend=backend, timeout_s=settings.react_tool_timeout_s,
                        reader=TextReader(backend, store.r, store.text_cache_s))
    stored = store.put_step(query.id, result)
    it.action_id = stored.action_id
    it.observation = observe(stored, settings.react_observation_chars)
    if previous and previous[-1].action_id and previous[-1].observation == it.observation:
        it.feedback = REPEATED
    return it


def conclude(query: Query, it: ReactIteration, iterations: list[ReactIteration],
             store: RunStore, settings: Settings) -> Outcome:
    """After iteration `it`: store the answer if the loop ends there, else "continue"."""
    text = final_text(it)
    limit = settings.react_max_iterations
    if text is None and it.n < limit:
        return "continue"
    results = results_of(store, query.id)
    if text is not None:
        answer = finished_answer(text, results)
    else:
        answer = stopped_answer(iterations, results,
                                f"the loop reached its limit of {limit} iterations "
                                "(CHORDAL_REACT_MAX_ITERATIONS) before the model called finish")
    store.set_status(query.id, "finalizing")
    store.finish(query.id, answer)
    return "done"
