"""One file to its documents, with the metadata given for it: options, a sidecar next to
it, the title rule, and an error naming the file and the fix for each mistake."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from shared.errors import InputError
from shared.ingest import files_of, read_file

DOCUMENTS = Path(__file__).parents[2] / "fixtures" / "documents"
TITLE = "Patriot Transportation Holding Form 10-Q for the quarter ended December 31, 2014"


@pytest.fixture
def filing(tmp_path) -> Path:
    return Path(shutil.copy(DOCUMENTS / "pati-20141231-10q.pdf", tmp_path))


@pytest.fixture
def page(tmp_path) -> Path:
    return Path(shutil.copy(DOCUMENTS / "aapl-20250329-10q-excerpt.htm", tmp_path))


def test_a_pdf_without_a_title_is_refused_saying_where_to_give_one(filing):
    with pytest.raises(InputError) as caught:
        read_file(filing)
    message = str(caught.value)
    assert message.startswith(f"{filing}: no title")
    assert "--title" in message and "pati-20141231-10q.pdf.json next to it" in message


def test_a_sidecar_gives_the_metadata_and_options_win_over_it(filing):
    filing.with_name(filing.name + ".json").write_text(json.dumps(
        {"title": TITLE, "date": "2015-02-11", "period": "2014-10-01..2014-12-31",
         "source_type": "filing"}))
    (doc,) = read_file(filing).documents
    assert (doc.title, doc.date, doc.period, doc.period_origin) == (
        TITLE, "2015-02-11", "2014-Q4", "given")
    (doc,) = read_file(filing, {"title": "Patriot 10-Q Q1 FY2015", "url": None}).documents
    assert (doc.title, doc.date) == ("Patriot 10-Q Q1 FY2015", "2015-02-11")
    assert doc.tables and doc.content.count("\f") == 29


@pytest.mark.parametrize("sidecar, says", [
    ("{not json", "pati-20141231-10q.pdf.json: not valid JSON"),
    ('["a list"]', "expected one JSON object"),
    ('{"title": "T", "author": "me"}', "field 'author' is not allowed; use only title, date"),
    ('{"title": "T", "date": "2015-02"}', "pati-20141231-10q.pdf: field 'date': '2015-02' is "
                                          "not an ISO date"),
], ids=["not-json", "not-an-object", "unknown-field", "bad-date"])
def test_a_bad_sidecar_is_refused_naming_the_file_and_the_field(filing, sidecar, says):
    filing.with_name(filing.name + ".json").write_text(sidecar)
    with pytest.raises(InputError, match=says.replace("(", r"\(").replace("[", r"\[")):
        read_file(filing)


def test_an_html_page_without_a_given_title_is_named_by_its_own_title_and_says_so(page):
    read = read_file(page)
    (doc,) = read.documents
    assert (doc.title, read.title_from) == ("aapl-20250329", "<title>")
    assert doc.content.count("\f") == 1
    read = read_file(page, {"title": "Apple Q2 FY2025 Form 10-Q"})
    assert (read.documents[0].title, read.title_from) == ("Apple Q2 FY2025 Form 10-Q", None)


def test_a_jsonl_corpus_reads_as_before_and_refuses_options_meant_for_one_document(tmp_path):
    corpus = tmp_path / "docs.jsonl"
    corpus.write_text(json.dumps({"title": "Weekly Bulletin", "content": "Trains."}) + "\n")
    assert [d.title for d in read_file(corpus).documents] == ["Weekly Bulletin"]
    with pytest.raises(InputError, match="--date describes one PDF or HTML file"):
        read_file(corpus, {"date": "2024-01-01"})


def test_files_of_a_directory_are_the_readable_ones_under_it_without_sidecars(tmp_path, filing,
                                                                             page):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "more.JSONL").write_text("{}")
    filing.with_name(filing.name + ".json").write_text("{}")
    (tmp_path / "notes.txt").write_text("x")
    assert [p.name for p in files_of([tmp_path])] == [
        "aapl-20250329-10q-excerpt.htm", "pati-20141231-10q.pdf", "more.JSONL"]
    with pytest.raises(InputError, match="no such file"):
        files_of([tmp_path / "missing.pdf"])
    with pytest.raises(InputError, match=r"cannot index a \.txt file; Chordal reads \.pdf"):
        read_file(tmp_path / "notes.txt")


def test_a_page_the_reader_fails_on_is_named_in_what_the_file_gave(monkeypatch, filing):
    from shared.ingest import pdf

    def failing(self, lines, page=None):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(pdf.Pages, "tables", failing)
    read = read_file(filing, {"title": "Patriot Transportation 10-Q Q4 2014"})
    assert len(read.unread) == 30 and read.tables == 0 and read.pages == 30
    assert read.unread[0] == ("page 1: its tables were not read (RecursionError: maximum "
                              "recursion depth exceeded)")
    assert "Revolving credit" in read.documents[0].content


def test_a_table_the_reader_fails_on_in_a_page_leaves_its_text(monkeypatch, page):
    from shared.ingest import html

    monkeypatch.setattr(html, "tables_from_rows", lambda *a, **k: 1 / 0)
    read = read_file(page, {"title": "Apple 10-Q Q2 2025"})
    assert read.tables == 0 and read.unread
    assert all(u.endswith("was not read (ZeroDivisionError: division by zero); its text is "
                          "indexed") for u in read.unread)
    assert "Depreciation and amortization" in read.documents[0].content


def test_chordal_index_warns_of_a_file_read_in_part_and_indexes_it(monkeypatch, filing, capsys):
    from producers.cli.index import Reader
    from shared.ingest import pdf

    tables = pdf.Pages.tables

    def failing(self, lines, page=None):
        if page in (3, 5, 6, 9):
            raise IndexError("list index out of range")
        return tables(self, lines, page)

    monkeypatch.setattr(pdf.Pages, "tables", failing)
    (doc,) = Reader([filing], {"title": TITLE}).documents()
    err = " ".join(capsys.readouterr().err.split())
    assert doc.tables and "read in part, the rest is indexed: page 3: its tables were not " \
        "read (IndexError: list index out of range); page 5:" in err
    assert "; and 1 more; please report this with the file" in err
