"""The run store: every query's status, plan, step results, answer and timings in Redis.
This module holds its lifecycle (created, moved on, claimed, ended exactly once, swept
past its deadline); the other parts are classes it inherits, each in its module: the
dispatch graph (graph.py), step results (step_results.py), model calls and iterations
(model_calls.py), and whole records (records.py).

Consumes models from `shared.models`; produces `RunRecord`s. Keys (see shared/naming.py):

    chordal:run:{qid}      hash  query, status, t_<status>, plan, problems, repairs,
                                 answer, error, usage, terminal, planned_at,
                                 iterated (it has ReAct iterations), stored_bytes
                                 (the bytes of its step results, held to
                                 max_query_bytes), stored_steps (their ids,
                                 shared/stores/graph.py); while it runs, expires,
                                 g:<step> (the dispatch graph, shared/stores/graph.py),
                                 sent:<step> and delivered:<name>, folded at its end
                                 into dispatch and deliveries (shared/stores/retire.py)
    chordal:steps:{qid}    hash  step_id -> StepResult JSON (first write wins); document
                                 texts by reference and quote (shared/stores/texts.py)
    chordal:done:{qid}     list  one item once the query is terminal (BLMOVE onto itself
                                 to wait),
                                 for DONE_TTL_S seconds
    chordal:deadlines      zset  qid scored by its deadline, until it is terminal
    chordal:llm:{qid}      list  LLMCall JSON per model call (tokens summed in usage_*)
    chordal:react:{qid}    hash  n -> ReactIteration JSON (first write wins)

A query's deadline is `deadline_s` from enqueue; a batch query's (`queue_wait_s` set)
is `queue_wait_s` from enqueue until a worker takes it from the queue, then
`deadline_s` from that moment (`leave_queue`).

The query, plan and answer are kept as JSON without the fields at their defaults.
TTLs are set once per key (shared/stores/retire.py): a running query's keys live until `ttl_s`
(`CHORDAL_RUN_TTL_S`) past its last deadline, a finished query's until then or `ttl_s`
after its end, whichever is later, so a record lives at least `ttl_s` after its last
change.
Terminal transitions are guarded by `terminal`, which the script that ends a query sets
only when it found it unset: a query is answered, failed or cancelled exactly once,
however often a task is redelivered or a cancel repeated.
The scripts that change a status also move the counters of the query's batch (shared/stores/batch_counts.py); the one
that ends a query folds its dispatch graph, send times and delivery counters (fields of
the run hash) into two fields of it and deletes them (shared/stores/retire.py).
"""

from __future__ import annotations

import json
import math
import time

import redis

from shared import naming
from shared.errors import StoreError
from shared.models import Answer, Plan, PlanProblem, Query
from shared.stores.batch_counts import COUNT_LUA, failure_group
from shared.stores.graph import DispatchGraph
from shared.stores.model_calls import ModelCalls
from shared.stores.records import Records
from shared.stores.retire import (DELIVERED, DONE_TTL_S, EXPIRES, RETIRE_LUA, kept_deliveries,
                                   live_fields)
from shared.stores.step_results import StepResults



