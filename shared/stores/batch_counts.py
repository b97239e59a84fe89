"""Batch counters: kept by the Lua scripts that change a batch query's state, so what
`chordal status`, the batches page and `GET /batches/{name}` show costs the same for
100,000 queries as for 10.

`COUNT_LUA` defines `count(run_key, status, ttl)`, and `count_known(run_key, status,
ttl, batch, counted, t_queued, now)` for a script that read those fields already; it is
prepended to the batch store's
CREATE and the run store's STATUS and TERMINATE scripts and called once the state
changed, so the counters move in the same round trip as the record. It reads `batch`
from the run hash (a query of no batch counts nowhere; the counter keys are built in
the script, so the store needs a Redis that is not a cluster) and `counted`, the status
the query is counted under: a redelivered transition to the status it already has
counts nothing. Keys (shared/naming.py), all living `ttl_s` after the batch's last change:

    chordal:batch-counts:{name}   hash  status -> queries, first_queued, last_finished
    chordal:batch-open:{name}     zset  unfinished query id -> time it was queued
    chordal:batch-latency:{name}  hash  b{k} -> answers whose queued-to-done latency in
                                        ms is in [1.1^k, 1.1^(k+1)); s{sec % 60} ->
                                        `sec:answers` (the last minute's answers)
    chordal:batch-failures:{name} hash  n:{group} -> failed queries, e:{group} -> the
                                        first one's error; a group is `reason␟code`
                                        (`failure_group`), kept in the record's `failure`

Latency percentiles are read from the buckets, so they are within 10% (the bucket's
upper bound is shown). `recount` rebuilds all three from the records (a repair).
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from dataclasses import dataclass, field

import redis

from shared import naming
from shared.models import TERMINAL

BASE = 1.1
"""Width of a latency bucket: each is 10% wider than the one before."""
RECENT_S = 60
CHUNK = 1000

COUNT_LUA = """
local function count_known(run, new, ttl, batch, prev, queued, now)
  if not batch or prev == new then return end
  local qid = string.sub(run, RUN_PREFIX_LEN + 1)
  local counts, open, lat = 'COUNTS' .. batch, 'OPEN' .. batch, 'LATENCY' .. batch
  local fails = 'FAILURES' .. batch
  if prev then redis.call('HINCRBY', counts, prev, -1) end
  redis.call('HINCRBY', counts, new, 1)
  redis.call('HSET', run, 'counted', new)
  if new == 'queued' and queued then
    redis.call('ZADD', open, queued, qid)
    local first = redis.call('HGET', counts, 'first_queued')
    if not first or tonumber(queued) < tonumber(first) then
      redis.call('HSET', counts, 'first_queued', queued)
    end
  elseif (TERMINAL_SET)[new] and now then
    redis.call('ZREM', open, qid)
    local last = redis.call('HGET', counts, 'last_finished')
    if not last or tonumber(now) > tonumber(last) then
      redis.call('HSET', counts, 'last_finished', now)
    end
    if new == 'failed' then
      local g = redis.call('HGET', run, 'failure')
      if g then
        redis.call('HINCRBY', fails, 'n:' .. g, 1)
        if redis.call('HEXISTS', fails, 'e:' .. g) == 0 then
          redis.call('HSET', fails, 'e:' .. g, redis.call('HGET', run, 'error') or '')
        end
        redis.call('EXPIRE', fails, ttl)
      end
    end
    if new == 'done' and queued then
      local ms = math.max(1, (tonumber(now) - tonumber(queued)) * 1000)
      redis.call('HINCRBY', lat, 'b' .. math.floor(math.log(ms) / math.log(BASE)), 1)
      local sec = math.floor(tonumber(now))
      local slot = 's' .. (sec % RECENT)
      local was = redis.call('HGET', lat, slot)
      local n = 1
      if was and string.sub(was, 1, string.find(was, ':') - 1) == tostring(sec) then
        n = tonumber(string.sub(was, string.find(was, ':') + 1)) + 1
      end
      redis.call('HSET', lat, slot, sec .. ':' .. n)
    end
  end
  redis.call('EXPIRE', counts, ttl)
  redis.call('EXPIRE', open, ttl)
  redis.call('EXPIRE', lat, ttl)
