"""Properties of parsing, checking and repair that must hold for any input."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shared.errors import InputError
from shared.models import Plan
from shared.plan.llmcompiler import read_llmcompiler
from shared.plan.parse import parse_plan
from shared.plan.repair import repair_plan
from shared.plan.rewoo import read_rewoo
from shared.plan.tools_table import ToolsTable
from shared.plan.validate import validate_plan

FRAGMENTS = st.sampled_from([
    "Plan: ", "#E1", "#E2 = ", "#E3 =", "Wikipedia", "Extract", "Calculator", "IF", "LLM",
    "[", "]", ", ", "top_k=", "temporal_scope=2023-Q3", "fallback=", "?", ":", "#E1 - 92",
    "1. ", "2.", "search", "extract", "math", "join", "(", ")", '"', "'", "$1", "${2}", "$E1",
    "=", "\\", "<END_OF_PLAN>", "Thought: ", "Answer: ", "{{ E1 }}", "prefer=newest", "\n",
    "\n", "(\\d+)%", "*", "**", "r\"", "[1, 2]", "x" * 40, "```"])
TEXT = st.lists(FRAGMENTS | st.text(max_size=6), max_size=40).map("".join) | st.text(max_size=80)


@settings(max_examples=400, deadline=None)
@given(TEXT)
def test_random_text_never_crashes_either_text_reader(text):
    table = ToolsTable()
    read_rewoo(text, table)
    read_llmcompiler(text, table)


@settings(max_examples=400, deadline=None)
@given(TEXT)
def test_random_text_either_parses_or_raises_an_input_error(text):
    try:
        parse_plan(text)
    except InputError as e:  # PlanError is an InputError
        assert str(e)


ID = st.sampled_from(["E1", "E2", "E3", "E4", "E5", "E6"])
OUT = st.none() | st.sampled_from(["$A", "$B", "$E2"])
VAR = st.sampled_from(["$E1", "$E2", "$E3", "$E4", "$A", "$B", "${E5}", "$item"])
DOC = VAR | st.sampled_from(["Tesla report", "tesla  REPORT.", "Northwind", "$E1 report", "A"])
EXPR = VAR | st.sampled_from(["$E1 - 92", "$A + $B", "$E2 > 1", "1 +", "$E3 * 2", "not $E4",
                              "abs($A)", "$item > 90"])
PATTERN = st.sampled_from([r"(\d+)%", "x", "(a)(b)", "(", r"yield (?:a|b) (\d+)"])
SCOPE = st.none() | st.sampled_from(["2023", "2023-Q3", "2023-Q9"])
RULE = st.sampled_from(['source_type == "official_report"', "newest", "oldest", "majority",
                        "best"])


def step(op: str, **fields) -> st.SearchStrategy[dict]:
    return st.fixed_dictionaries({"id": ID, "operation": st.just(op), "output_var": OUT,
                                  **fields})


STEP = st.one_of(
    step("GET", source=DOC, temporal_scope=SCOPE, top_k=st.integers(1, 3)),
    step("SEARCH", query=DOC, temporal_scope=SCOPE, top_k=st.integers(1, 5)),
    step("EXTRACT", source=DOC, pattern=PATTERN, fallback=st.none() | st.just("unknown")),
    step("COMPUTE", expression=EXPR),
    step("IF", condition=EXPR, then=VAR | st.just("yes"), **{"else": VAR | st.just("")}),
    step("VALIDATE", value=VAR, min=st.none() | st.just(90.0), max=st.none() | st.just(80.0),
         pattern=st.none() | PATTERN),
    step("MERGE", sources=st.lists(VAR | st.just("Tesla"), min_size=1, max_size=3),
         strategy=st.sampled_from(["first", "list", "unique"])),
    step("FILTER", source=VAR | st.just("Tesla"), condition=st.none() | EXPR,
         pattern=st.none() | PATTERN),
    step("ARBITRATE", sources=st.lists(VAR, min_size=2, max_size=3),
         prefer=st.lists(RULE, min_size=1, max_size=2)),
)
PLAN = st.builds(
    lambda steps, answer, drop: Plan.model_validate({"steps": steps, "answer": answer,
                                                     "drop_unused": drop}),
    st.lists(STEP, min_size=1, max_size=8),
    st.none() | st.sampled_from(["{{ E1 }}", "{{ A }} {{ E3 }}", "{{ $A }}", "{{ B | length }}",
                                 "{% if E2 %}{{ E4 }}{% endif %}", "no variables"]),
    st.booleans())
PROPERTY = settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(PLAN)
def test_any_plan_the_model_accepts_gets_a_list_of_problems_never_an_exception(plan):
    for problem in validate_plan(plan):
        assert problem.code and problem.message


@PROPERTY
@given(PLAN)
def test_repairing_a_repaired_plan_changes_nothing(plan):
    repaired, _ = repair_plan(plan)
    assert repair_plan(repaired) == (repaired, [])


@PROPERTY
@given(PLAN)
def test_repair_never_adds_a_problem_to_a_plan_that_passed_its_checks(plan):
    if validate_plan(plan) == []:
        repaired, _ = repair_plan(plan)
        assert validate_plan(repaired) == []


@PROPERTY
@given(PLAN)
def test_repair_leaves_every_step_after_the_steps_it_reads_unless_they_form_a_cycle(plan):
    repaired, _ = repair_plan(plan)
    codes = {p.code for p in validate_plan(repaired)}
    assert "forward_reference" not in codes or "cycle" in codes
