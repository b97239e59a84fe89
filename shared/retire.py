"""What a finished query keeps of the keys only a running query needs: consumes the run
hash and its working keys at the terminal transition, produces two compact fields of
the run hash that the record reads instead (`kept_dispatch`, `kept_deliveries`).

`RETIRE_LUA` defines `retire(run_key)`; the run store's TERMINATE script calls it in
the same round trip that ends the query, and the graph's ADD and CLOSE scripts call it
when they write to a query that is already terminal. It folds

    chordal:graph:{qid}           the dispatch graph (step id -> GraphStep JSON)
    chordal:dispatched:{qid}      when each step was sent
    chordal:deliveries:{qid}:*    the redelivery counters (plan, each step, ReAct n)

into the run hash's `dispatch` (`id attempt reply_started_at dispatched_at`, one row
per step, `;` between rows, `null` for none) and `deliveries` (`plan=1 E1=2 …`), then
deletes them: what the graph and timeline pages, `chordal show` and
`RunStore.deliveries` read stays, about 50 bytes a step instead of about 500. Folding
again merges (a row already kept keeps its first send time; counts add up): a plan
closed after its query was cancelled is folded by the CLOSE script. A step task sent,
or delivered again, in the moment its query ends writes its send time or counter after
the fold; that key lives out its TTL. The keys are built in the script, like the batch
counters' (a Redis that is not a cluster).

The done list (`chordal:done:{qid}`, pushed at the terminal transition to wake waiters
blocked on it) lives `DONE_TTL_S`: a waiter checks `terminal` before every BLPOP of at
most a second, so the list only spares blocked waiters that second.
"""

from __future__ import annotations

from shared import queues

DONE_TTL_S = 2
"""Seconds a query's done list lives after it is pushed."""

RETIRE_LUA = """
local function retire(run)
  local qid = string.sub(run, RUN_PREFIX_LEN + 1)
  local graph, sent_key = 'GRAPH' .. qid, 'SENT' .. qid
  local rows, order = {}, {}
  for row in string.gmatch(redis.call('HGET', run, 'dispatch') or '', '[^;]+') do
    local id, attempt, started, at = string.match(row, '^(%S+) (%S+) (%S+) (%S+)$')
    if id then rows[id] = {attempt, started, at}; order[#order + 1] = id end
  end
  local g = redis.call('HGETALL', graph)
  for i = 1, #g, 2 do
    local attempt, started = string.match(g[i + 1],
      '"attempt":(%d+),"reply_started_at":([^,}]+)}$')
    if not rows[g[i]] then order[#order + 1] = g[i] end
    rows[g[i]] = {attempt or '1', started or 'null', rows[g[i]] and rows[g[i]][3] or 'null'}
  end
  local s = redis.call('HGETALL', sent_key)
  for i = 1, #s, 2 do
    local row = rows[s[i]]
    if row and row[3] == 'null' then row[3] = s[i + 1] end
  end
  local out = {}
  for _, id in ipairs(order) do out[#out + 1] = id .. ' ' .. table.concat(rows[id], ' ') end
  if #out > 0 then redis.call('HSET', run, 'dispatch', table.concat(out, ';')) end
  local counts, names = {}, {}
  for part in string.gmatch(redis.call('HGET', run, 'deliveries') or '', '%S+') do
    local id, n = string.match(part, '^(.+)=(%d+)$')
    if id then counts[id] = tonumber(n); names[#names + 1] = id end
  end
  local ids = {'plan'}
  for _, id in ipairs(order) do ids[#ids + 1] = id end
  local last = 0
  for _, n in ipairs(redis.call('HKEYS', 'REACT' .. qid)) do
    last = math.max(last, tonumber(n) or 0)
  end
  for n = 1, last + 1 do ids[#ids + 1] = 'react:' .. n end
  local gone = {graph, sent_key}
  for _, id in ipairs(ids) do
    local key = 'DELIVERIES' .. qid .. ':' .. id
    local n = redis.call('GET', key)
    if n then
      if not counts[id] then names[#names + 1] = id end
      counts[id] = (counts[id] or 0) + tonumber(n)
      gone[#gone + 1] = key
    end
  end
  local folded = {}
  for _, id in ipairs(names) do folded[#folded + 1] = id .. '=' .. counts[id] end
  if #folded > 0 then redis.call('HSET', run, 'deliveries', table.concat(folded, ' ')) end
  redis.call('DEL', unpack(gone))
end
""".replace("RUN_PREFIX_LEN", str(len(queues.run_key("")))) \
   .replace("'GRAPH'", repr(queues.graph_key(""))) \
   .replace("'SENT'", repr(queues.dispatched_key(""))) \
   .replace("'REACT'", repr(queues.iterations_key(""))) \
   .replace("'DELIVERIES'", repr(queues.deliveries_key("")))


def _number(text: str) -> float | None:
    return None if text == "null" else float(text)


def kept_dispatch(field: str | None) -> dict[str, tuple[int, float | None, float | None]]:
    """The run hash's `dispatch` field: step id -> (attempt, reply_started_at,
    dispatched_at)."""
    out = {}
    for row in (field or "").split(";"):
        parts = row.split(" ")
        if len(parts) == 4:
            out[parts[0]] = (int(parts[1]), _number(parts[2]), _number(parts[3]))
    return out


def kept_deliveries(field: str | None) -> dict[str, int]:
    """The run hash's `deliveries` field: `plan`, a step id or `react:N` -> deliveries."""
    out = {}
    for part in (field or "").split():
        name, _, n = part.rpartition("=")
        if name and n.isdigit():
            out[name] = int(n)
    return out
