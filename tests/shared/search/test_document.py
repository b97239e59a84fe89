import pytest
from pydantic import ValidationError

from shared.search import Document


def test_a_document_without_id_gets_the_same_id_each_time_it_is_loaded():
    record = {"title": "Tesla Q3 2023 Financial Report", "content": "x", "date": "2023-09-30"}
    assert Document(**record).id == Document(**record).id


def test_documents_differing_only_in_date_get_different_ids():
    a = Document(title="Weekly bulletin", content="x", date="2023-12-01")
    b = Document(title="Weekly bulletin", content="x", date="2023-12-08")
    assert a.id != b.id


def test_a_given_id_is_kept():
    assert Document(id="tsla-q3", title="T", content="x").id == "tsla-q3"


def test_a_month_date_is_refused_with_a_hint_to_give_a_full_iso_date():
    with pytest.raises(ValidationError) as caught:
        Document(title="T", content="x", date="2023-07")
    message = str(caught.value)
    assert "YYYY-MM-DD" in message and "2023-09-30" in message


def test_an_impossible_calendar_date_is_refused():
    with pytest.raises(ValidationError, match="not a calendar date"):
        Document(title="T", content="x", date="2023-02-30")


def test_a_blank_title_is_refused():
    with pytest.raises(ValidationError, match="must not be blank"):
        Document(title="   ", content="x")


def test_evidence_carries_what_a_footnote_prints():
    doc = Document(title="T", content="x", date="2023-09-30", url="https://example.org/t", source_type="news")
    ev = doc.evidence()
    assert (ev.doc_id, ev.title, ev.date, ev.url, ev.source_type) == (
        doc.id, "T", "2023-09-30", "https://example.org/t", "news")
