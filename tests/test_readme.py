"""The plans shown in README.md parse, in every syntax, to the same plan."""

import json
import re
from pathlib import Path

from shared.plan.parse import parse_plan

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()


def blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README, flags=re.S)


def shape(plan):
    return [(s.operation, sorted(s.references())) for s in plan.steps]


def test_the_readme_plans_parse_and_the_two_text_syntaxes_agree():
    (design,) = blocks("json")
    assert parse_plan(json.loads(design)).steps[0].source == "Tesla Q3 2023 Financial Report"
    (rewoo,) = blocks("rewoo")
    (llmcompiler,) = blocks("llmcompiler")
    a, b = parse_plan(rewoo), parse_plan(llmcompiler)
    assert shape(a) == shape(b) == [("GET", []), ("EXTRACT", ["E1"]), ("COMPUTE", ["E2"])]
    assert a.steps[1].pattern == b.steps[1].pattern == r"yield rate of (\d+\.\d+)%"
