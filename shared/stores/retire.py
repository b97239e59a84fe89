"""What a finished query keeps of what only a running query needs: consumes the run
hash (its dispatch graph among its fields) at the terminal transition, produces two
compact fields of the run hash that the record reads instead (`dispatch`, `deliveries`).

`RETIRE_LUA` defines `retire(run_key, ttl, set, h, now)`; the run store's TERMINATE script
calls it in the same round trip that ends the query (`set`: the fields that end it,
written in the fold's one HSET; `h`: the run hash as that script read it (HGETALL's
reply), or nil to read it here; `now`: the time of the end; it returns the run hash as
it found it, field -> value), and the
graph's CLOSE script calls it when it writes to a query that is already terminal. It
folds the run hash's

    g:{step}                      the dispatch graph (step id -> GraphStep JSON)
    sent:{step}                   when each step was sent
    delivered:{name}              the redelivery counters (plan, each step, ReAct react:N)
    expires                       when the running query's keys expire (below)

into the run hash's `dispatch` (`id attempt reply_started_at dispatched_at`, one row
per step, `;` between rows, `null` for none) and `deliveries` (`plan=1 E1=2 …`), then
deletes those fields, in the HDEL of the fold: what the graph and timeline pages,
`chordal show` and `RunStore.deliveries` read stays, about 50 bytes a step instead of
about 500.
Folding again merges (a row already kept keeps its first send time; counts add up): a
plan closed after its query was cancelled is folded by the CLOSE script. A step task
sent, or delivered again, in the moment its query ends writes its send time or counter
after the fold, into the run hash, where the readers add it to what was folded.

TTLs are set once per key, not per write: the run hash gets `CHORDAL_RUN_TTL_S` past
the query's last deadline when it is created (`expires`: that moment), the steps hash
expires then too, set as its first result is stored; the dispatch graph is fields of
the run hash and needs no TTL of its own. A query that ends before
`expires` less `CHORDAL_RUN_TTL_S` (every query that ends by its last deadline) keeps
that TTL, at least `CHORDAL_RUN_TTL_S` from its end; `retire` sets the run and steps
hashes to `CHORDAL_RUN_TTL_S` from the end of any other (one swept a moment past its
deadline, a record without `expires`). So no key of a query expires before
`CHORDAL_RUN_TTL_S` after its last change, and none is renewed by every write.

The done list (`chordal:done:{qid}`, pushed at the terminal transition to wake waiters
blocked on it) lives `DONE_TTL_S`: a waiter checks `terminal` before every wait of at
most a second, so the list only spares blocked waiters that second.
"""

from __future__ import annotations

from shared import naming

DONE_TTL_S = 2
"""Seconds a query's done list lives after it is pushed."""
GRAPH = "g:"
"""Run-hash field prefix: `g:{step id}` -> the dispatch graph's GraphStep JSON of the
step (shared/stores/graph.py), while the query runs."""

RETIRE_LUA = """
local function retire(run, ttl, fields, h, now)
  local qid = string.sub(run, RUN_PREFIX_LEN + 1)
  local found, g = {}, {}
  h = h or redis.call('HGETALL', run)
  local rows, order, sent, counts, names, gone = {}, {}, {}, {}, {}, {}
  local kept_dispatch, kept_deliveries = '', ''
  for i = 1, #h, 2 do
    local f, v = h[i], h[i + 1]
    found[f] = v
    if f == 'dispatch' then kept_dispatch = v
    elseif f == 'deliveries' then kept_deliveries = v
    elseif f == 'expires' then gone[#gone + 1] = f
    elseif string.sub(f, 1, GRAPH_LEN) == 'GRAPH' then
      g[#g + 1] = string.sub(f, GRAPH_LEN + 1); g[#g + 1] = v
      gone[#gone + 1] = f
    elseif string.sub(f, 1, 5) == 'sent:' then
      sent[string.sub(f, 6)] = v; gone[#gone + 1] = f
    elseif string.sub(f, 1, 10) == 'delivered:' then
      local id = string.sub(f, 11)
      if not counts[id] then names[#names + 1] = id end
      counts[id] = (counts[id] or 0) + tonumber(v); gone[#gone + 1] = f
    end
  end
  for row in string.gmatch(kept_dispatch, '[^;]+') do
    local id, attempt, started, at = string.match(row, '^(%S+) (%S+) (%S+) (%S+)$')
    if id then rows[id] = {attempt, started, at}; order[#order + 1] = id end
  end
  for i = 1, #g, 2 do
    local attempt, started = string.match(g[i + 1],
      '"attempt":(%d+),"reply_started_at":([^,}]+)}$')
    if not rows[g[i]] then order[#order + 1] = g[i] end
    rows[g[i]] = {attempt or '1', started or 'null', rows[g[i]] and rows[g[i]][3] or 'null'}
  end
  for id, at in pairs(sent) do
    local row = rows[id]
    if row and row[3] == 'null' then row[3] = at end
  end
  local out = {}
  for _, id in ipairs(order) do out[#out + 1] = id .. ' ' .. table.concat(rows[id], ' ') end
  for part in string.gmatch(kept_deliveries, '%S+') do
    local id, n = string.match(part, '^(.+)=(%d+)$')
    if id then
      if not counts[id] then names[#names + 1] = id end
      counts[id] = (counts[id] or 0) + tonumber(n)
    end
  end
  local folded = {}
  for _, id in ipairs(names) do folded[#folded + 1] = id .. '=' .. counts[id] end
  if #out > 0 then fields[#fields + 1] = 'dispatch'; fields[#fields + 1] = table.concat(out, ';') end
  if #folded > 0 then
    fields[#fields + 1] = 'deliveries'; fields[#fields + 1] = table.concat(folded, ' ')
  end
  if #fields > 0 then redis.call('HSET', run, unpack(fields)) end
  if #gone > 0 then redis.call('HDEL', run, unpack(gone)) end
  -- a running query's keys expire `ttl` past its last deadline (`expires`), which is
  -- at least `ttl` after an end before it: only an end later than that sets them again
  if not (now and found['expires'] and tonumber(found['expires']) >= tonumber(now) + tonumber(ttl)) then
    redis.call('EXPIRE', run, ttl)
    redis.call('EXPIRE', 'STEPS' .. qid, ttl)
  end
  return found
end
""".replace("RUN_PREFIX_LEN", str(len(naming.run_key("")))) \
   .replace("'GRAPH'", repr(GRAPH)).replace("GRAPH_LEN", str(len(GRAPH))) \
   .replace("'STEPS'", repr(naming.steps_key("")))

SENT = "sent:"
"""Run-hash field prefix: `sent:{step id}` -> unix time the step's task was sent."""
DELIVERED = "delivered:"
"""Run-hash field prefix: `delivered:{name}` -> deliveries of the task `name` (`plan`, a
step id, `react:N`)."""
EXPIRES = "expires"
"""Run-hash field: unix time the running query's keys expire (set at its creation)."""


def live_fields(raw: dict[str, str], prefix: str) -> dict[str, str]:
    """The fields of run hash `raw` under `prefix`, by what follows it."""
    return {k[len(prefix):]: v for k, v in raw.items() if k.startswith(prefix)}


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
