"""Three syntaxes, one model: JSON, ReWOO and LLMCompiler text of one question parse to
the same Plan, detected by content."""

from __future__ import annotations

import json

import pytest

from shared.errors import PlanError
from shared.plan.graph import dependencies
from shared.plan.parse import load_plan_file, parse_plan
from shared.plan.syntax import detect_syntax

ANSWER = "Tesla made ${{ E3 }} billion, Northwind ${{ E4 }} billion: {{ E5 }} more."
AS_JSON = json.dumps({"steps": [
    {"id": "E1", "operation": "GET", "source": "Tesla Q3 2023 Financial Report",
     "temporal_scope": "2023-Q3"},
    {"id": "E2", "operation": "GET", "source": "Northwind Motors Q3 2023 Financial Report",
     "temporal_scope": "2023-Q3"},
    {"id": "E3", "operation": "EXTRACT", "source": "$E1",
     "pattern": r"total revenue of \$(\d+(?:\.\d+)?) billion"},
    {"id": "E4", "operation": "EXTRACT", "source": "$E2",
     "pattern": r"total revenue of \$(\d+(?:\.\d+)?) billion"},
    {"id": "E5", "operation": "COMPUTE", "expression": "$E3 - $E4"}], "answer": ANSWER})
AS_REWOO = rf"""Plan: Fetch both reports.
#E1 = Wikipedia[Tesla Q3 2023 Financial Report, temporal_scope=2023-Q3]
#E2 = Wikipedia[Northwind Motors Q3 2023 Financial Report, temporal_scope=2023-Q3]
Plan: Take each revenue.
#E3 = Extract[#E1, total revenue of \$(\d+(?:\.\d+)?) billion]
#E4 = Extract[#E2, total revenue of \$(\d+(?:\.\d+)?) billion]
Plan: Subtract.
#E5 = Calculator[#E3 - #E4]
Answer: {ANSWER}
"""
AS_LLMCOMPILER = rf"""1. get("Tesla Q3 2023 Financial Report", temporal_scope="2023-Q3")
2. get("Northwind Motors Q3 2023 Financial Report", temporal_scope="2023-Q3")
3. extract($1, r"total revenue of \$(\d+(?:\.\d+)?) billion")
4. extract($2, r"total revenue of \$(\d+(?:\.\d+)?) billion")
Thought: both revenues are known once 3 and 4 finish.
5. math("${{3}} - ${{4}}")
6. join()<END_OF_PLAN>
Answer: {ANSWER}
"""


@pytest.mark.parametrize("text, syntax", [(AS_JSON, "json"), (AS_REWOO, "rewoo"),
                                          (AS_LLMCOMPILER, "llmcompiler")])
def test_the_syntax_is_detected_from_the_content(text, syntax):
    assert detect_syntax(text) == syntax


def test_the_same_question_in_three_syntaxes_parses_to_the_same_plan():
    plans = [parse_plan(text) for text in (AS_JSON, AS_REWOO, AS_LLMCOMPILER)]
    assert plans[0] == plans[1] == plans[2]
    assert [s.operation for s in plans[0].steps] == ["GET", "GET", "EXTRACT", "EXTRACT", "COMPUTE"]
    assert dependencies(plans[0]) == [[], [], [0], [1], [2, 3]]


@pytest.mark.parametrize("text", [AS_JSON, AS_REWOO, AS_LLMCOMPILER])
def test_every_syntax_gets_the_same_static_checks(text):
    broken = text.replace("2023-Q3", "2023-Q9", 1)
    with pytest.raises(PlanError) as e:
        parse_plan(broken)
    assert [(p.step, p.code) for p in e.value.problems] == [("E1", "bad_scope")]


@pytest.mark.parametrize("name, text", [("plan.json", AS_REWOO), ("plan.txt", AS_JSON),
                                        ("plan", AS_LLMCOMPILER)])
def test_a_plan_file_in_any_syntax_loads_whatever_its_extension(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    assert load_plan_file(path) == parse_plan(AS_JSON)


def test_text_in_no_known_syntax_says_what_each_syntax_looks_like():
    with pytest.raises(PlanError) as e:
        parse_plan("First fetch the Tesla report, then extract the yield.")
    [problem] = e.value.problems
    assert problem.code == "bad_syntax"
    assert "JSON" in problem.message and "#E1 = " in problem.message
    assert "1. search(" in problem.message


def test_a_json_plan_wrapped_in_a_code_fence_parses():
    assert parse_plan(f"```json\n{AS_JSON}\n```") == parse_plan(AS_JSON)


@pytest.mark.parametrize("text, syntax", [
    ("Plan: look it up. #E1 = Wikipedia[Tesla]", "rewoo"),
    ("Plan: search first\n1. search('Tesla')", "llmcompiler"),
    ("Plan: I will think about it", "rewoo"),
    ('"just a string"', "json"),
    ("no plan at all", None),
])
def test_detection_prefers_the_syntax_whose_steps_appear(text, syntax):
    assert detect_syntax(text) == syntax
