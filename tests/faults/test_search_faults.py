"""The search store down for a while: GET retries with backoff inside the step, then
reports SEARCH_UNAVAILABLE; the query still finishes (no query waits on the store). A
document that holds the searched word tens of thousands of times costs a search no more
than a short one. A filing keeps its pages: a SEARCH hit cites the page it is on."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from shared.search.document import Document
from shared.ingest import read_file

from .conftest import TESLA, assert_one_outcome, plan, wait_all

pytestmark = pytest.mark.faults


def test_a_search_outage_shorter_than_the_retries_is_invisible_and_a_longer_one_is_reported(
        faulty_stack):
    p = faulty_stack()
    brief = p.submit("yield?", plan(f"[down-until {time.time() + 0.3}] {TESLA}"))
    long = p.submit("yield?", plan(f"[down-until {time.time() + 600}] {TESLA}"))
    records = wait_all(p.store, [brief.id, long.id], 30)
    assert_one_outcome(p.store, records)

    ok = records[brief.id]
    assert ok.status == "done" and ok.steps[0].status == "ok"
    assert ok.answer.text.startswith("Battery yield was 9")

    down = records[long.id]
    get, extract = down.steps
    assert get.error_code == "SEARCH_UNAVAILABLE"
    assert get.error_message.endswith("(after 3 attempts)")
    assert "injected fault" in get.error_message
    assert extract.error_code == "INPUT_FAILED"


def minutes_archive(times: int = 40_000) -> Document:
    """About 5 MB of text that holds the word "board" `times` times."""
    entry = "The board met and approved the minutes without dissent. "
    filler = "Nothing else was recorded on that page of the archive. " * 2
    return Document(title="Board Minutes Archive", content=(entry + filler) * times,
                    date="2024-03-01")


def test_a_search_in_a_document_holding_the_word_forty_thousand_times_ends_in_time(
        faulty_stack):
    p = faulty_stack(documents=[minutes_archive()])
    search = {"steps": [{"id": "E1", "operation": "SEARCH", "query": "board minutes",
                         "top_k": 3, "output_var": "$HITS"}],
              "answer": "Found: {{ HITS }}"}
    searched = p.submit("What did the board approve?", search, deadline_s=30)
    heuristic = p.submit("What did the board approve in its minutes?", deadline_s=30)
    records = wait_all(p.store, [searched.id, heuristic.id], 60)
    assert_one_outcome(p.store, records)
    hits = records[searched.id]
    assert hits.status == "done", hits.error
    assert "board met and approved the minutes" in hits.steps[0].value[0]
    assert records[heuristic.id].status == "done", records[heuristic.id].error


FILING = Path(__file__).parents[1] / "fixtures" / "documents" / "pati-20141231-10q.pdf"
FILING_TITLE = "Patriot Transportation Holding Form 10-Q for the quarter ended December 31, 2014"


def test_a_search_hit_in_a_filing_cites_its_page_and_a_get_of_the_filing_does_not(faulty_stack):
    (filing,) = read_file(FILING, {"title": FILING_TITLE, "date": "2015-02-11"}).documents
    p = faulty_stack(documents=[filing])
    search = {"steps": [{"id": "S1", "operation": "SEARCH", "top_k": 1, "output_var": "$HITS",
                         "query": "revolving credit uncollateralized"}],
              "answer": "Debt: {{ HITS }}"}
    whole = {"steps": [{"id": "E1", "operation": "GET", "source": FILING_TITLE,
                        "output_var": "$R1"}], "answer": "Read {{ R1 | length }} characters."}
    missing = {"steps": [{"id": "E1", "operation": "GET", "output_var": "$R1",
                          "source": "Zenith Freight Form 10-Q for the quarter ended "
                                    "December 31, 2014"}], "answer": "{{ R1 }}"}
    queries = [p.submit("debt?", plan, deadline_s=30) for plan in (search, whole, missing)]
    records = wait_all(p.store, [q.id for q in queries], 60)
    assert_one_outcome(p.store, records)
    searched, read, nothing = (records[q.id] for q in queries)
    assert searched.status == "done", searched.error
    assert "Revolving credit (uncollateralized)" in searched.answer.text
    (note,) = searched.answer.footnotes
    assert note.evidence.page == 8 and "page 8" in searched.answer.render()
    assert read.answer.text == f"Read {len(filing.content)} characters."
    assert read.answer.footnotes[0].evidence.page is None  # the whole filing: no one page
    assert nothing.steps[0].error_code == "NOT_FOUND"
    assert f"closest: '{FILING_TITLE}'" in nothing.steps[0].error_message
