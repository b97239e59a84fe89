"""A query's step results in the run store: consumes `StepResult`s as executors finish
steps; stores each once under its step id (first write wins, capped in size), reads them
back, and, in the same script, tells the storing step which steps it makes ready and
whether the join is reached (shared/journey/dispatch.py). `RunStore` inherits it.

    chordal:steps:{qid}    hash  step_id -> StepResult JSON (first write wins); document
                                 texts by reference and quote (shared/stores/texts.py)
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from shared import naming
from shared.models import StepResult, StepTask
from shared.stores.graph import (CLAIM_LUA, FINAL, IDS_LUA, STORED, VIEW_LUA, GraphView,
                                 scripted_view)
from shared.stores.retire import DELIVERED, EXPIRES
from shared.stores.texts import stored_json

PUT_STEP_LUA = VIEW_LUA + CLAIM_LUA + """
-- the graph first, so the claims of the steps that read this one are read with the run
local graph, ids, reads_of, readers, whole = {}, {}, {}, {}, nil
if ARGV[8] == 'graph' then
  whole, graph = read_run()
  for i = 1, #graph, 2 do ids[#ids + 1] = graph[i]; reads_of[graph[i]] = reads(graph[i + 1]) end
elseif ARGV[8] == 'state' then
  for i = 11, #ARGV do
    local line = ids_of(ARGV[i])
    ids[#ids + 1] = table.remove(line, 1); reads_of[ids[#ids]] = line
  end
end
for _, id in ipairs(ids) do
  for _, input in ipairs(reads_of[id]) do
    if input == ARGV[1] then readers[#readers + 1] = id; break end
  end
end
local names = {'FINAL', 'terminal', 'graph_unkept', 'stored_bytes', 'EXPIRES', 'STORED',
               'FINALIZE_CLAIM'}
for _, id in ipairs(readers) do names[#names + 1] = 'DISPATCH_CLAIM' .. id end
local run = {}
if whole then  -- read with the graph
  for i, name in ipairs(names) do run[i] = whole[name] or false end
else
  run = redis.call('HMGET', KEYS[1], unpack(names))
end
local claims, set, stored_ids = {}, {}, ids_of(run[6])
for i = 7, #names do claims[names[i]] = run[i] or nil end
local payload = ARGV[2]
if #payload > tonumber(ARGV[4]) then
  payload = ARGV[6]
elseif tonumber(run[4] or '0') + #payload > tonumber(ARGV[5]) then
  payload = ARGV[7]
end
if redis.call('HSETNX', KEYS[2], ARGV[1], payload) == 0 then
  payload = redis.call('HGET', KEYS[2], ARGV[1])
else
  stored_ids[#stored_ids + 1] = ARGV[1]
  set = {'stored_bytes', tonumber(run[4] or '0') + #payload, 'STORED', table.concat(stored_ids, ' ')}
  if run[2] or (not run[4] and not run[5]) then
    redis.call('EXPIRE', KEYS[2], ARGV[3])
  elseif not run[4] then
    redis.call('EXPIREAT', KEYS[2], run[5])
  end
end
local function written(reply)
  if #set > 0 then redis.call('HSET', KEYS[1], unpack(set)) end
  return reply
end
if ARGV[8] == '' then return written({payload}) end
local seen = {graph, {run[1], run[2], run[3]}, stored_ids}
if run[2] then return written({payload, seen, {}, 0}) end
-- what the step sends: the steps that read it and are now ready, and the finalizer once
-- the graph is closed and every step it keeps is stored (dispatch.py's next_steps, joined)
local stored, left = set_of(stored_ids), set_of(ids_of(run[3]))
local claimed = claim_ready(readers, reads_of, stored, left, claims, ARGV[9], ARGV[10], set)
local join = run[1] and 1 or 0
for _, id in ipairs(ids) do if not left[id] and not stored[id] then join = 0 end end
if join == 1 and not claim('FINALIZE_CLAIM', claims, ARGV[9], ARGV[10], set) then join = 0 end
return written({payload, seen, claimed, join})
""".replace("'EXPIRES'", repr(EXPIRES)).replace("'STORED'", repr(STORED)).replace(
    "'FINAL'", repr(FINAL)).replace(
    "DISPATCH_CLAIM", "claimed_" + naming.dispatch_claim("")).replace(
    "FINALIZE_CLAIM", "claimed_" + naming.finalize_claim())
"""KEYS: the run and steps keys; ARGV: step id, its stored JSON, ttl, the two
caps, the two error results stored in its place, what to read after, the owner of the
claims and the time, then (`state`) the graph's steps, each `id input input …`. What to
read after: `graph` (the graph's view, the run hash read whole with its graph, as
graph.py's read_run() reads it), `state` (the view but the graph's steps, which the
caller knows: the run's fields only) or `` (nothing). With a view, the
steps that read this one and are now ready are claimed for the owner, and the join
(shared/journey/dispatch.py). The run hash is read once (its fields, and the claims of
the steps that read this one and of the join; with `graph` the whole hash, its graph
with them) and written once (the stored bytes and
ids, and the claims taken). The steps hash gets its TTL as its first result is stored
(the run's `expires`), or `ttl` when the query has ended (a late step's write) or has
no `expires`."""
START_STEP_LUA = IDS_LUA + """
local run = redis.call('HMGET', KEYS[2], 'terminal', 'graph_unkept', 'STORED')
for _, id in ipairs(ids_of(run[3])) do
  if id == ARGV[1] then
    local stored = redis.call('HGET', KEYS[1], ARGV[1])
    if stored then return {stored, 0} end
  end
end
if run[1] then return {'', 0} end
for _, id in ipairs(ids_of(run[2])) do
  if id == ARGV[1] then return {'', 0} end
end
local read = {}
if #ARGV > 1 then read = redis.call('HMGET', KEYS[1], unpack(ARGV, 2)) end
return {redis.call('HINCRBY', KEYS[2], 'DELIVERED' .. ARGV[1], 1), unpack(read)}
""".replace("DELIVERED", DELIVERED).replace("'STORED'", repr(STORED))
"""KEYS: steps, run; ARGV: step id, then the ids of the steps it reads. {stored JSON, 0},
{'', 0} when nothing waits for the step, else {deliveries counted, the stored results
of the steps it reads (false: none)…}. Whether the step is stored is read in the run
hash (`STORED`), so a step that reads none reads the steps hash only when it is."""


def too_large(result: StepResult, code: str, message: str) -> str:
    """The JSON of the error result stored in place of `result` when it is over a cap."""
    return StepResult(action_id=result.action_id, step_id=result.step_id,
                      operation=result.operation, status="error", error_code=code,
                      error_message=message, inputs=result.inputs,
                      duration_ms=result.duration_ms, attempt=result.attempt,
                      started_at=result.started_at, finished_at=result.finished_at,
                      worker=result.worker, task_id=result.task_id).model_dump_json()


@dataclass(frozen=True)
class StoredStep:
    """What storing a step result came to (`RunStore.put_step_and_dispatch`)."""

    result: StepResult
    """The stored result: the one given, as given, when this call stored it; else the
    one stored instead (an earlier delivery's, or the error of a result over a cap),
    read back."""
    view: GraphView
    """The dispatch graph right after."""
    send: list[StepTask]
    """The steps that read it, now ready, claimed to send."""
    joined: bool
    """The finalizer's claim is the caller's: send it."""


class StepResults:
    """The run store's step-result methods (`self.r`: the Redis client, `self.ttl_s`,
    `self.max_step_bytes`, `self.max_query_bytes`; `_graph_keys` of `DispatchGraph`)."""

    def _step_scripts(self) -> None:
        self._put_step_script = self.r.register_script(PUT_STEP_LUA)
        self._start_step_script = self.r.register_script(START_STEP_LUA)

    def start_step(self, query_id: str, step_id: str,
                   reads: list[str] = ()) -> tuple[StepResult | None, int, dict[str, str]]:
        """The stored result of `step_id`, if any; else whether running it is still
        wanted (the query is not terminal, and its plan, once closed, keeps the step)
        and, if so, one more delivery of it counted: (None, deliveries so far, the stored
        JSON of each of the steps in `reads` that has one), or (None, 0, {}) to skip
        it. One script."""
        reply = self._start_step_script(
            keys=[naming.steps_key(query_id), naming.run_key(query_id)],
            args=[step_id, *reads])
        if isinstance(reply[0], str):
            return (StepResult.model_validate_json(reply[0]) if reply[0] else None), 0, {}
        return None, int(reply[0]), {s: raw for s, raw in zip(reads, reply[1:]) if raw}

    def put_step(self, query_id: str, result: StepResult) -> StepResult:
        """Store a step result unless one exists; return the stored one (idempotent). Its
        document texts are stored by reference (shared/stores/texts.py). A result larger than
        `max_step_bytes`, or one that would take the query's stored step results past
        `max_query_bytes`, is stored as a STEP_TOO_LARGE or QUERY_TOO_LARGE error
        instead, in the same script that checks it (so two steps cannot both fit)."""
        return StepResult.model_validate_json(self._put(query_id, result, "")[0])

    def put_step_and_dispatch(self, query_id: str, result: StepResult, owner: str,
                              known: dict | None = None) -> StoredStep:
        """`put_step`, and in the same script, the dispatch graph as it stands right
        after, the steps that read this one and are now ready claimed for `owner` to send,
        and the join (shared/journey/dispatch.py's `next_steps` and `joined`). `known`: the steps
        of a graph already read closed, which are not read again."""
        payload = stored_json(result)
        reply = self._put(query_id, result, "graph" if known is None else "state", owner,
                          known, payload)
        raw, view, claimed, join = reply
        # the stored JSON is the one sent: it is `result`'s, not read back (about 0.06 ms)
        stored = result if raw == payload else StepResult.model_validate_json(raw)
        return StoredStep(stored, view, [view.steps[s].task for s in claimed], bool(join))

    def _put(self, query_id: str, result: StepResult, then: str, owner: str = "",
             known: dict | None = None, payload: str | None = None) -> list:
        payload = stored_json(result) if payload is None else payload
        size = len(payload.encode())
        # the script stores it only for a payload over the step cap, which is known here
        step_error = too_large(result, "STEP_TOO_LARGE", (
            f"step {result.step_id}'s result is {size:,} bytes, over CHORDAL_MAX_STEP_BYTES "
            f"({self.max_step_bytes:,}); ask for less (a smaller top_k, a narrower SEARCH), "
            "or raise CHORDAL_MAX_STEP_BYTES")) if size > self.max_step_bytes else ""
        query_error = too_large(result, "QUERY_TOO_LARGE", (
            f"step {result.step_id}'s result ({size:,} bytes) would take the query's stored "
            f"results past CHORDAL_MAX_QUERY_BYTES ({self.max_query_bytes:,}); plan fewer or "
            "smaller steps, or raise CHORDAL_MAX_QUERY_BYTES"))
        graph = [" ".join([s, *g.task.inputs.values()]) for s, g in (known or {}).items()]
        reply = self._put_step_script(
            keys=self._graph_keys(query_id),
            args=[result.step_id, payload, self.ttl_s, self.max_step_bytes,
                  self.max_query_bytes, step_error, query_error, then, owner, time.time(),
                  *graph])
        if not then:
            return reply
        return [reply[0], scripted_view(reply[1], known), *reply[2:]]

    def steps(self, query_id: str) -> dict[str, StepResult]:
        raw = self.r.hgetall(naming.steps_key(query_id))
        return {k: StepResult.model_validate_json(v) for k, v in raw.items()}

    def step(self, query_id: str, step_id: str) -> StepResult | None:
        raw = self.r.hget(naming.steps_key(query_id), step_id)
        return StepResult.model_validate_json(raw) if raw else None
