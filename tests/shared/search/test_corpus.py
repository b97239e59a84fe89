import json
from pathlib import Path

import pytest

import shared
from shared.errors import InputError
from shared.search import load_jsonl

BUNDLED = Path(shared.__file__).parent / "data" / "corpus.jsonl"


def write(path: Path, *lines: str) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def good(title: str = "T", **extra) -> str:
    return json.dumps({"title": title, "content": "Some text.", **extra})


def test_bundled_corpus_loads_with_the_design_example_document():
    docs = load_jsonl(BUNDLED)
    assert 25 <= len(docs) <= 40
    tesla = next(d for d in docs if d.title == "Tesla Q3 2023 Financial Report")
    assert tesla.period == "2023-Q3" and tesla.period_origin == "inferred"
    assert "2023-10-01" <= tesla.date <= "2023-11-30"  # published after the quarter
    assert "battery yield rate of 91.7%" in tesla.content


def test_a_bad_period_names_the_line_the_field_and_the_forms_it_takes(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text(good(period="Q3 of 2024") + "\n")
    with pytest.raises(InputError) as caught:
        load_jsonl(path)
    message = str(caught.value)
    assert "line 1" in message and "field 'period'" in message and "2023-Q3" in message


def test_bundled_corpus_ids_are_unique():
    docs = load_jsonl(BUNDLED)
    assert len({d.id for d in docs}) == len(docs)


def test_a_line_without_content_is_reported_with_file_line_and_field(tmp_path):
    path = write(tmp_path / "corpus.jsonl", *[good(f"T{i}") for i in range(6)], '{"title": "No body"}')
    with pytest.raises(InputError) as caught:
        load_jsonl(path)
    assert "corpus.jsonl line 7: field 'content' is required" in str(caught.value)


def test_a_malformed_json_line_is_reported_with_its_line_number(tmp_path):
    path = write(tmp_path / "corpus.jsonl", good(), '{"title": "broken", ')
    with pytest.raises(InputError, match=r"corpus.jsonl line 2: not valid JSON"):
        load_jsonl(path)


def test_a_line_that_is_not_an_object_is_reported(tmp_path):
    path = write(tmp_path / "c.jsonl", '["title", "content"]')
    with pytest.raises(InputError, match=r"c.jsonl line 1: expected a JSON object"):
        load_jsonl(path)


def test_an_unknown_field_is_refused_naming_the_fields_allowed(tmp_path):
    path = write(tmp_path / "c.jsonl", good(author="me"))
    with pytest.raises(InputError, match=r"line 1: field 'author' is not allowed; use only id, title, content"):
        load_jsonl(path)


def test_every_bad_line_is_listed_at_once(tmp_path):
    path = write(tmp_path / "c.jsonl", good(date="2023-07"), good(), "{oops", good())
    with pytest.raises(InputError) as caught:
        load_jsonl(path)
    message = str(caught.value)
    assert "line 1: field 'date'" in message and "line 3: not valid JSON" in message
    assert "nothing loaded" in message


def test_blank_lines_are_skipped_and_line_numbers_still_count_them(tmp_path):
    path = write(tmp_path / "c.jsonl", good("A"), "", "   ", good("B"), "", '{"content": "x"}')
    with pytest.raises(InputError, match=r"line 6: field 'title' is required"):
        load_jsonl(path)
    path = write(tmp_path / "ok.jsonl", good("A"), "", good("B"))
    assert [d.title for d in load_jsonl(path)] == ["A", "B"]


def test_a_missing_file_is_an_input_error_naming_the_path(tmp_path):
    with pytest.raises(InputError, match="nope.jsonl: no such file"):
        load_jsonl(tmp_path / "nope.jsonl")
