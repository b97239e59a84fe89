"""The manual's examples and links: the plans shown in docs/plans.md parse, in every
syntax, to the same plan; every link in README.md and docs/*.md reaches a file and, when
it names one, a heading there."""

import json
import re
from pathlib import Path

import pytest

from shared.plan.parse import parse_plan

ROOT = Path(__file__).resolve().parent.parent
PLANS = (ROOT / "docs" / "plans.md").read_text()
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", PLANS, flags=re.S)


def shape(plan):
    return [(s.operation, sorted(s.references())) for s in plan.steps]


def test_the_manual_plans_parse_and_the_two_text_syntaxes_agree():
    (design,) = blocks("json")
    assert parse_plan(json.loads(design)).steps[0].source == "Tesla Q3 2023 Financial Report"
    (rewoo,) = blocks("rewoo")
    (llmcompiler,) = blocks("llmcompiler")
    a, b = parse_plan(rewoo), parse_plan(llmcompiler)
    assert shape(a) == shape(b) == [("GET", []), ("EXTRACT", ["E1"]), ("COMPUTE", ["E2"])]
    assert a.steps[1].pattern == b.steps[1].pattern == r"yield rate of (\d+\.\d+)%"


def anchors(page: Path) -> set[str]:
    """GitHub's anchors of a page's headings (code blocks left out)."""
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
            for h in re.findall(r"^#{1,6} (.+)$", text, flags=re.M)}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_link_of_the_manual_reaches_its_file_and_heading(page):
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists() or (anchor and file.suffix == ".md" and anchor not in anchors(file)):
            broken.append(target)
    assert not broken, f"{page.relative_to(ROOT)} links to what is not there: {broken}"
