"""A query's record, read from the run store: consumes its run hash, step results,
iterations, model calls and dispatch lines; produces the `RunRecord` that `chordal show`,
the API and the pages print, the lighter one the finalizer reads, what a watcher has not
seen yet (the event streams), and the wait for a query to end. `RunStore` inherits it.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

from shared import naming
from shared.models import TERMINAL, Answer, Plan, ReactIteration, RunRecord, StepResult
from shared.stores.batch_counts import COUNT_LUA
from shared.stores.graph import step_order
from shared.stores.model_calls import ITERATED
from shared.stores.retire import GRAPH

# a query with neither (the claim of iteration 1 comes before any) has no iterations
_HAS_ITERATIONS = (ITERATED, "claimed_" + naming.react_claim(1))
START_FINALIZING_LUA = COUNT_LUA + """
local h, f, run = redis.call('HGETALL', KEYS[1]), {}, {}
for i = 1, #h, 2 do
  f[h[i]] = h[i + 1]
  if string.sub(h[i], 1, GRAPH_LEN) ~= 'GRAPH' then  -- the finalizer reads no graph
    run[#run + 1] = h[i]; run[#run + 1] = h[i + 1]
  end
end
if not f['query'] then return {run, {}, {}} end
local steps, its = redis.call('HGETALL', KEYS[2]), {}
if f[ITERATED] or f[CLAIMED] then its = redis.call('HGETALL', KEYS[3]) end
if not f['terminal'] and not (TERMINAL_SET)[f['status'] or ''] and #its == 0 and f['plan'] then
  redis.call('HSET', KEYS[1], 'status', 'finalizing', 't_finalizing', ARGV[1])
  count_known(KEYS[1], 'finalizing', ARGV[2], f['batch'], f['counted'], f['t_queued'], ARGV[1])
end
return {run, steps, its}
""".replace("ITERATED", repr(_HAS_ITERATIONS[0])).replace("CLAIMED", repr(_HAS_ITERATIONS[1])) \
   .replace("'GRAPH'", repr(GRAPH)).replace("GRAPH_LEN", str(len(GRAPH))) \
   .replace("TERMINAL_SET", "{" + ", ".join(f"{s}=true" for s in TERMINAL) + "}")
"""What the finalizer reads of a query (KEYS: run, steps, iterations; ARGV: the time, the
ttl): the run hash but its dispatch graph, the step results and (when it has any) the
iterations; and, when the query is not terminal, has a plan and no iterations (the
finalizer renders it), the move to `finalizing` in the same script, as the status
script makes it."""


def _pairs(flat: list) -> dict[str, str]:
    return dict(zip(flat[::2], flat[1::2]))


@dataclass(frozen=True)
class _Core:
    """What `record` and `start_finalizing` both read of a query."""

    raw: dict[str, str]
    query: dict
    plan: Plan | None
    plan_ids: list[str]
    steps: list[StepResult]
    iterations: list[ReactIteration]


class Records:
    """The run store's reads of whole records (`self.r`, `self.ttl_s`; `llm_calls` of
    `ModelCalls`, `_dispatch` of `DispatchGraph`)."""

    def _record_scripts(self) -> None:
        self._start_finalizing_script = self.r.register_script(START_FINALIZING_LUA)

    def progress(self, query_id: str, fields: list[str], steps_seen: set[str],
                 iterations_seen: set[str]) -> tuple[dict, dict[str, str], dict[str, str]]:
        """What a watcher has not seen yet: `fields` of the run hash (None where unset),
        and the JSON of every stored step and iteration not in `steps_seen` and
        `iterations_seen`, in step order and by number. The fields and which steps and
        iterations exist are read in one MULTI/EXEC, so they agree."""
        run, steps, its = (naming.run_key(query_id), naming.steps_key(query_id),
                           naming.iterations_key(query_id))
        with self.r.pipeline() as p:
            p.hmget(run, fields)
            p.hkeys(steps)
            p.hkeys(its)
            head, step_ids, iteration_ns = p.execute()
        new_steps = sorted(set(step_ids) - steps_seen, key=step_order)
        new_its = sorted(set(iteration_ns) - iterations_seen, key=int)
        return (dict(zip(fields, head)),
                dict(zip(new_steps, self.r.hmget(steps, new_steps))) if new_steps else {},
                dict(zip(new_its, self.r.hmget(its, new_its))) if new_its else {})

    def _core(self, query_id: str,
              read: tuple[dict, dict, dict] | None = None) -> _Core | None:
        """The run hash, plan, step results in plan order and iterations of a query, in one
        round trip (a second for the iterations of a query that has some); None when
        there is no query. `read`: those three hashes as a script read them."""
        if read is None:
            with self.r.pipeline(transaction=False) as p:
                p.hgetall(naming.run_key(query_id))
                p.hgetall(naming.steps_key(query_id))
                raw, steps_raw = p.execute()
            its_raw = self.r.hgetall(naming.iterations_key(query_id)) \
                if any(f in raw for f in _HAS_ITERATIONS) else {}
        else:
            raw, steps_raw, its_raw = read
        if not raw or "query" not in raw:
            return None
        plan = Plan.model_validate_json(raw["plan"]) if raw.get("plan") else None
        steps = {k: StepResult.model_validate_json(v) for k, v in steps_raw.items()}
        plan_ids = [s.id for s in plan.steps] if plan else []
        order = plan_ids + sorted(set(steps) - set(plan_ids), key=step_order)  # ReAct: R1, R2, …
        # Only the question and mode are read, not the whole Query: a record stays
        # readable when a field of it no longer validates (a deadline stored as null).
        return _Core(raw, json.loads(raw["query"]), plan, plan_ids,
                     [steps[s] for s in order if s in steps],
                     sorted((ReactIteration.model_validate_json(v) for v in its_raw.values()),
                            key=lambda it: it.n))

    def record(self, query_id: str) -> RunRecord | None:
        core = self._core(query_id)
        if core is None:
            return None
        raw, plan = core.raw, core.plan
        return RunRecord(
            query_id=query_id,
            question=core.query.get("question", ""),
            status=raw.get("status", "queued"),
            planner=plan.planner if plan else raw.get("planner"),
            plan=plan,
            problems=json.loads(raw.get("problems", "[]")),
            repairs=json.loads(raw.get("repairs", "[]")),
            steps=core.steps,
            answer=Answer.model_validate_json(raw["answer"]) if raw.get("answer") else None,
            error=raw.get("error"),
            timings={k[2:]: float(v) for k, v in raw.items() if k.startswith("t_")},
            usage={k[6:]: int(v) for k, v in raw.items() if k.startswith("usage_")},
            mode=core.query.get("mode", "rewoo"),
            # every LLM call counts itself in `usage_calls` (add_llm_call)
            llm_calls=self.llm_calls(query_id) if "usage_calls" in raw else [],
            iterations=core.iterations,
            plan_mode=raw.get("plan_mode"),
            dispatch=self._dispatch(core.plan_ids, raw),
            finalizer_runs=int(raw.get("finalizer_runs", 0)),
        )

    def start_finalizing(self, query_id: str) -> RunRecord | None:
        """What the finalizer reads of a query, in one script: the record with its
        question, mode, status, plan, step results (in plan order) and ReAct iterations,
        without its LLM calls and dispatch lines, as it was read; None when there is no
        query. The same script moves a query the finalizer renders (not terminal, a plan,
        no iterations) to `finalizing`."""
        run, steps, its = self._start_finalizing_script(
            keys=[naming.run_key(query_id), naming.steps_key(query_id),
                  naming.iterations_key(query_id)], args=[time.time(), self.ttl_s])
        core = self._core(query_id, (_pairs(run), _pairs(steps), _pairs(its)))
        if core is None:
            return None
        return RunRecord(
            query_id=query_id, question=core.query.get("question", ""),
            status=core.raw.get("status", "queued"), plan=core.plan,
            mode=core.query.get("mode", "rewoo"), steps=core.steps, iterations=core.iterations)

    def wait(self, query_id: str, timeout_s: float) -> RunRecord | None:
        """Block until the query is terminal or `timeout_s` passes; return its record."""
        deadline = time.monotonic() + timeout_s
        done = naming.done_key(query_id)
        while True:
            if self.r.hget(naming.run_key(query_id), "terminal"):
                return self.record(query_id)
            left = deadline - time.monotonic()
            if left <= 0:
                return self.record(query_id)
            # a list moved onto itself wakes the waiter and leaves the item for others
            if self.r.blmove(done, done, max(0.01, min(left, 1.0)), "RIGHT", "LEFT"):
                return self.record(query_id)