end
local function count(run, new, ttl)
  local f = redis.call('HMGET', run, 'batch', 'counted', 't_queued', 't_' .. new)
  count_known(run, new, ttl, f[1], f[2], f[3], f[4])
end
""".replace("RUN_PREFIX_LEN", str(len(naming.run_key("")))) \
   .replace("'COUNTS'", repr(naming.batch_counts_key(""))) \
   .replace("'OPEN'", repr(naming.batch_open_key(""))) \
   .replace("'LATENCY'", repr(naming.batch_latency_key(""))) \
   .replace("'FAILURES'", repr(naming.batch_failures_key(""))) \
   .replace("TERMINAL_SET", "{" + ", ".join(f"{s}=true" for s in TERMINAL) + "}") \
   .replace("BASE)", f"{BASE})").replace("RECENT)", f"{RECENT_S})")

REASON_CHARS = 120
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_CODE = re.compile(r"\b(?!CHORDAL_)(?:[A-Z][A-Z0-9]*_[A-Z0-9_]+|[A-Z]\w*(?:Error|Exception|Exceeded))\b")
"""A step error code (`REDELIVERY_CAP`) or an exception name; not a setting's name."""
SEP = "\x1f"
"""Between a failure group's reason and code."""


def reason_and_code(error: str | None, problems: str | None) -> tuple[str, str]:
    """The group a failed query belongs to: its error up to the first colon, numbers
    written `N`; the codes of the plan problems it names, else the first step error code
    or exception name in the error, else `-`."""
    error = error or "no reason recorded"
    head = _NUMBER.sub("N", error.split(": ", 1)[0].strip())
    if len(head) > REASON_CHARS:
        head = head[:REASON_CHARS - 1] + "…"
    try:
        codes = [p.get("code") for p in json.loads(problems or "[]") if isinstance(p, dict)]
    except ValueError:
        codes = []
    if any(codes):
        return head, ", ".join(dict.fromkeys(c for c in codes if c))
    found = _CODE.search(error)
    return head, found.group() if found else "-"


def failure_group(error: str | None, problems: str | None) -> str:
    """The `failure` field of a failed record: its group as one string."""
    return SEP.join(reason_and_code(error, problems))


_MARK = """
for i = 1, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 1 then redis.call('HSET', KEYS[i], 'counted', ARGV[i]) end
end
"""
"""Each record (KEYS) counted under its status (ARGV), unless it expired meanwhile."""


@dataclass
class BatchCounts:
    """One batch's counters as read in one round trip."""

    total: int = 0
    """Queries in the batch."""
    counts: Counter = field(default_factory=Counter)
    """Status -> queries counted in it."""
    first_queued: float | None = None
    last_finished: float | None = None
    buckets: dict[int, int] = field(default_factory=dict)
    recent: dict[int, int] = field(default_factory=dict)
    """Unix second -> answers in it, over about the last minute."""
    oldest: tuple[str, float] | None = None
    """(id, time queued) of the unfinished query queued first."""
    failures: dict[tuple[str, str], tuple[int, str]] = field(default_factory=dict)
    """(reason, code) -> (failed queries, the first one's error)."""

    def percentile(self, p: float) -> float | None:
        """Nearest-rank percentile of the queued-to-done latency in seconds (the upper
        bound of its bucket); None before the first answer."""
        n = sum(self.buckets.values())
        if not n:
            return None
        rank, seen = max(1, math.ceil(p / 100 * n)), 0
        for k in sorted(self.buckets):
            seen += self.buckets[k]
            if seen >= rank:
                return BASE ** (k + 1) / 1000
        return None  # unreachable: the ranks sum to n

    def answers_since(self, t: float) -> int:
        return sum(n for sec, n in self.recent.items() if sec > t)


