"""VALIDATE: checks a value, yields true/false with a note saying which check failed."""

from __future__ import annotations

import pytest

from shared.errors import ToolError
from shared.models import Evidence, ValidateStep
from shared.tables.quantities import parse_quantity
from shared.tools.validate import run_validate

OFFICIAL = Evidence(doc_id="q3", title="Tesla Q3 2023 Financial Report", date="2023-09-30",
                    source_type="official_report")
NEWS = Evidence(doc_id="n1", title="Battery plant news", source_type="news")


def validate(**checks) -> ValidateStep:
    return ValidateStep(id="V1", operation="VALIDATE", value="$Y", **checks)


def test_a_value_within_bounds_is_validated_and_keeps_its_evidence(ok):
    out = run_validate(validate(min=90, max=100), {"Y": ok("E2", "91.7", document=OFFICIAL)})
    assert (out.value, out.confidence, out.document) == (True, "validated", OFFICIAL)
    assert out.inputs == ["q:E2"] and "min 90" in out.note


def test_a_value_below_min_is_rejected_with_the_reason(ok):
    out = run_validate(validate(min=95), {"Y": ok("E2", "91.7", document=OFFICIAL)})
    assert (out.value, out.confidence) == (False, "rejected")
    assert out.note == "91.7 is below min 95"
    assert out.document == OFFICIAL


def test_bounds_compare_exactly_as_decimals(ok):
    assert run_validate(validate(max=0.3), {"Y": ok("E2", "0.30")}).value is True
    assert run_validate(validate(max=0.3), {"Y": ok("E2", "0.3000001")}).note == \
        "0.3000001 is above max 0.3"


def test_every_failed_check_is_named(ok):
    out = run_validate(validate(min=95, pattern=r"^\d+$", source_type=["official_report"]),
                       {"Y": ok("E2", "91.7", document=NEWS)})
    assert out.value is False
    assert out.note == ("91.7 is below min 95; 91.7 does not match pattern `^\\d+$`; "
                        "source_type news is not one of official_report")


def test_a_value_without_a_document_fails_a_source_type_check(ok):
    out = run_validate(validate(source_type=["official_report"]), {"Y": ok("E2", "91.7")})
    assert out.value is False and "no source document" in out.note


def test_a_text_that_is_not_a_number_fails_min_and_max(ok):
    out = run_validate(validate(min=0), {"Y": ok("E2", "unknown")})
    assert out.value is False and "unknown is not a number" in out.note


@pytest.mark.parametrize("kind, value, passes", [
    ("number", "435,059", True), ("number", "n/a", False),
    ("percent", "91.7%", True), ("percent", "91.7", True), ("percent", "$91.7", False),
    ("money", "$23.35 billion", True), ("money", "17.9%", False),
    ("date", "2023-09-30", True), ("date", "30 September 2023", True),
    ("date", "2023-02-30", False), ("date", "Q3 2023", False),
    ("text", "on target", True), ("text", "  ", False),
])
def test_type_checks_accept_values_as_documents_write_them(ok, kind, value, passes):
    out = run_validate(validate(type=kind), {"Y": ok("E2", value)})
    assert out.value is passes
    if not passes:
        assert value.strip() in out.note


def test_a_catastrophic_pattern_is_a_pattern_timeout_not_a_hang(ok):
    with pytest.raises(ToolError) as e:
        run_validate(validate(pattern=r"(a+)+$"), {"Y": ok("E2", "a" * 10_000 + "b")},
                     timeout_s=0.05)
    assert e.value.code == "PATTERN_TIMEOUT"


def test_a_pattern_that_does_not_compile_is_a_bad_pattern(ok):
    with pytest.raises(ToolError) as e:
        run_validate(validate(pattern="(oops"), {"Y": ok("E2", "x")})
    assert e.value.code == "BAD_PATTERN"


def test_the_type_check_reads_a_typed_values_quantity(ok):
    typed = ok("E2", "91.7", document=OFFICIAL).model_copy(
        update={"quantity": parse_quantity("91.7%")})  # the % was outside the capture
    out = run_validate(validate(type="money"), {"Y": typed})
    assert out.value is False and out.note == "91.7 is a percent (91.7%), not an amount of money"
    assert run_validate(validate(type="percent"), {"Y": typed}).value is True
    assert run_validate(validate(type="money"), {"Y": ok("E2", "91.7")}).value is True  # untyped
