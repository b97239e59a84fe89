import json
from pathlib import Path

import pytest

import shared
from shared.errors import InputError
from shared.ingest import load_jsonl

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


CASH_FLOWS = [["", "2019", "2018", "2017"],
              ["Purchase of property and equipment", "(9,576)", "(4,656)", "(6,332)"],
              ["Net cash provided by operating activities", "10,429", "7,772", "10,660"]]
"""Rows of the statement of cash flows of Patriot Transportation's FY2019 10-K."""


def test_a_record_gives_its_pages_and_its_tables_as_rows_of_cells(tmp_path):
    path = write(tmp_path / "docs.jsonl", json.dumps({
        "title": "Patriot Transportation Holding Form 10-K 2019",
        "pages": ["Cover page", "Business", "Statements of cash flows"],
        "tables": [{"rows": CASH_FLOWS, "page": 3,
                    "title": "CONSOLIDATED STATEMENTS OF CASH FLOWS (In thousands)"},
                   CASH_FLOWS]}))
    (doc,) = load_jsonl(path)
    assert doc.content == "Cover page\fBusiness\fStatements of cash flows"
    first, second = doc.tables
    assert (first.page, first.scale, second.page, second.scale) == (3, 3, None, 0)
    assert [c.period for c in first.columns] == ["2019", "2018", "2017"]
    assert first.rows[0].cells[0].quantity.amount == -9576


def test_a_record_without_tables_gets_those_its_text_lays_out_in_columns(tmp_path):
    text = ("CONSOLIDATED STATEMENTS OF CASH FLOWS\n(In thousands)\n"
            + "\n".join(f"{r[0]:<45}{r[1]:>10}{r[2]:>10}{r[3]:>10}" for r in CASH_FLOWS))
    path = write(tmp_path / "docs.jsonl", json.dumps({"title": "T", "content": text}),
                 good("Plain", tables=[]))
    with_text, plain = load_jsonl(path)
    assert [r.label for r in with_text.tables[0].rows][:1] == ["Purchase of property and equipment"]
    assert plain.tables == []


@pytest.mark.parametrize("record, says", [
    ({"title": "T", "content": "x", "pages": ["a"]}, "give either 'content' or 'pages', not both"),
    ({"title": "T", "pages": "one page"}, "field 'pages' must be a list of strings"),
    ({"title": "T", "pages": ["a\fb"]}, "field 'pages': a page holds a form feed"),
    ({"title": "T", "content": "x", "tables": {"rows": []}}, "field 'tables' must be a list"),
    ({"title": "T", "content": "x", "tables": [[["a", ["b"]]]]},
     "field 'tables[0]': a table is a list of rows"),
    ({"title": "T", "content": "x", "tables": [{"rows": CASH_FLOWS, "page": 0}]},
     "field 'tables[0]': 'page' must be a page number from 1"),
    ({"title": "T", "content": "x", "tables": [{"cells": CASH_FLOWS}]},
     "field 'tables[0]': key 'cells' is not allowed; use rows, page, title"),
], ids=["content-and-pages", "pages-not-a-list", "form-feed-in-a-page", "tables-not-a-list",
        "nested-cell", "page-zero", "unknown-key"])
def test_bad_pages_or_tables_name_the_line_and_the_field(tmp_path, record, says):
    path = write(tmp_path / "docs.jsonl", good(), json.dumps(record))
    with pytest.raises(InputError, match="docs.jsonl line 2: " + says.replace("[", r"\[")):
        load_jsonl(path)
