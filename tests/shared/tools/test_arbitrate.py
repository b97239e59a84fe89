"""ARBITRATE: prefer rules choose among conflicting values; the note says why."""

from __future__ import annotations

import pytest

from shared.errors import ToolError
from shared.models import ArbitrateStep, Evidence
from shared.tools.arbitrate import parse_rule, run_arbitrate

OFFICIAL = Evidence(doc_id="q3", title="Tesla Q3 2023 Financial Report", date="2023-09-30",
                    source_type="official_report")
NEWS = Evidence(doc_id="n1", title="Battery plant news", date="2023-10-12", source_type="news")
BLOG = Evidence(doc_id="b1", title="EV blog", date="2023-08-01", source_type="blog")


def arbitrate(*prefer: str, sources=("$A", "$B")) -> ArbitrateStep:
    return ArbitrateStep(id="R1", operation="ARBITRATE", sources=list(sources), prefer=list(prefer))


def test_a_source_type_rule_chooses_the_official_value_and_explains_why(ok):
    inputs = {"A": ok("E1", "91.7", document=OFFICIAL), "B": ok("E2", "92.1", document=NEWS)}
    out = run_arbitrate(arbitrate('source_type == "official_report"'), inputs)
    assert (out.value, out.document, out.confidence) == ("91.7", OFFICIAL, "arbitrated")
    assert out.note == ('chose $A = 91.7 (official_report, 2023-09-30) over $B = 92.1 '
                        '(news, 2023-10-12) by rule source_type == "official_report"')
    assert out.inputs == ["q:E1", "q:E2"]


def test_newest_and_oldest_compare_document_dates(ok):
    inputs = {"A": ok("E1", "91.7", document=OFFICIAL), "B": ok("E2", "92.1", document=NEWS)}
    assert run_arbitrate(arbitrate("newest"), inputs).value == "92.1"
    assert run_arbitrate(arbitrate("oldest"), inputs).value == "91.7"


def test_majority_compares_numbers_exactly(ok):
    inputs = {"A": ok("E1", "92.1", document=NEWS), "B": ok("E2", "91.7", document=OFFICIAL),
              "C": ok("E3", "91.70", document=BLOG)}
    out = run_arbitrate(arbitrate("majority", sources=("$A", "$B", "$C")), inputs)
    assert (out.value, out.document) == ("91.7", OFFICIAL)
    assert "by rule majority" in out.note


def test_rules_apply_in_order_until_one_decides(ok):
    inputs = {"A": ok("E1", "90.0", document=BLOG), "B": ok("E2", "91.7", document=OFFICIAL),
              "C": ok("E3", "92.1", document=NEWS)}
    step = arbitrate('source_type == "regulation"', "majority", "newest",
                     sources=("$A", "$B", "$C"))
    out = run_arbitrate(step, inputs)
    assert out.value == "92.1" and "by rule newest" in out.note


def test_when_no_rule_decides_the_first_is_taken_and_the_note_says_so(ok):
    inputs = {"A": ok("E1", "91.7"), "B": ok("E2", "92.1")}
    out = run_arbitrate(arbitrate("majority", "newest"), inputs)
    assert out.value == "91.7"
    assert "no rule decided" in out.note and "took the first remaining, $A" in out.note


def test_agreeing_sources_need_no_rule(ok):
    inputs = {"A": ok("E1", "91.7", document=OFFICIAL), "B": ok("E2", "91.70", document=NEWS)}
    out = run_arbitrate(arbitrate("newest"), inputs)
    assert (out.value, out.document) == ("91.7", OFFICIAL) and "agrees" in out.note


def test_failed_sources_are_skipped_and_named(ok, failed):
    inputs = {"A": failed("E1", "NOT_FOUND"), "B": ok("E2", "92.1", document=NEWS)}
    out = run_arbitrate(arbitrate('source_type == "official_report"'), inputs)
    assert out.value == "92.1" and out.inputs == ["q:E2"]
    assert "only source" in out.note and "skipped $A (NOT_FOUND" in out.note


def test_every_source_failing_is_no_inputs(failed):
    with pytest.raises(ToolError) as e:
        run_arbitrate(arbitrate(), {"A": failed("E1"), "B": failed("E2", "NO_MATCH")})
    assert e.value.code == "NO_INPUTS" and "$A" in e.value.message and "$B" in e.value.message


@pytest.mark.parametrize("rule", ["prefer official reports", "source_type = 'news'",
                                  'source_type == "news', "Newest first"])
def test_an_unparsable_rule_is_a_bad_rule_listing_the_accepted_forms(ok, rule):
    with pytest.raises(ToolError) as e:
        run_arbitrate(arbitrate(rule), {"A": ok("E1", "1"), "B": ok("E2", "2")})
    assert e.value.code == "BAD_RULE" and repr(rule) in e.value.message
    assert 'source_type == "TYPE", newest, oldest, majority' in e.value.message


def test_source_type_rules_accept_either_quote():
    assert parse_rule("source_type == 'news'").source_type == "news"
    assert parse_rule(' source_type=="official_report" ').source_type == "official_report"
