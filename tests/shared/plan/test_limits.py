"""The limits a plan meets as written: its size in every syntax, and its steps counted
before repair; and repair, linear, merging thousands of identical GETs into one."""

from __future__ import annotations

import json

import pytest

from shared.config import MAX_PLAN_CHARS
from shared.errors import PlanError
from shared.models import Plan
from shared.plan.parse import load_plan_file, parse_plan
from shared.plan.repair import prepare_plan, repair_plan

GET_LINE = "#E{n} = Wikipedia[Tesla Q3 2023 Financial Report]\n"
ROOMY = 20_000_000
"""A size limit no plan here reaches, to see the step limit at work."""


def identical_gets(lines: int) -> str:
    """ReWOO text of `lines` GETs of one document: repair would merge them into one."""
    return "".join(GET_LINE.format(n=n) for n in range(1, lines + 1))


def the_problem(source, **limits):
    with pytest.raises(PlanError) as e:
        parse_plan(source, **limits)
    [problem] = e.value.problems
    return e.value, problem


@pytest.mark.parametrize("lines", [8_000, 200_000])
def test_thousands_of_identical_get_lines_are_rejected_for_the_steps_written(lines):
    error, problem = the_problem(identical_gets(lines), max_chars=ROOMY)
    assert (problem.step, problem.code) == (None, "too_many_steps")
    for said in (f"{lines:,} steps", "the 20 allowed", "CHORDAL_MAX_STEPS"):
        assert said in problem.message and said in error.message


@pytest.mark.parametrize("lines", [8_000, 200_000])
def test_thousands_of_identical_get_lines_are_too_large_for_the_default_size(lines):
    text = identical_gets(lines)
    error, problem = the_problem(text)
    assert (problem.step, problem.code) == (None, "too_large")
    for said in (f"{len(text):,} characters", f"{MAX_PLAN_CHARS:,} characters allowed",
                 "CHORDAL_MAX_PLAN_CHARS"):
        assert said in problem.message and said in error.message


def test_a_plan_object_with_thousands_of_steps_is_rejected_before_its_repair():
    steps = [{"id": f"E{n}", "operation": "GET", "source": "Tesla Q3 2023 Financial Report"}
             for n in range(1, 8_001)]
    with pytest.raises(PlanError) as e:
        prepare_plan(Plan.model_validate({"steps": steps}), max_steps=20)
    assert [p.code for p in e.value.problems] == ["too_many_steps"]
    assert "8,000 steps" in e.value.message


@pytest.mark.parametrize("gets", [8_000, 200_000])
def test_repair_merges_thousands_of_identical_gets_into_one_and_readers_follow(gets):
    steps = [{"id": f"E{n}", "operation": "GET", "source": "Tesla Q3 2023 Financial Report"}
             for n in range(1, gets + 1)]
    reader = {"id": "X", "operation": "EXTRACT", "source": f"$E{gets}",
              "pattern": r"yield rate of (\d+\.\d+)%"}
    plan = Plan.model_validate({"steps": [*steps, reader],
                                "answer": f"{{{{ X }}}} from {{{{ E{gets} | length }}}}"})
    repaired, repairs = repair_plan(plan)
    assert [(s.id, getattr(s, "source", None)) for s in repaired.steps] == [
        ("E1", "Tesla Q3 2023 Financial Report"), ("X", "$E1")]
    assert repaired.answer == "{{ X }} from {{ E1 | length }}"
    assert len(repairs) == gets - 1
    assert repairs[-1] == (f"GET steps E1 and E{gets} fetch the same document ('Tesla Q3 "
                           f"2023 Financial Report'): kept E1 and dropped E{gets}; what read "
                           f"$E{gets} now reads $E1")


def test_the_step_limit_counts_the_plan_as_written_not_as_repaired():
    twice = identical_gets(3)  # three GETs of one document: one step once repaired
    assert len(parse_plan(twice, max_steps=3).steps) == 1
    _, problem = the_problem(twice, max_steps=2)
    assert problem.code == "too_many_steps" and "3 steps" in problem.message


def sized(syntax: str, chars: int) -> str | bytes | dict:
    """A valid plan of exactly `chars` characters in `syntax` (its answer padded)."""
    def padded(make):
        return make("x" * (chars - len(make(""))))

    if syntax in ("json", "dict", "bytes"):
        text = padded(lambda pad: json.dumps({"steps": [
            {"id": "E1", "operation": "GET", "source": "Tesla Q3 2023 Financial Report"}],
            "answer": "{{ E1 | length }} " + pad}, ensure_ascii=False, separators=(",", ":")))
        return {"json": text, "dict": json.loads(text), "bytes": text.encode()}[syntax]
    if syntax == "rewoo":
        return padded(lambda pad: "#E1 = Wikipedia[Tesla Q3 2023 Financial Report]\n"
                                  f"Answer: {{{{ E1 | length }}}} {pad}")
    return padded(lambda pad: '1. get("Tesla Q3 2023 Financial Report")\n'
                              f"Answer: {{{{ E1 | length }}}} {pad}")


@pytest.mark.parametrize("syntax", ["json", "dict", "bytes", "rewoo", "llmcompiler"])
def test_a_plan_in_any_syntax_may_be_as_long_as_the_limit_and_no_longer(syntax):
    assert parse_plan(sized(syntax, 2_000), max_chars=2_000).steps[0].operation == "GET"
    error, problem = the_problem(sized(syntax, 2_001), max_chars=2_000)
    assert (problem.step, problem.code) == (None, "too_large")
    assert "2,001 characters" in error.message and "2,000 characters allowed" in error.message


def test_a_plan_is_measured_in_characters_not_bytes():
    text = sized("json", 2_000).replace("x" * 500, "é" * 500)  # 2,000 characters, 2,500 bytes
    assert len(parse_plan(text.encode(), max_chars=2_000).steps) == 1


def test_a_plan_file_far_past_the_limit_is_rejected_without_reading_it_whole(tmp_path):
    path = tmp_path / "huge.rewoo.txt"
    path.write_text(identical_gets(200_000))
    with pytest.raises(PlanError) as e:
        load_plan_file(path, max_chars=10_000)
    assert str(path) in e.value.message and "more than 40,000 bytes" in e.value.message
    assert [p.code for p in e.value.problems] == ["too_large"]


def test_a_get_source_longer_than_a_title_or_url_is_refused_naming_the_field():
    """A 600,000-character source made a NOT_FOUND message (stored, logged) four times
    as long; a title or URL is far shorter than MAX_SOURCE_CHARS."""
    from shared.models.plan import MAX_SOURCE_CHARS
    plan = {"steps": [{"id": "E1", "operation": "GET", "source": "a" * (MAX_SOURCE_CHARS + 1),
                       "output_var": "$R"}]}
    with pytest.raises(PlanError, match=r"field 'source': String should have at most 2000"):
        parse_plan(plan)
    plan["steps"][0]["source"] = "a" * MAX_SOURCE_CHARS
    assert parse_plan(plan).steps[0].source == "a" * MAX_SOURCE_CHARS
