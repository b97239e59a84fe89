"""EXTRACT binds only values of their kind, typed with unit and scale and cited by page:
the wrong answers plans gave on real filings (a lone comma, a year, a table-of-contents
page number) become the next capture that is a value, or an honest NOT_A_VALUE."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from shared.errors import ToolError
from shared.models import Evidence, ExtractStep
from shared.tools.extract import run_extract

DATA = Path(__file__).parent / "data"
TEN_K = (DATA / "pati-20230930-10k.pages.txt").read_text()
ANNUAL = (DATA / "pati-20150930-ar.pages.txt").read_text()
FILING = Evidence(doc_id="pati-10k-2023", title="Patriot Transportation Holding 10-K 2023")
REPORT = Evidence(doc_id="pati-ar-2015", title="Patriot Transportation Annual Report 2015")


def extract(pattern: str, quantity: str | None = None, fallback: str | None = None):
    return ExtractStep(id="E2", operation="EXTRACT", source="$R1", pattern=pattern,
                       output_var="$V", quantity=quantity, fallback=fallback)


def test_a_lone_comma_is_passed_over_for_the_figure_the_row_states():
    out = run_extract(extract(r"Purchase of property and equipment.*?([\d,]+)"), TEN_K, FILING)
    assert out.value == "12,088" and out.value != ","
    assert (out.quantity.kind, out.quantity.unit, out.quantity.scale) == ("money", "USD", 3)
    assert "passed over ','" in out.note and "has no digit" in out.note


def test_a_pattern_that_captures_only_commas_is_not_a_value_and_says_so():
    with pytest.raises(ToolError) as e:
        run_extract(extract(r"capital expenditures.*?([\d,]+)"), TEN_K, FILING)
    assert e.value.code == "NOT_A_VALUE"
    assert "',' ('Patriot Transportation Holding 10-K 2023' page 20) has no digit" \
        in e.value.message


def test_a_year_is_never_taken_for_the_amount():
    with pytest.raises(ToolError) as e:
        run_extract(extract(r"special dividend was paid on.*?([\d,]+)"), TEN_K, FILING)
    assert e.value.code == "NOT_A_VALUE"
    assert "is a year, not an amount" in e.value.message
    assert "is a day of a month" in e.value.message


def test_revenue_followed_by_the_years_of_its_columns_is_not_found_rather_than_2015():
    with pytest.raises(ToolError) as e:
        run_extract(extract(r"total revenue.*?(\d[\d,]*)", "money"), ANNUAL, REPORT)
    assert e.value.code == "NOT_A_VALUE"
    assert "'2015' ('Patriot Transportation Annual Report 2015' page 11) is a year" \
        in e.value.message


def test_a_table_of_contents_page_number_is_not_a_value():
    with pytest.raises(ToolError) as e:
        run_extract(extract(r"Financial Statements and Supplementary Data.*?([\d,]+)"),
                    TEN_K, FILING)
    assert e.value.code == "NOT_A_VALUE"
    assert "'23' ('Patriot Transportation Holding 10-K 2023' page 3) is a page number" \
        in e.value.message


def test_the_fallback_stays_the_fallback_when_nothing_captured_is_a_value():
    out = run_extract(extract(r"Financial Statements and Supplementary Data.*?([\d,]+)",
                              fallback="n/a"), TEN_K, FILING)
    assert (out.value, out.confidence) == ("n/a", "fallback")
    assert "is a page number" in out.note


def test_the_evidence_names_the_page_the_value_is_on():
    out = run_extract(extract(r"Dividends paid.*?(\d[\d,]*)"), TEN_K, FILING)
    assert out.document.page == 28
    assert "page 28" in out.document.cite()
    assert out.value == "12,808" and out.quantity.absolute() == Decimal(12_808_000)


def test_a_figure_read_from_a_table_in_thousands_carries_the_tables_scale():
    out = run_extract(extract(r"Compensation and benefits\s+(\d[\d,]*)"), TEN_K, FILING)
    assert (out.value, out.quantity.amount, out.quantity.scale) == ("43,493", Decimal(43493), 3)


def test_the_scale_of_a_sentence_is_read_from_its_words():
    # TAT-QA dev (CC BY 4.0): a paragraph of a real annual report
    text = ("Net profit/(loss) after tax was $(9.8) million (2018: $6.6 million). "
            "Non-statutory underlying earnings before interest, tax, depreciation and "
            "amortisation (EBITDA) improved from $62.6 million in FY18 to $85.1 million in FY19.")
    out = run_extract(extract(r"to \$(\d+(?:\.\d+)?) million in FY19"), text, REPORT)
    q = out.quantity
    assert (out.value, q.kind, q.unit, q.amount, q.scale) == ("85.1", "money", "USD",
                                                             Decimal("85.1"), 6)


def test_a_text_capture_carries_no_quantity():
    text = "The Company's President and CEO is Robert E. Sandlin."
    out = run_extract(extract(r"CEO is ([A-Z][\w.]*(?: [A-Z][\w.]*)+)"), text, REPORT)
    assert out.value == "Robert E. Sandlin." and out.quantity is None


def test_the_built_in_layers_pass_over_a_page_number_as_well():
    toc = TEN_K[:TEN_K.index("PART II")]
    with pytest.raises(ToolError) as e:
        run_extract(extract(r"Risk Factors were (\d+)", "number"), toc, FILING)
    assert e.value.code == "NOT_A_VALUE" and "'7'" in e.value.message
