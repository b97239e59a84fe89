"""The run store: every query's status, plan, step results, answer and timings in Redis.

Consumes models from `shared.models`; produces `RunRecord`s. Keys (see shared/naming.py):

    chordal:run:{qid}      hash  query, status, t_<status>, plan, problems, repairs,
                                 answer, error, usage, terminal, planned_at,
                                 stored_bytes (the bytes of its step results, held to
                                 max_query_bytes); while it runs, expires, sent:<step>
                                 and delivered:<name>, folded at its end into dispatch
                                 and deliveries (shared/stores/retire.py)
    chordal:steps:{qid}    hash  step_id -> StepResult JSON (first write wins); document
                                 texts by reference and quote (shared/stores/texts.py)
    chordal:done:{qid}     list  one item once the query is terminal (BLMOVE onto itself
                                 to wait),
                                 for DONE_TTL_S seconds
    chordal:deadlines      zset  qid scored by its deadline, until it is terminal
    chordal:llm:{qid}      list  LLMCall JSON per model call (tokens summed in usage_*)
    chordal:react:{qid}    hash  n -> ReactIteration JSON (first write wins)
    chordal:graph:{qid}    hash  the dispatch graph (shared/stores/graph.py)

A query's deadline is `deadline_s` from enqueue; a batch query's (`queue_wait_s` set)
is `queue_wait_s` from enqueue until a worker takes it from the queue, then
`deadline_s` from that moment (`leave_queue`).

The query, plan and answer are kept as JSON without the fields at their defaults.
TTLs are set once per key (shared/stores/retire.py): a running query's keys live until `ttl_s`
(`CHORDAL_RUN_TTL_S`) past its last deadline, and a finished query's `ttl_s` after its
end, so a record lives at least `ttl_s` after its last change.
Terminal transitions are guarded by HSETNX on `terminal`: a query is answered, failed
or cancelled exactly once, however often a task is redelivered or a cancel repeated. The scripts that change a
status also move the counters of the query's batch (shared/stores/batch_counts.py); the one
that ends a query folds its dispatch graph, send times and delivery counters into the
run hash and deletes them (shared/stores/retire.py).
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass

import redis

from shared import naming
from shared.stores.batch_counts import COUNT_LUA, failure_group
from shared.errors import StoreError
from shared.stores.graph import CLAIM_LUA, DispatchGraph, GraphView, scripted_view, step_order
from shared.stores.retire import (DELIVERED, DONE_TTL_S, EXPIRES, RETIRE_LUA, SENT,
                           kept_deliveries, live_fields)
from shared.stores.texts import stored_json
from shared.models import (Answer, LLMCall, Plan, PlanProblem, Query, ReactIteration,
                           RunRecord, StepResult, StepTask)


_TERMINATE = """
if redis.call('HSETNX', KEYS[1], 'terminal', ARGV[1]) == 0 then return 0 end
local set, now = {}, nil
for i = 4, #ARGV, 2 do
  set[#set + 1] = ARGV[i]; set[#set + 1] = ARGV[i + 1]
  if ARGV[i] == 't_' .. ARGV[1] then now = ARGV[i + 1] end
end
local was = retire(KEYS[1], ARGV[2], set)
count_known(KEYS[1], ARGV[1], ARGV[2], was['batch'], was['counted'], was['t_queued'], now)
redis.call('ZREM', KEYS[3], ARGV[3])
redis.call('RPUSH', KEYS[2], ARGV[1])
redis.call('EXPIRE', KEYS[2], DONE_TTL)
return 1
""".replace("DONE_TTL", str(DONE_TTL_S))
TERMINATE_LUA = COUNT_LUA + RETIRE_LUA + _TERMINATE
CANCEL_LUA = COUNT_LUA + RETIRE_LUA + "local function terminate(KEYS, ARGV)" + _TERMINATE + """end
local out = {}
for j = 1, (#KEYS - 1) / 2 do
  local run, done = KEYS[2 * j], KEYS[2 * j + 1]
  if redis.call('EXISTS', run) == 0 then out[j] = -1 else
    out[j] = terminate({run, done, KEYS[1]}, {'cancelled', ARGV[1], ARGV[3 + j], 'status',
                       'cancelled', 't_cancelled', ARGV[2], 'error', ARGV[3]})
  end
end
return out
"""
"""TERMINATE of many queries as `cancelled` (KEYS: the deadlines, then each query's run
and done keys; ARGV: ttl, time, reason, then the ids): per query 1, 0 when it was
terminal, -1 when its record is gone (nothing is written)."""
STATUS_LUA = COUNT_LUA + """
local was = redis.call('HMGET', KEYS[1], 'status', 'planned_at', 'terminal', 'batch',
                       'counted', 't_queued')
if was[3] then return 0 end
local planned = ARGV[3]
if ARGV[5] then
  if was[1] == 'queued' then
    local due = redis.call('ZSCORE', KEYS[2], ARGV[6])
    if due and tonumber(due) < tonumber(ARGV[3]) then return -1 end
    redis.call('HSET', KEYS[1], 'planned_at', ARGV[3])
    redis.call('ZADD', KEYS[2], 'XX', tonumber(ARGV[3]) + tonumber(ARGV[5]), ARGV[6])
  elseif was[2] then
    planned = was[2]
  end
end
redis.call('HSET', KEYS[1], 'status', ARGV[1], ARGV[2], ARGV[3])
count_known(KEYS[1], ARGV[1], ARGV[4], was[4], was[5], was[6], ARGV[3])
return planned
"""
"""A status change; with ARGV[5] (a run deadline, seconds) and ARGV[6] (the query id),
the query's first move out of `queued` also records `planned_at` and re-scores its
deadline to `planned_at` + ARGV[5], unless it waited past its queue-wait deadline (-1,
nothing changed). Returns 0 for a terminal query, else `planned_at` (now, when none is
recorded). No TTL is renewed: a query's run hash lives past its last deadline from its
creation (CREATE_LUA)."""


def _expired_reason(status: str, raw_query: str | None) -> str:
    """Why a query past its deadline failed: which budget ran out."""
    try:
        wait = json.loads(raw_query or "{}").get("queue_wait_s")
    except ValueError:
        wait = None
    if status == "queued" and wait is not None:
        return (f"deadline exceeded while queued: waited in the queue longer than "
                f"CHORDAL_BATCH_QUEUE_WAIT_S={wait:g}s before a planner took it (are the "
                "workers running? raise it, or enqueue with --max-in-flight)")
    ran = " ran longer than its deadline:" if status != "queued" else ""
    return (f"deadline exceeded while {status}:{ran} the query did not finish in time "
            "(are the workers running?)")


_COUNT_ONCE = """
if ARGV[1] == '' or redis.call('HSETNX', KEYS[1], ARGV[1], 1) == 1 then
  return redis.call('HINCRBY', KEYS[1], 'finalizer_runs', 1)
end
return tonumber(redis.call('HGET', KEYS[1], 'finalizer_runs') or '0')
"""


PUT_STEP_LUA = CLAIM_LUA + """
local run = redis.call('HMGET', KEYS[2], 'graph_closed', 'terminal', 'graph_unkept',
                       'stored_bytes', 'EXPIRES')
local payload = ARGV[2]
if #payload > tonumber(ARGV[4]) then
  payload = ARGV[6]
elseif tonumber(run[4] or '0') + #payload > tonumber(ARGV[5]) then
  payload = ARGV[7]
end
if redis.call('HSETNX', KEYS[3], ARGV[1], payload) == 0 then
  payload = redis.call('HGET', KEYS[3], ARGV[1])
else
  redis.call('HINCRBY', KEYS[2], 'stored_bytes', #payload)
  if run[2] or (not run[4] and not run[5]) then
    redis.call('EXPIRE', KEYS[3], ARGV[3])
  elseif not run[4] then
    redis.call('EXPIREAT', KEYS[3], run[5])
  end
end
if ARGV[8] == '' then return {payload} end
local graph, ids, reads_of = {}, {}, {}
if ARGV[8] == 'graph' then
  graph = redis.call('HGETALL', KEYS[1])
  for i = 1, #graph, 2 do ids[#ids + 1] = graph[i]; reads_of[graph[i]] = reads(graph[i + 1]) end
else
  for i = 11, #ARGV do
    local line = {}
    for id in string.gmatch(ARGV[i], '%S+') do line[#line + 1] = id end
    ids[#ids + 1] = table.remove(line, 1); reads_of[ids[#ids]] = line
  end
end
local stored_ids = redis.call('HKEYS', KEYS[3])
local seen = {graph, {run[1], run[2], run[3]}, stored_ids}
if run[2] then return {payload, seen, {}, 0} end
-- what the step sends: the steps that read it and are now ready, and the finalizer once
-- the graph is closed and every step it keeps is stored (dispatch.py's next_steps, joined)
local stored, left, readers = set_of(stored_ids), {}, {}
for id in string.gmatch(run[3] or '', '%S+') do left[id] = true end
for _, id in ipairs(ids) do
  for _, input in ipairs(reads_of[id]) do
    if input == ARGV[1] then readers[#readers + 1] = id; break end
  end
end
local claimed = claim_ready(readers, reads_of, stored, left, ARGV[9], ARGV[10])
local join = run[1] and 1 or 0
for _, id in ipairs(ids) do if not left[id] and not stored[id] then join = 0 end end
if join == 1 and not claim('FINALIZE_CLAIM', ARGV[9], ARGV[10]) then join = 0 end
return {payload, seen, claimed, join}
""".replace("EXPIRES", EXPIRES).replace("FINALIZE_CLAIM", "claimed_" + naming.finalize_claim())
"""KEYS: the graph, run and steps keys; ARGV: step id, its stored JSON, ttl, the two
caps, the two error results stored in its place, what to read after, the owner of the
claims and the time, then (`state`) the graph's steps, each `id input input …`. What to
read after: `graph` (the graph's view, as graph_store's view() reads it), `state` (the
view but the graph's steps, which the caller knows) or `` (nothing). With a view, the
steps that read this one and are now ready are claimed for the owner, and the join
(shared/journey/dispatch.py). The steps hash gets its TTL as its first result is stored (the
run's `expires`), or `ttl` when the query has ended (a late step's write) or has no
`expires`."""
START_STEP_LUA = """
local stored = redis.call('HMGET', KEYS[1], unpack(ARGV))
if stored[1] then return {stored[1], 0} end
local run = redis.call('HMGET', KEYS[2], 'terminal', 'graph_unkept')
if run[1] then return {'', 0} end
for id in string.gmatch(run[2] or '', '%S+') do
  if id == ARGV[1] then return {'', 0} end
end
stored[1] = redis.call('HINCRBY', KEYS[2], 'DELIVERED' .. ARGV[1], 1)
return stored
""".replace("DELIVERED", DELIVERED)
"""KEYS: steps, run; ARGV: step id, then the ids of the steps it reads. {stored JSON, 0},
{'', 0} when nothing waits for the step, else {deliveries counted, the stored results
of the steps it reads (false: none)…}."""
CREATE_LUA = """
if redis.call('HSETNX', KEYS[1], 'query', ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'status', 'queued', 't_queued', ARGV[2], 'EXPIRES', ARGV[3])
redis.call('EXPIREAT', KEYS[1], ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[5])
return 1
""".replace("EXPIRES", EXPIRES)
"""KEYS: the run hash, the deadlines; ARGV: the query's JSON, the time, when its keys
expire while it runs (`expires`: `ttl_s` past its last possible deadline), its first
deadline, its id."""


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
    """The stored result (an earlier delivery's, if it stored first)."""
    view: GraphView
    """The dispatch graph right after."""
    send: list[StepTask]
    """The steps that read it, now ready, claimed to send."""
    joined: bool
    """The finalizer's claim is the caller's: send it."""


CHUNK = 1000
"""Queries per script call of `cancel` (each call holds Redis a few milliseconds)."""


class RunStore(DispatchGraph):
    def __init__(self, client: redis.Redis, ttl_s: int, text_cache_s: int = 3600,
                 max_step_bytes: int = 64 * 1024, max_query_bytes: int = 256 * 1024):
        self.r = client
        self.ttl_s = ttl_s
        self.text_cache_s = text_cache_s
        """How long a shared cached copy of a document text lives (shared/stores/texts.py)."""
        self.max_step_bytes = max_step_bytes
        self.max_query_bytes = max_query_bytes
        """The most one step result, and all of a query's step results, may store."""
        self._put_step_script = client.register_script(PUT_STEP_LUA)
        self._start_step_script = client.register_script(START_STEP_LUA)
        self._create_script = client.register_script(CREATE_LUA)
        self._count_once_script = client.register_script(_COUNT_ONCE)
        self._terminate_script = client.register_script(TERMINATE_LUA)
        self._cancel_script = client.register_script(CANCEL_LUA)
        self._status_script = client.register_script(STATUS_LUA)
        self._graph_scripts()

    @classmethod
    def from_url(cls, url: str, ttl_s: int, text_cache_s: int = 3600,
                 max_step_bytes: int = 64 * 1024,
                 max_query_bytes: int = 256 * 1024) -> "RunStore":
        return cls(redis.Redis.from_url(url, decode_responses=True, socket_timeout=10), ttl_s,
                   text_cache_s, max_step_bytes, max_query_bytes)

    def ping(self) -> None:
        try:
            self.r.ping()
        except redis.RedisError as exc:
            raise StoreError(f"run store unreachable: {exc}") from exc

    # -- writes -------------------------------------------------------------------------

    def _hset(self, query_id: str, fields: dict) -> None:
        key = naming.run_key(query_id)
        with self.r.pipeline() as p:
            p.hset(key, mapping=fields)
            p.expire(key, self.ttl_s)
            p.execute()

    def create(self, query: Query) -> bool:
        """Record a new query as `queued`; False when the id was already submitted."""
        now = query.created_at or time.time()
        # the latest a running query can end: its queue wait, then its whole deadline
        last_deadline = now + query.first_deadline_s + (
            query.deadline_s if query.queue_wait_s is not None else 0)
        return bool(self._create_script(
            keys=[naming.run_key(query.id), naming.deadlines_key()],
            args=[query.model_dump_json(exclude_defaults=True), now,
                  math.ceil(max(now, last_deadline) + self.ttl_s),
                  now + query.first_deadline_s, query.id]))

    def withdraw(self, query_id: str) -> bool:
        """Forget a query that was recorded but never sent (its message could not be
        published), so submitting it again sends it; False when it has moved on."""
        key = naming.run_key(query_id)
        with self.r.pipeline() as p:
            p.watch(key)
            if p.hget(key, "status") != "queued":
                return False
            p.multi()
            p.delete(key)
            p.zrem(naming.deadlines_key(), query_id)
            try:
                p.execute()
            except redis.WatchError:
                return False
        return True

    def set_status(self, query_id: str, status: str) -> None:
        """Move a query on (`planning`, `executing`, …) unless it is already terminal."""
        self._status_script(keys=[naming.run_key(query_id)],
                            args=[status, f"t_{status}", time.time(), self.ttl_s])

    def leave_queue(self, query: Query, status: str) -> Query | None:
        """Move `query` on to `status` as a worker takes it from the queue; `query` with
        its `planned_at`. A query with a queue-wait budget leaves `queued` once: its
        deadline becomes `planned_at` + `deadline_s`, in the same script; taken past its
        queue-wait deadline it is failed saying so instead, and None returned."""
        if query.queue_wait_s is None:
            self.set_status(query.id, status)
            return query
        planned = self._status_script(
            keys=[naming.run_key(query.id), naming.deadlines_key()],
            args=[status, f"t_{status}", time.time(), self.ttl_s, query.deadline_s, query.id])
        if planned == -1:
            self.fail(query.id, _expired_reason("queued", query.model_dump_json()))
            return None
        return query.model_copy(update={"planned_at": float(planned)}) if planned else query

    def save_plan(self, query_id: str, plan: Plan, repairs: list[str] | None = None) -> None:
        self._hset(query_id, {"plan": plan.model_dump_json(exclude_defaults=True),
                              "repairs": json.dumps(repairs or [])})

    def claim(self, query_id: str, what: str, owner: str = "") -> bool:
        """True for the first caller only, and again for the same `owner` (a redelivered
        task that claimed before it died must be able to finish what it claimed)."""
        return self.claim_many(query_id, [what], owner)[0]

    def claim_many(self, query_id: str, whats: list[str], owner: str = "") -> list[bool]:
        """`claim` of each of `whats`, in one round trip."""
        key = naming.run_key(query_id)
        # no transaction: a claim, once set, never changes, so the HGET after a failed
        # HSETNX reads its holder whatever ran in between
        with self.r.pipeline(transaction=False) as p:
            for what in whats:
                p.hsetnx(key, f"claimed_{what}", owner or time.time())
                p.hget(key, f"claimed_{what}")
            replies = p.execute() if whats else []
        return [bool(first) or (bool(owner) and holder == owner)
                for first, holder in zip(replies[::2], replies[1::2])]

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
        reply = self._put(query_id, result, "graph" if known is None else "state", owner,
                          known)
        raw, view, claimed, join = reply
        return StoredStep(StepResult.model_validate_json(raw), view,
                          [view.steps[s].task for s in claimed], bool(join))

    def _put(self, query_id: str, result: StepResult, then: str, owner: str = "",
             known: dict | None = None) -> list:
        payload = stored_json(result)
        size = len(payload.encode())
        step_error = too_large(result, "STEP_TOO_LARGE", (
            f"step {result.step_id}'s result is {size:,} bytes, over CHORDAL_MAX_STEP_BYTES "
            f"({self.max_step_bytes:,}); ask for less (a smaller top_k, a narrower SEARCH), "
            "or raise CHORDAL_MAX_STEP_BYTES"))
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

    def deliveries(self, query_id: str) -> dict[str, int]:
        """How often each task of the query was delivered (`plan`, a step id, `react:N`):
        its counters while it runs, what the script that ended it kept of them after."""
        raw = self.r.hgetall(naming.run_key(query_id))
        counts = kept_deliveries(raw.get("deliveries"))
        for name, n in live_fields(raw, DELIVERED).items():
            counts[name] = counts.get(name, 0) + int(n)
        return counts

    def count_delivery(self, action_id: str) -> int:
        """Count one more delivery of the task behind `action_id` (`{query id}:{name}`:
        a field of the query's run hash, which has its TTL)."""
        query_id, _, name = action_id.partition(":")
        return int(self.r.hincrby(naming.run_key(query_id), DELIVERED + name, 1))

    def _terminate(self, query_id: str, status: str, fields: dict) -> bool:
        # One script, so a waiter never sees `terminal` before the answer and status.
        flat = [str(x) for kv in {**fields, "status": status, f"t_{status}": time.time()}
                .items() for x in kv]
        keys = [naming.run_key(query_id), naming.done_key(query_id), naming.deadlines_key()]
        return bool(self._terminate_script(keys=keys, args=[status, self.ttl_s, query_id, *flat]))

    def finish(self, query_id: str, answer: Answer, planner: str | None = None) -> bool:
        """Store the answer and mark the query `done`; False if it was already terminal.
        `planner`: who answered without a plan (the heuristic planner, abstaining)."""
        fields = {"answer": answer.model_dump_json(exclude_defaults=True)}
        if planner:
            fields["planner"] = planner
        return self._terminate(query_id, "done", fields)

    def fail(self, query_id: str, error: str, problems: list[PlanProblem] | None = None) -> bool:
        """Mark the query `failed` with the reason; False if it was already terminal."""
        fields = {"error": error}
        if problems:
            fields["problems"] = json.dumps([p.model_dump() for p in problems])
        fields["failure"] = failure_group(error, fields.get("problems"))
        return self._terminate(query_id, "failed", fields)

    def cancel(self, query_ids: list[str], reason: str) -> list[str]:
        """End each unfinished query of `query_ids` as `cancelled` (error: `reason`),
        through the terminal guard, `CHUNK` in one script call; one outcome per id:
        `cancelled`, `finished` (it was terminal: untouched) or `missing` (no record)."""
        outcomes = {1: "cancelled", 0: "finished", -1: "missing"}
        out: list[str] = []
        for i in range(0, len(query_ids), CHUNK):
            ids = query_ids[i:i + CHUNK]
            keys = [naming.deadlines_key()]
            for qid in ids:
                keys += [naming.run_key(qid), naming.done_key(qid)]
            replies = self._cancel_script(keys=keys, args=[self.ttl_s, time.time(), reason, *ids])
            out.extend(outcomes[int(n)] for n in replies)
        return out

    def sweep_expired(self, now: float | None = None) -> list[str]:
        """Fail every query past its deadline; return their ids."""
        now = time.time() if now is None else now
        swept = []
        for qid in self.r.zrangebyscore(naming.deadlines_key(), "-inf", now):
            status, raw = self.r.hmget(naming.run_key(qid), ["status", "query"])
            if self.fail(qid, _expired_reason(status or "expired", raw)):
                swept.append(qid)
            else:
                self.r.zrem(naming.deadlines_key(), qid)
        return swept

    # -- reads --------------------------------------------------------------------------

    def plan(self, query_id: str) -> Plan | None:
        raw = self.r.hget(naming.run_key(query_id), "plan")
        return Plan.model_validate_json(raw) if raw else None

    def steps(self, query_id: str) -> dict[str, StepResult]:
        raw = self.r.hgetall(naming.steps_key(query_id))
        return {k: StepResult.model_validate_json(v) for k, v in raw.items()}

    def step(self, query_id: str, step_id: str) -> StepResult | None:
        raw = self.r.hget(naming.steps_key(query_id), step_id)
        return StepResult.model_validate_json(raw) if raw else None

    def add_llm_call(self, query_id: str, call: LLMCall) -> None:
        """Append an LLM call and add its tokens to the query's usage."""
        key, run = naming.llm_calls_key(query_id), naming.run_key(query_id)
        with self.r.pipeline() as p:
            p.rpush(key, call.model_dump_json())
            p.expire(key, self.ttl_s)
            p.hincrby(run, "usage_prompt_tokens", call.prompt_tokens)
            p.hincrby(run, "usage_completion_tokens", call.completion_tokens)
            p.hincrby(run, "usage_calls", 1)
            p.execute()

    def llm_calls(self, query_id: str) -> list[LLMCall]:
        return [LLMCall.model_validate_json(c)
                for c in self.r.lrange(naming.llm_calls_key(query_id), 0, -1)]

    def put_iteration(self, query_id: str, it: ReactIteration) -> ReactIteration:
        """Store an iteration unless one with its number exists; return the stored one."""
        key = naming.iterations_key(query_id)
        with self.r.pipeline() as p:
            p.hsetnx(key, str(it.n), it.model_dump_json())
            p.hget(key, str(it.n))
            p.expire(key, self.ttl_s)
            _, stored, _ = p.execute()
        return ReactIteration.model_validate_json(stored)

    def iterations(self, query_id: str) -> list[ReactIteration]:
        raw = self.r.hgetall(naming.iterations_key(query_id))
        return sorted((ReactIteration.model_validate_json(v) for v in raw.values()),
                      key=lambda it: it.n)

    def count_finalizer_run(self, query_id: str, task_id: str = "") -> int:
        """Count a finalizer run once per finalize task: a redelivery of the same task
        (its worker died, or a Redis crash lost its acknowledgement) is not a second
        finalizer run; one with another task id is."""
        return int(self._count_once_script(
            keys=[naming.run_key(query_id)],
            args=[f"finalizer_task:{task_id}" if task_id else ""]))

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

    def query(self, query_id: str) -> Query | None:
        """The query as its producer submitted it."""
        raw = self.r.hget(naming.run_key(query_id), "query")
        return Query.model_validate_json(raw) if raw else None

    def status(self, query_id: str) -> str | None:
        return self.r.hget(naming.run_key(query_id), "status")

    def record(self, query_id: str) -> RunRecord | None:
        with self.r.pipeline(transaction=False) as p:
            p.hgetall(naming.run_key(query_id))
            p.hgetall(naming.steps_key(query_id))
            p.hgetall(naming.iterations_key(query_id))
            raw, steps_raw, its_raw = p.execute()
        if not raw or "query" not in raw:
            return None
        # Only the question and mode are read, not the whole Query: a record stays
        # readable when a field of it no longer validates (a deadline stored as null).
        query = json.loads(raw["query"])
        plan = Plan.model_validate_json(raw["plan"]) if raw.get("plan") else None
        steps = {k: StepResult.model_validate_json(v) for k, v in steps_raw.items()}
        plan_ids = [s.id for s in plan.steps] if plan else []
        order = plan_ids + sorted(set(steps) - set(plan_ids), key=step_order)  # ReAct results: R1, R2, …
        return RunRecord(
            query_id=query_id,
            question=query.get("question", ""),
            status=raw.get("status", "queued"),
            planner=plan.planner if plan else raw.get("planner"),
            plan=plan,
            problems=json.loads(raw.get("problems", "[]")),
            repairs=json.loads(raw.get("repairs", "[]")),
            steps=[steps[s] for s in order if s in steps],
            answer=Answer.model_validate_json(raw["answer"]) if raw.get("answer") else None,
            error=raw.get("error"),
            timings={k[2:]: float(v) for k, v in raw.items() if k.startswith("t_")},
            usage={k[6:]: int(v) for k, v in raw.items() if k.startswith("usage_")},
            mode=query.get("mode", "rewoo"),
            # every LLM call counts itself in `usage_calls` (add_llm_call)
            llm_calls=self.llm_calls(query_id) if "usage_calls" in raw else [],
            iterations=sorted((ReactIteration.model_validate_json(v)
                               for v in its_raw.values()), key=lambda it: it.n),
            plan_mode=raw.get("plan_mode"),
            dispatch=self._dispatch(query_id, plan_ids, raw),
            finalizer_runs=int(raw.get("finalizer_runs", 0)),
        )

    def to_finalize(self, query_id: str) -> RunRecord | None:
        """What the finalizer reads of a query, in one round trip: the record with its
        question, mode, status, plan, step results (in plan order) and ReAct iterations,
        without its LLM calls and dispatch lines. None when there is no query."""
        with self.r.pipeline(transaction=False) as p:
            p.hgetall(naming.run_key(query_id))
            p.hgetall(naming.steps_key(query_id))
            p.hgetall(naming.iterations_key(query_id))
            raw, steps_raw, its_raw = p.execute()
        if not raw or "query" not in raw:
            return None
        query = json.loads(raw["query"])
        plan = Plan.model_validate_json(raw["plan"]) if raw.get("plan") else None
        steps = {k: StepResult.model_validate_json(v) for k, v in steps_raw.items()}
        order = [s.id for s in plan.steps] if plan else []
        order += sorted(set(steps) - set(order), key=step_order)
        return RunRecord(
            query_id=query_id, question=query.get("question", ""),
            status=raw.get("status", "queued"), plan=plan, mode=query.get("mode", "rewoo"),
            steps=[steps[s] for s in order if s in steps],
            iterations=sorted((ReactIteration.model_validate_json(v)
                               for v in its_raw.values()), key=lambda it: it.n))

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