_COUNT_RUN = """
local function count_run(run, field)
  if field == '' or redis.call('HSETNX', run, field, 1) == 1 then
    return redis.call('HINCRBY', run, 'finalizer_runs', 1)
  end
  return tonumber(redis.call('HGET', run, 'finalizer_runs') or '0')
end
"""
"""One more finalizer run, once per `field` (`finalizer_task:<task id>`), or always when
`field` is ''; returns the runs counted."""
_TERMINATE = """
local h = redis.call('HGETALL', KEYS[1])
local terminal, runs, counted = false, 0, ARGV[4] == ''
for i = 1, #h, 2 do
  if h[i] == 'terminal' then terminal = true
  elseif h[i] == 'finalizer_runs' then runs = tonumber(h[i + 1])
  elseif h[i] == ARGV[4] then counted = true end
end
local set, now, late = {}, nil, false
if not counted then set = {ARGV[4], 1, 'finalizer_runs', runs + 1} end
for i = 5, #ARGV, 2 do
  if ARGV[i] == 't_' .. ARGV[1] then now = ARGV[i + 1] end
end
if ARGV[1] == 'done' and not terminal then
  local due = redis.call('ZSCORE', KEYS[3], ARGV[3])
  late = due and now and tonumber(due) < tonumber(now) or false
end
if terminal or late then
  if #set > 0 then redis.call('HSET', KEYS[1], unpack(set)) end
  if late then return -1 end
  return 0
end
set[#set + 1] = 'terminal'; set[#set + 1] = ARGV[1]
for i = 5, #ARGV, 2 do
  set[#set + 1] = ARGV[i]; set[#set + 1] = ARGV[i + 1]
end
local was = retire(KEYS[1], ARGV[2], set, h, now)
count_known(KEYS[1], ARGV[1], ARGV[2], was['batch'], was['counted'], was['t_queued'], now)
redis.call('ZREM', KEYS[3], ARGV[3])
redis.call('RPUSH', KEYS[2], ARGV[1])
redis.call('EXPIRE', KEYS[2], DONE_TTL)
return 1
""".replace("DONE_TTL", str(DONE_TTL_S))
TERMINATE_LUA = COUNT_LUA + RETIRE_LUA + _TERMINATE
"""End a query through its terminal guard (KEYS: run, done, deadlines; ARGV: status, ttl,
query id, the finalizer run it counts (`finalizer_task:<task id>`, counted as
`count_run` counts it, whether or not this run ends the query) or '', then the fields to
set): 1 when it ended, 0 when it was terminal, -1 when an answer (`done`) came past the
query's deadline, which ends nothing (the caller fails it, as the sweeper would have, so
whether a late answer counts never depends on when the sweeper last ran). The run hash
is read once: the guard, the count and the fold (`retire`) use that read, and the
count, the guard and the fields are written in the fold's one HSET."""
CANCEL_LUA = COUNT_LUA + RETIRE_LUA + "local function terminate(KEYS, ARGV)" \
    + _TERMINATE + """end
local out = {}
for j = 1, (#KEYS - 1) / 2 do
  local run, done = KEYS[2 * j], KEYS[2 * j + 1]
  if redis.call('EXISTS', run) == 0 then out[j] = -1 else
    out[j] = terminate({run, done, KEYS[1]}, {'cancelled', ARGV[1], ARGV[3 + j], '', 'status',
                       'cancelled', 't_cancelled', ARGV[2], 'error', ARGV[3]})
  end
end
return out
"""
"""TERMINATE of many queries as `cancelled` (KEYS: the deadlines, then each query's run
and done keys; ARGV: ttl, time, reason, then the ids): per query 1, 0 when it was
terminal, -1 when its record is gone (nothing is written)."""
_MOVE = COUNT_LUA + """
local function move(KEYS, ARGV, was, set)
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
  redis.call('HSET', KEYS[1], 'status', ARGV[1], ARGV[2], ARGV[3], unpack(set))
  count_known(KEYS[1], ARGV[1], ARGV[4], was[4], was[5], was[6], ARGV[3])
  return planned
end
local fields = {'status', 'planned_at', 'terminal', 'batch', 'counted', 't_queued'}
"""
"""Lua: `move(KEYS, ARGV, was, set)` makes the status change of STATUS_LUA (`was`: the run
hash's `fields` as read; `set`: more fields written with the status)."""
STATUS_LUA = _MOVE + "return move(KEYS, ARGV, redis.call('HMGET', KEYS[1], unpack(fields)), {})"
"""A status change; with ARGV[5] (a run deadline, seconds) and ARGV[6] (the query id),
the query's first move out of `queued` also records `planned_at` and re-scores its
deadline to `planned_at` + ARGV[5], unless it waited past its queue-wait deadline (-1,
nothing changed). Returns 0 for a terminal query, else `planned_at` (now, when none is
recorded). No TTL is renewed: a query's run hash lives past its last deadline from its
creation (CREATE_LUA)."""
FIRST_DELIVERY_LUA = _MOVE + """
local args, counter = {unpack(ARGV, 2)}, ARGV[1]
fields[#fields + 1] = counter
local was = redis.call('HMGET', KEYS[1], unpack(fields))
local n = tonumber(was[7] or '0') + 1
if n == 1 and not was[3] then return {n, move(KEYS, args, was, {counter, n})} end
redis.call('HSET', KEYS[1], counter, n)
return {n, 0}
"""
"""One more delivery counted in run-hash field ARGV[1] and, for the first of a query
not terminal, STATUS_LUA's change (ARGV[2:] its ARGV), the count written with the
status: {deliveries, STATUS_LUA's reply}, or {deliveries, 0} when nothing moved."""


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


_COUNT_ONCE = _COUNT_RUN + "return count_run(KEYS[1], ARGV[1])"
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


def _finalizer_run_field(task_id: str) -> str:
    """The run-hash field that says finalize task `task_id` was counted."""
    return f"finalizer_task:{task_id}"


CHUNK = 1000
"""Queries per script call of `cancel` (each call holds Redis a few milliseconds)."""


