"""The dispatch graph: which steps are ready, and how a reply's steps are placed on it
(shared/journey/dispatch.py, shared/journey/placement.py); no Redis."""

from __future__ import annotations

from shared.journey.dispatch import ready_steps
from shared.models import Plan
from shared.journey.placement import Placement, step_key
from shared.plan.parse import parse_step
from shared.stores.graph import GraphView

from ...conftest import graph_steps



def plan(*steps) -> Plan:
    return Plan.model_validate({"steps": list(steps)})


def get(i, source="doc"):
    return {"id": f"G{i}", "operation": "GET", "source": f"{source} {i}", "output_var": f"$D{i}"}


def extract(i, doc):
    return {"id": f"X{i}", "operation": "EXTRACT", "source": f"$D{doc}",
            "pattern": "(x)", "output_var": f"$V{i}"}


JOIN = {"id": "C", "operation": "COMPUTE", "expression": "$V1 - $V2", "output_var": "$J"}


def view(p: Plan, stored=(), closed=True) -> GraphView:
    return GraphView({g.task.step.id: g for g in graph_steps("q", p)}, closed,
                     frozenset(stored), False)


def ready(p: Plan, stored=()) -> list[str]:
    v = view(p, stored)
    return ready_steps(v, list(v.steps))


def test_steps_that_read_nothing_start_the_plan_together():
    assert ready(plan(get(1), extract(1, 1), get(2), extract(2, 2), JOIN)) == ["G1", "G2"]


def test_a_join_is_ready_only_when_its_last_input_is_stored():
    p = plan(get(1), extract(1, 1), get(2), extract(2, 2), JOIN)
    assert ready(p, {"G1", "X1", "G2"}) == ["X2"]
    assert ready(p, {"G1", "X1", "G2", "X2"}) == ["C"]


def test_a_join_in_the_middle_releases_the_steps_after_it():
    p = plan(get(1), extract(1, 1), get(2), extract(2, 2), JOIN,
             {"id": "C2", "operation": "COMPUTE", "expression": "$J * 100"}, get(3))
    assert ready(p, {"G1", "X1", "G2", "X2", "G3"}) == ["C"]
    assert ready(p, {"G1", "X1", "G2", "X2", "G3", "C"}) == ["C2"]


def test_a_document_read_by_two_extracts_releases_both():
    assert ready(plan(get(1), extract(1, 1), extract(2, 1)), {"G1"}) == ["X1", "X2"]


def test_a_terminal_query_sends_nothing_more():
    p = plan(get(1), extract(1, 1))
    v = view(p, {"G1"})
    assert ready_steps(GraphView(v.steps, True, v.stored, True), ["X1"]) == []


def test_a_steps_key_ignores_its_names_but_not_what_it_reads():
    a = plan(get(1), extract(1, 1))
    b = plan({**get(1), "id": "E7", "output_var": "$DOC"},
             {**extract(1, 1), "id": "E8", "source": "$DOC", "output_var": "$Y"})
    other = plan(get(1, "another doc"), extract(1, 1))
    keys = [[g.key for g in graph_steps("q", p)] for p in (a, b, other)]
    assert keys[0] == keys[1]
    assert keys[2][0] != keys[0][0] and keys[2][1] != keys[0][1]  # reads another document


def test_a_retry_reuses_what_an_earlier_reply_placed_and_renames_what_differs():
    first = Placement("q", {}, attempt=1)
    for raw in (get(1), extract(1, 1)):
        first.place(parse_step(raw))
    retry = plan({**get(1), "id": "E1", "output_var": "$R"},          # the same GET
                 {**extract(1, 1), "id": "G1", "source": "$R", "pattern": "(y)"})  # new
    final, added = Placement("q", first.graph, attempt=2).place_plan(retry)
    assert [s.id for s in final.steps] == ["G1", "G1_2"]
    assert [s.var for s in final.steps] == ["R", "V1"]  # variables kept
    assert [(g.task.step.id, g.task.inputs, g.attempt) for g in added] == [
        ("G1_2", {"R": "G1"}, 2)]


def test_a_renamed_step_without_an_output_var_keeps_the_variable_it_bound():
    first = Placement("q", {})
    first.place(parse_step({"id": "E1", "operation": "COMPUTE", "expression": "1"}))
    final, _ = Placement("q", first.graph).place_plan(plan(
        {"id": "E1", "operation": "COMPUTE", "expression": "2"},
        {"id": "E2", "operation": "COMPUTE", "expression": "$E1 + 1"}))
    assert [(s.id, s.var) for s in final.steps] == [("E1_2", "E1"), ("E2", "E2")]
    assert step_key(final.steps[0], {}) != step_key(parse_step(
        {"id": "E1", "operation": "COMPUTE", "expression": "1"}), {})


def test_one_reply_never_maps_two_steps_onto_one_graph_step():
    twice = plan(get(1), {**get(1), "id": "G9", "output_var": "$D9"})
    final, added = Placement("q", {}).place_plan(twice)
    assert [s.id for s in final.steps] == ["G1", "G9"] and len(added) == 2
