"""A query's dispatch graph is fields of its run hash (`g:{step}`, shared/stores/graph.py):
no key of its own to give a TTL, read or delete, and what a finished query leaves reads
as it did while the query ran. On the bare Redis of the test session."""

from __future__ import annotations

import time

from shared import naming
from shared.journey.steps import error_result, step_base
from shared.models import Answer, Plan, Query

from ...conftest import graph_steps

PLAN = Plan.model_validate({"steps": [
    {"id": "E1", "operation": "COMPUTE", "expression": "1", "output_var": "$A"},
    {"id": "E2", "operation": "COMPUTE", "expression": "$A + 1", "output_var": "$B"}]})


def commands(store) -> int:
    """Commands the store's Redis has run so far (those inside scripts too)."""
    return int(store.r.info("stats")["total_commands_processed"])


def closed(store) -> tuple[Query, dict]:
    """A query created and its plan closed, E1 claimed for the planner."""
    query = Query(question="where is my graph?", plan=PLAN, created_at=time.time())
    assert store.create(query)
    graph = {g.task.step.id: g for g in graph_steps(query.id, PLAN)}
    closing = store.close_graph(query.id, PLAN, [], list(graph.values()), "whole", 20,
                                "executing", "planner")
    assert closing.claimed == ("E1",) and not closing.joined
    return query, graph


def test_a_running_querys_graph_lives_in_its_record_with_no_key_of_its_own(bare_store):
    store, r = bare_store, bare_store.r
    query, graph = closed(store)
    assert not r.exists(naming.graph_key(query.id))
    fields = r.hkeys(naming.run_key(query.id))
    assert {"g:E1", "g:E2"} <= set(fields) and "graph_closed" not in fields
    view = store.graph(query.id)
    assert view.closed and view.steps == graph and view.stored == frozenset()
    running = store.record(query.id)
    assert [d.step_id for d in running.dispatch] == ["E1", "E2"]
    assert not [k for k in running.timings if k.startswith("g")]


def test_a_finished_query_keeps_no_graph_and_its_record_reads_as_while_it_ran(bare_store):
    store, r = bare_store, bare_store.r
    query, graph = closed(store)
    store.mark_dispatched(query.id, ["E1"], time.time())
    for step_id, sends in (("E1", ["E2"]), ("E2", [])):
        store.start_step(query.id, step_id)
        stored = store.put_step_and_dispatch(
            query.id, error_result(step_base(graph[step_id].task), "TEST", "stored"),
            f"task-{step_id}")
        assert [t.step.id for t in stored.send] == sends
        store.mark_dispatched(query.id, sends, time.time())
    assert stored.joined
    finalizing = store.start_finalizing(query.id)  # the record as it read it
    assert finalizing.plan == PLAN and len(finalizing.steps) == 2
    assert store.status(query.id) == "finalizing"
    running = store.record(query.id)
    assert store.finish(query.id, Answer(text="2"))
    assert not r.exists(naming.graph_key(query.id))
    assert not [f for f in r.hkeys(naming.run_key(query.id)) if f.startswith("g:")]
    ended = store.record(query.id)
    assert ended.dispatch == running.dispatch and all(d.dispatched_at for d in ended.dispatch)
    assert ended.model_dump(exclude={"status", "answer", "timings"}) == running.model_dump(
        exclude={"status", "answer", "timings"})


def test_closing_a_plan_and_storing_a_step_read_the_graph_with_the_record(bare_store):
    """The close reads the run hash once and writes it once (3 commands with its script
    call); a step stored by a worker that has not read the graph yet reads it with the
    record (5); the answer's end folds the graph from the run hash it reads anyway (8)."""
    store = bare_store
    query = Query(question="how many commands?", plan=PLAN, created_at=time.time())
    assert store.create(query)
    graph = {g.task.step.id: g for g in graph_steps(query.id, PLAN)}
    before = commands(store)
    store.close_graph(query.id, PLAN, [], list(graph.values()), "whole", 20,
                      "executing", "planner")
    assert commands(store) - before == 3 + 1  # + INFO
    before = commands(store)
    stored = store.put_step_and_dispatch(
        query.id, error_result(step_base(graph["E1"].task), "TEST", "stored"), "task-E1")
    assert commands(store) - before == 5 + 1 and [t.step.id for t in stored.send] == ["E2"]
    before = commands(store)
    assert store.finish(query.id, Answer(text="1"))
    assert commands(store) - before == 8 + 1


def test_a_graph_that_earlier_code_kept_in_its_own_key_is_never_joined(bare_store):
    """Workers of the code that kept the graph in `chordal:graph:{qid}` and closed it
    with `graph_closed` must not run beside these; a query they planned is not finalized
    early by these (it fails at its deadline instead)."""
    store, r = bare_store, bare_store.r
    query = Query(question="planned by an older worker", plan=PLAN, created_at=time.time())
    assert store.create(query)
    graph = {g.task.step.id: g for g in graph_steps(query.id, PLAN)}
    r.hset(naming.graph_key(query.id), mapping={k: g.model_dump_json() for k, g in graph.items()})
    r.expire(naming.graph_key(query.id), 60)
    r.hset(naming.run_key(query.id), mapping={"graph_closed": 1, "plan": PLAN.model_dump_json()})
    stored = store.put_step_and_dispatch(
        query.id, error_result(step_base(graph["E1"].task), "TEST", "stored"), "task-E1")
    assert not stored.joined and stored.send == [] and not stored.view.closed
