"""The table reader on text laid out in columns: real filing pages as `pdftotext -layout`
writes them."""

from __future__ import annotations

from decimal import Decimal

from shared.tables.periods import columns_for
from shared.tables.read import tables_in_text, tables_in_words

from .conftest import DATA, row, titled


def _page(name: str) -> str:
    return (DATA / name).read_text()


def test_text_laid_out_in_columns_reads_as_the_pdf_words_of_the_same_page(filing_words):
    from_text = tables_in_text(_page("pati-20190930-10k-p44.txt"), page=44)
    from_words = tables_in_words(filing_words["pati-20190930-10k.pdf#44"], page=44)
    assert len(from_text) == len(from_words) == 1
    text, words = from_text[0], from_words[0]
    assert [c.period for c in text.columns] == [c.period for c in words.columns]
    assert [(r.label, r.section) for r in text.rows] == [(r.label, r.section) for r in words.rows]
    assert [[c.quantity for c in r.cells] for r in text.rows] == [
        [c.quantity.model_copy(update={"text": c.text}) for c in r.cells] for r in words.rows]
    capex = row(text, "Purchase of property and equipment")
    assert capex.cells[columns_for(text, "FY2019")[0]].quantity.absolute() == -9_576_000


def test_a_quarterly_income_statement_in_text_keeps_its_spanning_headers():
    tables = tables_in_text(_page("pati-20190630-10q-p5.txt"), page=5)
    income = titled(tables, "statements of income")
    assert (income.unit, income.scale) == ("USD", 3)
    assert [c.header for c in income.columns] == [
        "THREE MONTHS ENDED JUNE 30, 2019", "THREE MONTHS ENDED JUNE 30, 2018",
        "NINE MONTHS ENDED JUNE 30, 2019", "NINE MONTHS ENDED JUNE 30, 2018"]
    gain = row(income, "Loss (gain) on disposition of PP&E")
    assert [c.quantity.amount for c in gain.cells] == [
        Decimal(115), Decimal(-175), Decimal(-1441), Decimal(-674)]
    basic = row(income, "Net Income - Basic")
    assert (basic.cells[2].text, basic.cells[2].quantity.scale) == (".47", 0)


def test_rows_set_a_column_over_from_the_header_are_left_out_rather_than_misread():
    # pdftotext sets this page's cost rows one column right of the revenue rows
    tables = tables_in_text(_page("pati-20170930-10k-p45.txt"), page=45)
    for table in tables:
        for r in table.rows:
            if r.label == "Compensation and benefits":
                assert r.cells[columns_for(table, "FY2017")[0]].text == "48,109"
