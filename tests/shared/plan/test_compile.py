from shared.models import Plan
from shared.plan.compile import dependents, ready_after, roots


def plan(*steps) -> Plan:
    return Plan.model_validate({"steps": list(steps)})


def get(i):
    return {"id": f"G{i}", "operation": "GET", "source": "doc", "output_var": f"$D{i}"}


def extract(i, doc):
    return {"id": f"X{i}", "operation": "EXTRACT", "source": f"$D{doc}",
            "pattern": "(x)", "output_var": f"$V{i}"}


JOIN = {"id": "C", "operation": "COMPUTE", "expression": "$V1 - $V2", "output_var": "$J"}


def test_steps_that_read_nothing_start_the_plan_together():
    p = plan(get(1), extract(1, 1), get(2), extract(2, 2), JOIN)
    assert roots(p) == ["G1", "G2"]


def test_a_join_is_ready_only_when_its_last_input_is_stored():
    p = plan(get(1), extract(1, 1), get(2), extract(2, 2), JOIN)
    assert ready_after(p, "X1", {"G1", "X1"}) == []
    assert ready_after(p, "X2", {"G1", "X1", "G2", "X2"}) == ["C"]


def test_a_join_in_the_middle_releases_the_steps_after_it():
    p = plan(get(1), extract(1, 1), get(2), extract(2, 2), JOIN,
             {"id": "C2", "operation": "COMPUTE", "expression": "$J * 100"}, get(3))
    assert dependents(p)["C"] == ["C2"]
    assert ready_after(p, "C", {"G1", "X1", "G2", "X2", "C"}) == ["C2"]
    assert "G3" in roots(p)


def test_a_document_read_by_two_extracts_releases_both():
    p = plan(get(1), extract(1, 1), extract(2, 1))
    assert ready_after(p, "G1", {"G1"}) == ["X1", "X2"]
