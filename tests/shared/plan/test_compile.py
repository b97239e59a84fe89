from shared.models import Plan
from shared.plan.compile import compile_plan


def plan(*steps) -> Plan:
    return Plan.model_validate({"steps": list(steps)})


def get(i, src="doc"):
    return {"id": f"G{i}", "operation": "GET", "source": src, "output_var": f"$D{i}"}


def extract(i, doc):
    return {"id": f"X{i}", "operation": "EXTRACT", "source": f"$D{doc}",
            "pattern": "(x)", "output_var": f"$V{i}"}


def test_two_independent_branches_run_side_by_side_and_the_join_waits_for_both():
    p = plan(get(1), extract(1, 1), get(2), extract(2, 2),
             {"id": "C", "operation": "COMPUTE", "expression": "$V1 - $V2"})
    assert compile_plan(p) == [[["G1", "X1"], ["G2", "X2"]], [["C"]]]


def test_a_linear_plan_is_one_chain():
    p = plan(get(1), extract(1, 1),
             {"id": "C", "operation": "COMPUTE", "expression": "$V1 * 2"})
    assert compile_plan(p) == [[["G1", "X1", "C"]]]


def test_steps_after_a_join_continue_in_the_join_branch():
    p = plan(get(1), extract(1, 1), get(2), extract(2, 2),
             {"id": "C", "operation": "COMPUTE", "expression": "$V1 - $V2", "output_var": "$D"},
             {"id": "C2", "operation": "COMPUTE", "expression": "$D * 100"},
             get(3), extract(3, 3))
    assert compile_plan(p) == [[["G1", "X1"], ["G2", "X2"], ["G3", "X3"]], [["C", "C2"]]]


def test_a_step_reading_an_earlier_stage_and_one_branch_joins_that_branch():
    p = plan(get(1), get(2),
             {"id": "C", "operation": "COMPUTE", "expression": "1", "output_var": "$J"},
             {"id": "J", "operation": "COMPUTE", "expression": "$D1 + $D2", "output_var": "$K"},
             {"id": "L", "operation": "COMPUTE", "expression": "$K + $D1"})
    assert compile_plan(p) == [[["G1"], ["G2"], ["C"]], [["J", "L"]]]
