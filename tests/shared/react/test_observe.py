"""Observations: what the model sees of a tool result — clean, short, never an error
disguised as data."""

from __future__ import annotations

import pytest

from shared.models import Evidence, StepResult
from shared.react.observe import NO_DATA, cut, observe, render_value

DOC = Evidence(doc_id="d1", title="Acme Robotics Q3 2023 Quarterly Report", date="2023-09-30")


def ok(value, operation="GET", **kw) -> StepResult:
    return StepResult(action_id="q:R1", step_id="R1", operation=operation, status="ok",
                      value=value, **kw)


def error(code, message) -> StepResult:
    return StepResult(action_id="q:R1", step_id="R1", operation="GET", status="error",
                      error_code=code, error_message=message)


def test_a_fetched_document_is_introduced_by_its_title_and_date():
    text = observe(ok("Acme reported revenue of $412.5 million.", document=DOC))
    assert text == ("[Acme Robotics Q3 2023 Quarterly Report, published 2023-09-30] "
                    "Acme reported revenue of $412.5 million.")


def test_html_loses_its_tags_scripts_and_entities():
    page = ("<html><head><title>t</title><script>var tracking = 1;</script></head><body>"
            "<h1>Results</h1><p>Revenue &amp; margin: <b>412.5</b></p></body></html>")
    assert render_value(page) == "Results\nRevenue & margin: 412.5"


def test_http_headers_before_the_body_are_dropped():
    response = ("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nServer: nginx\r\n\r\n"
                "Revenue was $412.5 million.")
    assert render_value(response) == "Revenue was $412.5 million."
    bare = "Content-Type: application/json\nX-Request-Id: 77\n\n{\"value\": 3}"
    assert render_value(bare) == "value: 3"


def test_text_that_merely_starts_with_a_label_is_kept():
    assert render_value("Note: revenue rose.") == "Note: revenue rose."


@pytest.mark.parametrize("value", [None, "", "null", "None", [], {}, "[]", "  ", {"id": 3, "url": "x"}])
def test_empty_results_and_null_become_no_data(value):
    assert render_value(value) == NO_DATA
    assert observe(ok(value, operation="COMPUTE")) == NO_DATA


def test_json_is_reduced_to_its_key_fields_without_ids_links_or_empties():
    value = {"id": "a81", "url": "https://x", "metadata": {"etag": "z"}, "notes": None,
             "revenue": 412.5, "title": "Acme Q3", "tags": ["robots", "q3"],
             "segments": {"name": "Logistics", "share": 0.4}}
    assert render_value(value) == ("title: Acme Q3; segments.name: Logistics; revenue: 412.5; "
                                   "tags: robots, q3; segments.share: 0.4")
    assert render_value('[{"name": "a", "id": 1}, {"name": "b"}]') == "1. name: a\n2. name: b"


def test_not_found_errors_become_no_data_with_the_reason_and_other_failures_errors():
    nothing = observe(error("NOT_FOUND", "step R1: no document matches source 'Acme'; check "
                                         "the title's spelling"))
    assert nothing == "[NO_DATA] step R1: no document matches source 'Acme'"
    broken = observe(error("BAD_PATTERN", "pattern has no capture group"))
    assert broken == "[ERROR] BAD_PATTERN: pattern has no capture group"


def test_search_snippets_are_numbered_with_their_documents():
    other = Evidence(doc_id="d2", title="Zenith Motors Q3 2023 Quarterly Report")
    text = observe(ok(["revenue of $412.5 million", "revenue of $298.1 million"],
                      operation="SEARCH", documents=[DOC, other]))
    assert text.splitlines() == [
        "1. [Acme Robotics Q3 2023 Quarterly Report, published 2023-09-30] revenue of $412.5 million",
        "2. [Zenith Motors Q3 2023 Quarterly Report] revenue of $298.1 million"]


def test_long_observations_are_cut_to_the_limit_at_a_word_boundary():
    text = observe(ok("word " * 400, document=DOC), limit=120)
    assert len(text) <= 120 and text.endswith(" …") and "wor …" not in text
    assert cut("short", 10) == "short"
