"""Batches in the run store: which queries belong to a named batch, created many at a
time, and read back in chunks (one pipelined round trip per chunk, never one per query).

Consumes `Query`s and a batch name; produces per-query creation outcomes and rows of
run-store fields. Keys (names in shared/naming.py), besides the run store's own:

    chordal:batch:{name}   zset  query id -> its line in the batch file
    chordal:batches        zset  batch name -> time it was last enqueued to

Both live `ttl_s` after the last enqueue, like the queries' records. A query created
here carries `batch` (the batch that created it) and, once its `chordal.plan` message
is out, `sent` (unix time) in its `chordal:run:{qid}` hash; its batch's counters
(shared/stores/batch_counts.py) count it `queued` in the same script.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator

import redis

from shared import naming
from shared.stores.batch_counts import COUNT_LUA
from shared.models import Query

CHUNK = 1000
"""Queries per pipelined round trip."""

# One query: join the batch, and create the record unless its id exists (then say
# what it is). Atomic per query, so no reader sees a record without its status.
CREATE_LUA = COUNT_LUA + """
redis.call('ZADD', KEYS[3], 'NX', ARGV[7], ARGV[5])
if redis.call('HSETNX', KEYS[1], 'query', ARGV[1]) == 1 then
  redis.call('HSET', KEYS[1], 'status', 'queued', 't_queued', ARGV[2], 'batch', ARGV[6])
  redis.call('EXPIRE', KEYS[1], ARGV[4])
  count(KEYS[1], 'queued', ARGV[4])
  redis.call('ZADD', KEYS[2], ARGV[3], ARGV[5])
  return 'new'
end
local f = redis.call('HMGET', KEYS[1], 'status', 'sent', 'batch')
if f[1] == 'queued' and not f[2] and f[3] == ARGV[6] then
  redis.call('ZADD', KEYS[2], ARGV[3], ARGV[5])
  return 'resend'
end
if redis.call('HEXISTS', KEYS[1], 'terminal') == 1 then return 'finished' end
return 'running'
"""
"""Outcomes: `new` (created: send it), `resend` (created by an earlier run of this batch
that stopped before sending it: send it), `running` or `finished` (submitted before)."""


class BatchStore:
    def __init__(self, client: redis.Redis, ttl_s: int):
        self.r = client
        self.ttl_s = ttl_s
        self._create = client.register_script(CREATE_LUA)

    @classmethod
    def from_url(cls, url: str, ttl_s: int) -> BatchStore:
        return cls(redis.Redis.from_url(url, decode_responses=True, socket_timeout=30), ttl_s)

    # -- writes -------------------------------------------------------------------------

    def create(self, batch: str, rows: list[tuple[int, Query]]) -> list[str]:
        """Create each (line, query) as `queued` in `batch`; one outcome per row."""
        now = time.time()
        key = naming.batch_key(batch)
        with self.r.pipeline(transaction=False) as p:
            for line, q in rows:
                created = q.created_at or now
                self._create(keys=[naming.run_key(q.id), naming.deadlines_key(), key],
                             args=[q.model_dump_json(exclude_defaults=True), created,
                                   created + q.first_deadline_s, self.ttl_s, q.id, batch,
                                   line], client=p)
            p.expire(key, self.ttl_s)
            p.zadd(naming.batches_key(), {batch: now})
            p.expire(naming.batches_key(), self.ttl_s)
            return p.execute()[:len(rows)]

    def mark_sent(self, query_ids: Iterable[str]) -> None:
        """Note that the `chordal.plan` message of each query is out."""
        now = time.time()
        with self.r.pipeline(transaction=False) as p:
            for qid in query_ids:
                p.hset(naming.run_key(qid), "sent", now)
            p.execute()

    # -- reads --------------------------------------------------------------------------

    def exists(self, batch: str) -> bool:
        return bool(self.r.exists(naming.batch_key(batch)))

    def size(self, batch: str) -> int:
        return int(self.r.zcard(naming.batch_key(batch)))

    def names(self) -> list[str]:
        """Every batch still in the store, oldest enqueue first."""
        names = self.r.zrange(naming.batches_key(), 0, -1)
        with self.r.pipeline(transaction=False) as p:
            for name in names:
                p.exists(naming.batch_key(name))
            alive = p.execute()
        gone = [n for n, ok in zip(names, alive) if not ok]
        if gone:
            try:
                self.r.zrem(naming.batches_key(), *gone)
            except redis.exceptions.NoPermissionError:
                pass  # a read-only user (`monitoring`): a producer forgets them later
        return [n for n, ok in zip(names, alive) if ok]

    def members(self, batch: str, chunk: int = CHUNK) -> Iterator[list[tuple[str, int]]]:
        """(query id, line) of every query in `batch`, in line order, `chunk` at a time."""
        key, start = naming.batch_key(batch), 0
        while True:
            page = self.r.zrange(key, start, start + chunk - 1, withscores=True)
            if not page:
                return
            yield [(qid, int(line)) for qid, line in page]
            start += chunk

    def fields(self, query_ids: list[str], names: tuple[str, ...]) -> list[list[str | None]]:
        """HMGET `names` of each query's run record, pipelined `CHUNK` at a time; all
        None for a query whose record is gone (expired)."""
        rows: list[list[str | None]] = []
        for i in range(0, len(query_ids), CHUNK):
            with self.r.pipeline(transaction=False) as p:
                for qid in query_ids[i:i + CHUNK]:
                    p.hmget(naming.run_key(qid), names)
                rows.extend(p.execute())
        return rows

    def unfinished(self, query_ids: list[str]) -> list[str]:
        """The ids among `query_ids` whose query is neither terminal nor gone."""
        rows = self.fields(query_ids, ("terminal", "status"))
        return [qid for qid, (terminal, status) in zip(query_ids, rows)
                if status is not None and not terminal]
