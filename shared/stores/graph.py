"""The dispatch graph's part of the run store (shared/journey/dispatch.py sends from it): consumes
`GraphStep`s and the final `Plan`; produces `GraphView`s (the graph as one atomic read
saw it) and the `StepDispatch` lines of a run record. `RunStore` inherits it.

    chordal:run:{qid}        g:<step>: the dispatch graph, one field a step, step id ->
                             GraphStep JSON (first write wins);
                             graph_final, plan_mode, plan, repairs once closed;
                             graph_unkept: the graph's steps the final plan does not
                             keep, graph_dropped: those of them never sent (space-separated);
                             sent:<step>: unix time its task was sent (first write wins);
                             stored_steps: the ids of the stored step results
                             (space-separated), claimed_<what>: the claims;
                             dispatch: the graph and send times, folded there when the
                             query ends (the g: and sent: fields are then deleted,
                             shared/stores/retire.py)

The graph lives in the run hash, so it has the run hash's TTL and is read with it: the
scripts that change the graph, and the one that stores a step for a worker that has not
read the graph yet, read the whole run hash (one HGETALL); a worker that knows a closed
graph reads only the run's fields (HMGET). The graph holds at most `max_steps` steps
(CHORDAL_MAX_STEPS): the step budget of one query, across all its planner replies and
planner deliveries, so it adds at most that many fields (about 500 bytes each) to the
run hash while the query runs. Adding and closing are Lua scripts, so concurrent
planners (a redelivered one) cannot pass it between a count and a write. Closing drops
the steps of rejected replies that were never sent (their dispatch claim is taken, so
no task sends them later; never run, they give their place in the budget back) and
fails, writing nothing, when the final plan's steps and the rejected replies' steps
already sent exceed the budget.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Literal

from shared import naming
from shared.models import GraphStep, Plan, StepDispatch
from shared.stores.batch_counts import COUNT_LUA
from shared.stores.retire import GRAPH, RETIRE_LUA, SENT, kept_dispatch, live_fields

STORED = "stored_steps"
"""Run-hash field: the ids of the query's stored step results, space-separated, written
by the script that stores one (shared/stores/step_results.py) in the same HSET as
`stored_bytes`: the scripts that read the graph learn what is stored from the run hash
they read anyway, not from the keys of the steps hash."""
FINAL = "graph_final"
"""Run-hash field, set as the plan is closed: no step will be added to the graph. Code
that kept the graph in a key of its own (`naming.graph_key`) marked a closed graph
`graph_closed`; this code does not read that field, so a query whose graph one kind of
worker wrote is never joined by the other (it fails at its deadline; no answer without
the steps it kept in the other place)."""
IDS_LUA = """
local function ids_of(field)
  local out = {}
  for id in string.gmatch(field or '', '%S+') do out[#out + 1] = id end
  return out
end
"""
"""Lua: `ids_of(field)` the ids of a space-separated field (as `STORED` holds them)."""
VIEW_LUA = IDS_LUA + """
local function read_run()
  local h, run, graph = redis.call('HGETALL', KEYS[1]), {}, {}
  for i = 1, #h, 2 do
    run[h[i]] = h[i + 1]
    if string.sub(h[i], 1, GRAPH_LEN) == 'GRAPH' then
      graph[#graph + 1] = string.sub(h[i], GRAPH_LEN + 1); graph[#graph + 1] = h[i + 1]
    end
  end
  return run, graph
end
local function view(run, graph)
  return {graph, {run['FINAL'] or false, run['terminal'] or false, run['graph_unkept'] or false},
          ids_of(run['STORED'])}
end
""".replace("'GRAPH'", repr(GRAPH)).replace("GRAPH_LEN", str(len(GRAPH))).replace(
    "'FINAL'", repr(FINAL)).replace("'STORED'", repr(STORED))
"""Lua: `read_run()` reads the run hash (KEYS[1]) once: field -> value, and its dispatch
graph as a flat list (step id, GraphStep JSON, …); `view(run, graph)` the graph's view
(the graph, the run's graph fields and stored step ids) for the scripts that change the
graph or store a step and read it after."""
_VIEW_FIELDS = [FINAL, "terminal", "graph_unkept", STORED]  # as view() reads them
CLAIM_LUA = ("""
local function reads(graph_step)
  local ids, inputs = {}, string.match(graph_step, '"inputs":(%b{})')
  if inputs then for id in string.gmatch(inputs, ':"([^"]*)"') do ids[#ids + 1] = id end end
  return ids
end
local function claim(field, claims, owner, now, set)
  local holder = claims[field]
  if holder then return owner ~= '' and holder == owner end
  claims[field] = owner ~= '' and owner or now
  set[#set + 1] = field; set[#set + 1] = claims[field]
  return true
end
local function claim_ready(candidates, reads_of, stored, left, claims, owner, now, set)
  local out = {}
  for _, id in ipairs(candidates) do
    if not stored[id] and not left[id] then
      local ready = true
      for _, input in ipairs(reads_of[id]) do
        if not stored[input] then ready = false; break end
      end
      if ready and claim('DISPATCH_CLAIM' .. id, claims, owner, now, set) then
        out[#out + 1] = id
      end
    end
  end
  return out
end
local function set_of(list)
  local out = {}
  for _, x in ipairs(list) do out[x] = true end
  return out
end
""").replace("DISPATCH_CLAIM", "claimed_" + naming.dispatch_claim(""))
"""Lua, the claims of shared/journey/dispatch.py inside the scripts that store a step or close
the graph, read with the run hash in the script's one read and written in its one HSET
(the script is atomic, so a claim read free is the caller's): `reads(GraphStep JSON)`
the step ids its task reads (the only `"inputs":` key of the JSON: inside a string its
quotes are escaped); `claim(field, claims, owner, now, set)` as `RunStore.claim`, with
`claims` the claim fields as read (field -> holder) and the claim's write added to
`set`; `claim_ready(ids, reads_of, stored, left, claims, owner, now, set)` the ids that
are ready (`ready_steps`) and claimed to send."""

ADD_LUA = VIEW_LUA + """
local run, graph = read_run()
local n, cap, closed = #graph / 2, tonumber(ARGV[1]), run['FINAL'] or run['terminal']
local have, refused, set = {}, {}, {}
for i = 1, #graph, 2 do have[graph[i]] = true end
for i = 2, #ARGV, 2 do
  if not have[ARGV[i]] then
    if closed or n >= cap then
      refused[#refused + 1] = ARGV[i]
    else
      set[#set + 1] = 'GRAPH' .. ARGV[i]; set[#set + 1] = ARGV[i + 1]
      graph[#graph + 1] = ARGV[i]; graph[#graph + 1] = ARGV[i + 1]
      have[ARGV[i]] = true
      n = n + 1
    end
  end
end
if #set > 0 then redis.call('HSET', KEYS[1], unpack(set)) end
return {refused, view(run, graph)}
""".replace("'GRAPH'", repr(GRAPH)).replace("'FINAL'", repr(FINAL))
# ARGV: ttl, max_steps, claim field prefix, k (the plan's steps), a (the steps it adds),
# the status the query moves to ('' for none: a query already ended keeps its own), the
# time, the owner of the claims, the plan's k graph ids, a pairs (id, GraphStep JSON),
# then run-hash (field, value) pairs. Returns the outcome, the steps spent, the view, the
# steps the graph held before (0: its steps are then the ones added, not sent back),
# and once closed, the added steps ready and claimed to send, and 1 when the join (the
# finalizer's claim) is the owner's.
CLOSE_LUA = RETIRE_LUA + COUNT_LUA + VIEW_LUA + CLAIM_LUA + """
local cap, prefix, k, a = tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5])
local fields = 9 + k + 2 * a
-- the run hash in one read: its fields, its graph, and the claims of the added steps
-- and of the join
local run, graph = read_run()
if run['FINAL'] then return {'closed before', 0, view(run, graph), 1} end
local status = ARGV[6] ~= '' and not run['terminal']
local kept, unkept, dropped, found = {}, {}, {}, {}
for i = 9, 8 + k do kept[ARGV[i]] = true end
for i = 1, #graph, 2 do
  local id = graph[i]
  found[#found + 1] = id
  if not kept[id] then
    unkept[#unkept + 1] = id
    if not run[prefix .. id] then dropped[#dropped + 1] = id end
  end
end
local spent = #unkept - #dropped
if spent + k > cap then return {'over budget', spent, view(run, graph), 1} end
-- the added steps the graph does not hold (first write wins), in the run's one HSET
local set, held = {}, set_of(found)
for i = 9 + k, fields - 1, 2 do
  if not held[ARGV[i]] then
    held[ARGV[i]] = true
    set[#set + 1] = 'GRAPH' .. ARGV[i]; set[#set + 1] = ARGV[i + 1]
    graph[#graph + 1] = ARGV[i]; graph[#graph + 1] = ARGV[i + 1]
  end
end
for i = fields, #ARGV do set[#set + 1] = ARGV[i] end
for _, id in ipairs(dropped) do set[#set + 1] = prefix .. id; set[#set + 1] = 'dropped' end
if #unkept > 0 then set[#set + 1] = 'graph_unkept'; set[#set + 1] = table.concat(unkept, ' ') end
if #dropped > 0 then set[#set + 1] = 'graph_dropped'; set[#set + 1] = table.concat(dropped, ' ') end
if status then
  set[#set + 1] = 'status'; set[#set + 1] = ARGV[6]
  set[#set + 1] = 't_' .. ARGV[6]; set[#set + 1] = ARGV[7]
end
local stored_ids = ids_of(run['STORED'])
local left, candidates, claimed, join = set_of(unkept), {}, {}, 0
if not run['terminal'] then
  -- what the planner sends: the added steps now ready, and the finalizer once all the
  -- steps the plan keeps are stored (dispatch.py's claim_ready and joined), claimed in
  -- the HSET below
  local stored, reads_of = set_of(stored_ids), {}
  for i = 9 + k, fields - 1, 2 do
    candidates[#candidates + 1] = ARGV[i]
    reads_of[ARGV[i]] = reads(ARGV[i + 1])
  end
  local owner, now = ARGV[8], ARGV[7]
  claimed = claim_ready(candidates, reads_of, stored, left, run, owner, now, set)
  join = 1
  for _, id in ipairs(found) do if not left[id] and not stored[id] then join = 0 end end
  for _, id in ipairs(candidates) do if not stored[id] then join = 0 end end
  if join == 1 and not claim('FINALIZE_CLAIM', run, owner, now, set) then join = 0 end
end
redis.call('HSET', KEYS[1], unpack(set))
if status then
  count_known(KEYS[1], ARGV[6], ARGV[1], run['batch'], run['counted'], run['t_queued'], ARGV[7])
end
-- the graph is what was found and what was added: sent back only when it held steps
local seen = {#found > 0 and graph or {},
              {'1', run['terminal'] or false, #unkept > 0 and table.concat(unkept, ' ') or false},
              stored_ids}
if run['terminal'] then
  retire(KEYS[1], ARGV[1], {}, nil, ARGV[7])
  return {'closed', spent, seen, #found, {}, 0}
end
return {'closed', spent, seen, #found, claimed, join}
""".replace("'GRAPH'", repr(GRAPH)).replace("'FINAL'", repr(FINAL)).replace(
    "'STORED'", repr(STORED)).replace("FINALIZE_CLAIM", "claimed_" + naming.finalize_claim())


def step_order(step_id: str) -> tuple:
    """Sort key: `R2` before `R10`; ids without a number by name."""
    head = step_id.rstrip("0123456789")
    tail = step_id[len(head):]
    return (head, int(tail) if tail else -1, step_id)


@dataclass(frozen=True)
class GraphView:
    """A query's dispatch graph as one atomic read saw it, with what it needs to decide."""

    steps: dict[str, GraphStep]
    closed: bool
    """No step will be added: the plan is final (DispatchGraph.close_graph)."""
    stored: frozenset[str]
    """Ids of the steps with a stored result."""
    terminal: bool
    """The query is answered or failed: nothing more is worth sending."""
    left: frozenset[str] = frozenset()
    """Steps of rejected replies that the final plan does not keep (a closed graph): no
    task sends them, an executor that has not started one skips it, and the join does
    not wait for them."""


@dataclass(frozen=True)
class Closing:
    """What closing the graph came to."""

    outcome: Literal["closed", "closed before", "over budget"]
    """`closed`: the plan is recorded; `closed before`: another delivery of the planner
    closed it first (its plan stands); `over budget`: nothing was written."""
    spent: int
    """Steps of rejected replies that were sent and that the plan does not keep."""
    view: GraphView
    claimed: tuple[str, ...] = ()
    """`closed`: the added steps that are ready, claimed for the closing owner to send."""
    joined: bool = False
    """`closed`: every step the plan keeps is stored, and the owner holds the claim to
    send the finalizer."""


def _graph_view(graph: dict[str, str], head: list, stored,
                known: dict[str, GraphStep] | None) -> GraphView:
    closed, terminal, unkept = head
    steps = known if known is not None else {
        k: GraphStep.model_validate_json(v) for k, v in graph.items()}
    return GraphView(steps, bool(closed), frozenset(stored), bool(terminal),
                     frozenset((unkept or "").split()))


def scripted_view(reply: list, known: dict[str, GraphStep] | None = None) -> GraphView:
    """The GraphView a script's `view()` (VIEW_LUA) returned; `known`: a closed graph's
    steps already read, which the script did not send again."""
    flat, head, stored = reply
    return _graph_view(dict(zip(flat[::2], flat[1::2])), head, stored, known)


class DispatchGraph:
    """The run store's dispatch-graph methods (`self.r`: the Redis client, `self.ttl_s`)."""

    def _graph_scripts(self) -> None:
        self._add_script = self.r.register_script(ADD_LUA)
        self._close_script = self.r.register_script(CLOSE_LUA)

    def _graph_keys(self, query_id: str) -> list[str]:
        return [naming.run_key(query_id), naming.steps_key(query_id)]

    def add_to_graph(self, query_id: str, steps: list[GraphStep],
                     max_steps: int) -> tuple[GraphView, list[str]]:
        """Add `steps` to the open graph as long as it holds fewer than `max_steps` (a
        step id written before keeps its first step), then read it (`graph`), all in one
        script. Returns the view and the ids refused: the budget is spent, or the graph
        was closed, or the query ended."""
        args = [max_steps]
        for step in steps:
            args += [step.task.step.id, step.model_dump_json()]
        refused, view = self._add_script(keys=self._graph_keys(query_id), args=args)
        return scripted_view(view), list(refused)

    def close_graph(self, query_id: str, plan: Plan, repairs: list[str],
                    added: list[GraphStep], mode: str, max_steps: int,
                    status: str = "", owner: str = "") -> Closing:
        """In one script: record `plan` (its ids the graph ids it runs as) and `repairs`,
        drop the graph's steps it does not keep that were never sent, add `added`,
        close the graph (`mode`: how the plan came) and move the query to `status` (if
        given, and it has not ended) — unless the plan's steps and the sent steps it
        does not keep are more than `max_steps` (`over budget`), or the graph is closed
        already. Then read the graph, and once closed, claim for `owner` the added steps
        that are ready and the join (dispatch.py's `claim_ready` and `joined`)."""
        pairs = [x for g in added for x in (g.task.step.id, g.model_dump_json())]
        fields = ["plan", plan.model_dump_json(exclude_defaults=True),
                  "repairs", json.dumps(repairs), FINAL, 1, "plan_mode", mode]
        args = [self.ttl_s, max_steps, "claimed_" + naming.dispatch_claim(""),
                len(plan.steps), len(added), status, time.time(), owner,
                *(s.id for s in plan.steps), *pairs, *fields]
        outcome, spent, view, found, *claims = self._close_script(
            keys=self._graph_keys(query_id), args=args)
        # a graph empty before holds just what was added: the script did not send it back
        known = None if found else {g.task.step.id: g for g in added}
        claimed, joined = claims or ([], 0)
        return Closing(outcome, int(spent), scripted_view(view, known),
                       tuple(claimed), bool(joined))

    def graph(self, query_id: str, known: dict[str, GraphStep] | None = None) -> GraphView:
        """The dispatch graph, whether it is closed (and what its plan left out), the
        stored step ids and whether the query is terminal, read together; `known`: the
        steps of a graph already read closed (it never changes again), so they are not
        read twice."""
        run = naming.run_key(query_id)
        if known is not None:
            *head, stored = self.r.hmget(run, _VIEW_FIELDS)
            return _graph_view({}, head, (stored or "").split(), known)
        raw = self.r.hgetall(run)
        *head, stored = (raw.get(f) for f in _VIEW_FIELDS)
        return _graph_view(live_fields(raw, GRAPH), head, (stored or "").split(), None)

    def mark_dispatched(self, query_id: str, step_ids: list[str], at: float) -> None:
        """Record when the tasks of `step_ids` were sent (the first time only), in the
        run hash (which has its TTL)."""
        if not step_ids:
            return
        key = naming.run_key(query_id)
        if len(step_ids) == 1:
            self.r.hsetnx(key, SENT + step_ids[0], at)
            return
        with self.r.pipeline(transaction=False) as p:  # first write wins, field by field
            for step_id in step_ids:
                p.hsetnx(key, SENT + step_id, at)
            p.execute()

    def dispatched(self, query_id: str) -> dict[str, float]:
        """step id -> unix time its task was sent (kept in `dispatch` once the query is
        terminal, shared/stores/retire.py)."""
        raw = self.r.hgetall(naming.run_key(query_id))
        sent = {k: at for k, (_, _, at) in kept_dispatch(raw.get("dispatch")).items()
                if at is not None}
        return {**{k: float(v) for k, v in live_fields(raw, SENT).items()}, **sent}

    def _dispatch(self, plan_order: list[str], raw: dict[str, str]) -> list[StepDispatch]:
        """The record's `dispatch`: the graph's steps in plan order, then the others;
        `raw`: the run hash (its `graph_dropped`, and its `dispatch`, the graph as the
        query's end left it; else its live graph and send times)."""
        kept = raw.get("dispatch")
        rows = kept_dispatch(kept) if kept else _live_dispatch(raw)
        gone = set((raw.get("graph_dropped") or "").split())
        in_plan = set(plan_order) & set(rows)
        out = []
        for step_id in [s for s in plan_order if s in rows] + sorted(
                set(rows) - in_plan, key=step_order):
            attempt, started, at = rows[step_id]
            after = (round((at - started) * 1000, 1)
                     if at is not None and started is not None else None)
            out.append(StepDispatch(step_id=step_id, attempt=attempt, dispatched_at=at,
                                    after_reply_start_ms=after, in_plan=step_id in in_plan,
                                    dropped=step_id in gone))
        return out


def _live_dispatch(raw: dict[str, str]) -> dict[str, tuple[int, float | None, float | None]]:
    """step id -> (attempt, reply_started_at, dispatched_at) from the live graph and the
    send times in the run hash `raw`."""
    sent = {k: float(v) for k, v in live_fields(raw, SENT).items()}
    steps = {k: GraphStep.model_validate_json(v) for k, v in live_fields(raw, GRAPH).items()}
    return {k: (g.attempt, g.reply_started_at, sent.get(k)) for k, g in steps.items()}