def read_counts(r: redis.Redis, batch: str) -> BatchCounts:
    """The counters of `batch` in one pipelined round trip."""
    with r.pipeline(transaction=False) as p:
        p.zcard(naming.batch_key(batch))
        p.hgetall(naming.batch_counts_key(batch))
        p.hgetall(naming.batch_latency_key(batch))
        p.zrange(naming.batch_open_key(batch), 0, 0, withscores=True)
        p.hgetall(naming.batch_failures_key(batch))
        total, counts, latency, oldest, failures = p.execute()
    c = BatchCounts(total=int(total))
    for k, v in counts.items():
        if k == "first_queued":
            c.first_queued = float(v)
        elif k == "last_finished":
            c.last_finished = float(v)
        elif int(v):
            c.counts[k] = int(v)
    for k, v in latency.items():
        if k.startswith("b"):
            c.buckets[int(k[1:])] = int(v)
        elif k.startswith("s"):
            sec, n = v.split(":")
            c.recent[int(sec)] = int(n)
    if oldest:
        c.oldest = (oldest[0][0], float(oldest[0][1]))
    for k, v in failures.items():
        if k.startswith("n:"):
            group = tuple(k[2:].split(SEP, 1) + ["-"])[:2]
            c.failures[group] = (int(v), failures.get("e:" + k[2:], ""))
    return c


def recount(r: redis.Redis, batch: str, ttl_s: int) -> BatchCounts:
    """Rebuild the counters of `batch` from its records, `CHUNK` records a round trip,
    and mark each record counted under its status. Transitions during the recount may
    be missed: run it when the batch is quiet (or again)."""
    counts: Counter = Counter()
    opened: dict[str, float] = {}
    buckets: Counter = Counter()
    recent: dict[int, tuple[int, int]] = {}
    fails: dict[str, int | str] = {}
    first, last = math.inf, 0.0
    mark = r.register_script(_MARK)
    key, start = naming.batch_key(batch), 0
    while ids := r.zrange(key, start, start + CHUNK - 1):
        start += CHUNK
        with r.pipeline(transaction=False) as p:
            for qid in ids:
                p.hmget(naming.run_key(qid), ["status", "error", "problems", "t_queued",
                                              *(f"t_{s}" for s in TERMINAL)])
            rows = p.execute()
        marks: dict[str, str] = {}
        for qid, (status, error, problems, queued, *ends) in zip(ids, rows):
            if status is None:
                continue
            counts[status] += 1
            marks[naming.run_key(qid)] = status
            queued_at = float(queued) if queued else None
            if queued_at is not None:
                first = min(first, queued_at)
            end = dict(zip(TERMINAL, ends)).get(status)
            if status not in TERMINAL:
                if queued_at is not None:
                    opened[qid] = queued_at
                continue
            if end:
                last = max(last, float(end))
            if status == "failed":
                group = failure_group(error, problems)
                fails[f"n:{group}"] = fails.get(f"n:{group}", 0) + 1
                fails.setdefault(f"e:{group}", error or "")
            if status == "done" and end and queued_at is not None:
                ms = max(1.0, (float(end) - queued_at) * 1000)
                buckets[math.floor(math.log(ms) / math.log(BASE))] += 1
                sec = math.floor(float(end))
                slot = recent.get(sec % RECENT_S)
                if slot is None or slot[0] < sec:
                    recent[sec % RECENT_S] = (sec, 1)
                elif slot[0] == sec:
                    recent[sec % RECENT_S] = (sec, slot[1] + 1)
        if marks:
            mark(keys=list(marks), args=list(marks.values()))
    fields = {k: v for k, v in counts.items()}
    if first < math.inf:
        fields["first_queued"] = first
    if last:
        fields["last_finished"] = last
    lat = {f"b{k}": n for k, n in buckets.items()}
    lat.update({f"s{slot}": f"{sec}:{n}" for slot, (sec, n) in recent.items()})
    ck, ok, lk, fk = (naming.batch_counts_key(batch), naming.batch_open_key(batch),
                      naming.batch_latency_key(batch), naming.batch_failures_key(batch))
    with r.pipeline(transaction=True) as p:
        p.delete(ck, ok, lk, fk)
        if fails:
            p.hset(fk, mapping=fails)
        if fields:
            p.hset(ck, mapping=fields)
        items = list(opened.items())
        for i in range(0, len(items), 10 * CHUNK):
            p.zadd(ok, dict(items[i:i + 10 * CHUNK]))
        if lat:
            p.hset(lk, mapping=lat)
        for k in (ck, ok, lk, fk):
            p.expire(k, ttl_s)
        p.execute()
    return read_counts(r, batch)