class RunStore(DispatchGraph, StepResults, ModelCalls, Records):
    def __init__(self, client: redis.Redis, ttl_s: int, text_cache_s: int = 3600,
                 max_step_bytes: int = 64 * 1024, max_query_bytes: int = 256 * 1024):
        self.r = client
        self.ttl_s = ttl_s
        self.text_cache_s = text_cache_s
        """How long a shared cached copy of a document text lives (shared/stores/texts.py)."""
        self.max_step_bytes = max_step_bytes
        self.max_query_bytes = max_query_bytes
        """The most one step result, and all of a query's step results, may store."""
        self._create_script = client.register_script(CREATE_LUA)
        self._count_once_script = client.register_script(_COUNT_ONCE)
        self._terminate_script = client.register_script(TERMINATE_LUA)
        self._cancel_script = client.register_script(CANCEL_LUA)
        self._status_script = client.register_script(STATUS_LUA)
        self._first_delivery_script = client.register_script(FIRST_DELIVERY_LUA)
        self._graph_scripts()
        self._step_scripts()
        self._record_scripts()

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
        its `planned_at`, or None when it has ended (nothing changed). A query with a
        queue-wait budget leaves `queued` once: its deadline becomes `planned_at` +
        `deadline_s`, in the same script; taken past its queue-wait deadline it is failed
        saying so instead, and None returned."""
        keys, args = self._leaving(query, status)
        return self._left(query, self._status_script(keys=keys, args=args))

    def count_and_leave_queue(self, query: Query, status: str,
                              action_id: str) -> tuple[int, Query | None]:
        """`count_delivery(action_id)` (a task of `query`) and, for its first delivery,
        `leave_queue(query, status)`, in one script: the deliveries counted, and what
        `leave_queue` returns (None for a later delivery: nothing moved)."""
        keys, args = self._leaving(query, status)
        name = action_id.partition(":")[2]
        delivery, planned = self._first_delivery_script(keys=keys, args=[DELIVERED + name, *args])
        return int(delivery), (self._left(query, planned) if int(delivery) == 1 else None)

    def _leaving(self, query: Query, status: str) -> tuple[list[str], list]:
        """The status script's keys and args for `leave_queue`."""
        args = [status, f"t_{status}", time.time(), self.ttl_s]
        if query.queue_wait_s is None:
            return [naming.run_key(query.id)], args
        return ([naming.run_key(query.id), naming.deadlines_key()],
                [*args, query.deadline_s, query.id])

    def _left(self, query: Query, planned) -> Query | None:
        """What `leave_queue` returns for the status script's reply `planned`."""
        if planned == -1:
            self.fail(query.id, _expired_reason("queued", query.model_dump_json()))
            return None
        if not planned:
            return None
        if query.queue_wait_s is None:
            return query
        return query.model_copy(update={"planned_at": float(planned)})

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

    def _terminate(self, query_id: str, status: str, fields: dict,
                   finalizer_task: str | None = None) -> int:
        # One script, so a waiter never sees `terminal` before the answer and status.
        flat = [str(x) for kv in {**fields, "status": status, f"t_{status}": time.time()}
                .items() for x in kv]
        keys = [naming.run_key(query_id), naming.done_key(query_id), naming.deadlines_key()]
        run = "" if finalizer_task is None else _finalizer_run_field(finalizer_task)
        return int(self._terminate_script(keys=keys,
                                          args=[status, self.ttl_s, query_id, run, *flat]))

    def finish(self, query_id: str, answer: Answer, planner: str | None = None,
               finalizer_task: str | None = None) -> bool:
        """Store the answer and mark the query `done`; False if it was already terminal,
        or if its deadline has passed (then it is failed as past its deadline instead).
        `planner`: who answered without a plan (the heuristic planner, abstaining).
        `finalizer_task`: the finalize task that rendered it, its run counted in the same
        script as `count_finalizer_run` counts it (whether or not it ends the query)."""
        fields = {"answer": answer.model_dump_json(exclude_defaults=True)}
        if planner:
            fields["planner"] = planner
        ended = self._terminate(query_id, "done", fields, finalizer_task)
        if ended == -1:
            self._fail_expired(query_id)
        return ended == 1

    def fail(self, query_id: str, error: str, problems: list[PlanProblem] | None = None) -> bool:
        """Mark the query `failed` with the reason; False if it was already terminal."""
        fields = {"error": error}
        if problems:
            fields["problems"] = json.dumps([p.model_dump() for p in problems])
        fields["failure"] = failure_group(error, fields.get("problems"))
        return self._terminate(query_id, "failed", fields) == 1

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
            if self._fail_expired(qid):
                swept.append(qid)
            else:
                self.r.zrem(naming.deadlines_key(), qid)
        return swept

    def _fail_expired(self, query_id: str) -> bool:
        """Fail a query past its deadline, saying which budget ran out."""
        status, raw = self.r.hmget(naming.run_key(query_id), ["status", "query"])
        return self.fail(query_id, _expired_reason(status or "expired", raw))

    # -- reads --------------------------------------------------------------------------

    def plan(self, query_id: str) -> Plan | None:
        raw = self.r.hget(naming.run_key(query_id), "plan")
        return Plan.model_validate_json(raw) if raw else None

    def count_finalizer_run(self, query_id: str, task_id: str = "") -> int:
        """Count a finalizer run once per finalize task: a redelivery of the same task
        (its worker died, or a Redis crash lost its acknowledgement) is not a second
        finalizer run; one with another task id is."""
        return int(self._count_once_script(
            keys=[naming.run_key(query_id)],
            args=[_finalizer_run_field(task_id) if task_id else ""]))

    def query(self, query_id: str) -> Query | None:
        """The query as its producer submitted it."""
        raw = self.r.hget(naming.run_key(query_id), "query")
        return Query.model_validate_json(raw) if raw else None

    def status(self, query_id: str) -> str | None:
        return self.r.hget(naming.run_key(query_id), "status")
