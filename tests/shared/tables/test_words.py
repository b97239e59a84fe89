"""The table reader on real PDF pages: Patriot Transportation's filings as pdfplumber's
words (fiscal years end September 30)."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest

from shared.errors import InputError, ToolError
from shared.models import Evidence, ExtractStep
from shared.planners.metric import When
from shared.planners.rows import Miss, choose_cell, item_words
from shared.models.table import Cell, Column, Row, Table
from shared.tools.cells import read_cell
from shared.tools.rows import of_a_statement, term_part, under_changes
from shared.tables.periods import columns_for
from shared.tables.read import Pages, table_from_rows, tables_in_words
from shared.tables.units import unit_clause

from .conftest import row, titled


def test_a_cash_flow_statement_gives_capital_expenditure_for_each_fiscal_year(filing_words):
    tables = tables_in_words(filing_words["pati-20190930-10k.pdf#44"], page=44)
    flows = titled(tables, "statements of cash flows")
    assert (flows.page, flows.unit, flows.scale) == (44, "USD", 3)
    assert [c.period for c in flows.columns] == [
        "2018-10-01..2019-09-30", "2017-10-01..2018-09-30", "2016-10-01..2017-09-30"]
    capex = row(flows, "Purchase of property and equipment")
    assert capex.section == "Cash flows from investing activities"
    for asked in ("FY2018", "2018", "fiscal 2018", "FY18"):
        (column,) = columns_for(flows, asked)
        assert capex.cells[column].quantity.absolute() == Decimal(-4_656_000)
    gain = row(flows, "Gain on asset dispositions")  # "(1,645" and ")" are two words
    assert gain.cells[0].quantity.amount == Decimal(-1645)
    total = row(flows, "Net cash provided by operating activities")
    assert total.total and total.cells[2].text == "10,660"
    wrapped = row(flows, "Long-term insurance liabilities and other long-term liabilities")
    assert [c.text for c in wrapped.cells] == ["1,124", "10", "(3)"]


def test_a_balance_sheet_as_of_september_30_names_its_columns_by_date(filing_words):
    tables = tables_in_words(filing_words["pati-20190930-10k.pdf#43"], page=43)
    sheet = titled(tables, "balance sheets")
    assert [c.period for c in sheet.columns] == ["2019-09-30", "2018-09-30"]
    payables = row(sheet, "Total current liabilities")
    for asked in ("FY2019", "2019", "September 30, 2019", "2019-09-30"):
        assert columns_for(sheet, asked) == [0]
    assert payables.cells[1].quantity.amount == Decimal(10163)
    assert row(sheet, "Accounts payable").section == "Current liabilities"
    receivable = row(sheet, "Accounts receivable (net of allowance for doubtful accounts of "
                            "$133 and $153, respectively)")
    assert receivable.cells[0].text == "6,588"


def test_an_income_statement_reads_three_years_and_per_share_rows_in_units(filing_words):
    tables = tables_in_words(filing_words["pati-20190930-10k.pdf#42"], page=42)
    income = titled(tables, "statements of income - years")
    assert [c.header for c in income.columns] == [
        "Years Ended September 30, 2019", "Years Ended September 30, 2018",
        "Years Ended September 30, 2017"]
    revenue = row(income, "Total revenues")
    assert revenue.cells[columns_for(income, "FY2017")[0]].quantity.absolute() == 112_165_000
    diluted = row(income, "Diluted", section="Earnings per common share")
    assert (diluted.cells[0].quantity.kind, diluted.cells[0].quantity.amount,
            diluted.cells[0].quantity.scale) == ("money", Decimal(".53"), 0)
    shares = row(income, "-diluted earnings per common share")
    assert (shares.cells[0].quantity.kind, shares.cells[0].quantity.scale) == ("number", 3)
    gain = row(income, "Gain on disposition of PP&E")
    assert gain.cells[1].quantity.amount == Decimal(-1030)


def test_a_quarterly_report_tells_three_months_from_nine_months(filing_words):
    tables = tables_in_words(filing_words["pati-20190630-10q.pdf#5"], page=5)
    income = titled(tables, "statements of income")
    assert [c.period for c in income.columns] == [
        "2019-Q2", "2018-Q2", "2018-10-01..2019-06-30", "2017-10-01..2018-06-30"]
    revenue = row(income, "Transportation revenues")
    assert columns_for(income, "Q2 2019") == columns_for(income, "2019-Q2") == [0]
    assert columns_for(income, "Q3 FY2019") == [0]  # the fiscal year starts in October
    assert revenue.cells[columns_for(income, "Nine months ended June 30, 2018")[0]].text == (
        "77,391")
    assert columns_for(income, "June 30, 2019") == [0, 2]  # for the caller: ambiguous
    assert columns_for(income, "FY2019") == []  # no column is the fiscal year


def test_a_quarterly_balance_sheet_names_the_year_end_by_its_date_only(filing_words):
    tables = tables_in_words(filing_words["pati-20190630-10q.pdf#4"], page=4)
    sheet = titled(tables, "balance sheets")
    assert (sheet.scale, [c.period for c in sheet.columns]) == (3, ["2019-06-30", "2018-09-30"])
    assert columns_for(sheet, "September 30, 2018") == [1]
    assert columns_for(sheet, "FY2018") == []  # June 30 and September 30: not year ends
    overdraft = row(sheet, "Bank overdraft")  # a dash centred under right-aligned figures
    assert [c.quantity.amount for c in overdraft.cells] == [Decimal(0), Decimal(625)]


def test_headers_set_wide_are_parted_between_their_columns(filing_words):
    tables = tables_in_words(filing_words["pati-20150331-10q.pdf#29"], page=29)
    assert len(tables) == 3
    for table in tables:
        assert [c.period for c in table.columns] == ["2015-Q1", "2014-10-01..2015-03-31"]
    ratio = row(tables[1], "Adjusted operating ratio")
    assert [(c.quantity.kind, c.quantity.amount) for c in ratio.cells] == [
        ("percent", Decimal("94.9")), ("percent", Decimal("94.5"))]


def test_prose_beside_a_table_is_not_part_of_its_labels(filing_words):
    tables = tables_in_words(filing_words["pati-20180930-ar.pdf#24"], page=24)
    intangibles = titled(tables, "gross amounts and accumulated amortization")
    assert [r.label for r in intangibles.rows] == [
        "Customer value (useful life 10.5 years)", "Trade name (useful life 3.5 years)",
        "Non-compete (useful life 5 years)", ""]
    assert [c.header for c in intangibles.columns][:2] == [
        "September 30, 2018 Gross Amount", "September 30, 2018 Accumulated Amortization"]


def test_a_figure_a_pdf_splits_into_two_words_is_one_cell(filing_words):
    tables = tables_in_words(filing_words["pati-20150930-10k.pdf#47"], page=47)
    results = titled(tables, "")
    revenue = row(results, "Total Revenues")
    assert [c.text for c in revenue.cells] == [
        "122,882", "100.0%", "129,162", "100.0%", "112,120", "100.0%"]
    amounts = columns_for(results, "FY2013", kind="money")
    assert [revenue.cells[j].text for j in amounts] == ["112,120"]
    assert columns_for(results, "FY2013", kind="percent") == [5]


def test_a_five_year_summary_reads_newest_first_with_leader_dots(filing_words):
    tables = tables_in_words(filing_words["pati-20150930-ar.pdf#7"], page=7)
    summary = titled(tables, "five year summary")
    assert [c.header for c in summary.columns] == ["2015", "2014", "2013", "2012", "2011(c)"]
    revenues = row(summary, "Revenues")
    assert revenues.cells[columns_for(summary, "FY2015")[0]].quantity.absolute() == 122_882_000
    assert revenues.cells[columns_for(summary, "fiscal 2011")[0]].text == "97,801"
    employees = row(summary, "Number of employees")
    assert (employees.cells[0].quantity.kind, employees.cells[0].quantity.scale) == ("number", 0)
    quarterly = titled(tables, "quarterly results")  # "First" over "2015": a fiscal quarter
    assert all(c.period is None for c in quarterly.columns)


def test_a_word_that_is_not_a_position_and_text_is_refused_naming_it():
    with pytest.raises(InputError, match=r"word 2 of line 1 is \{'text': '1,763'\}"):
        tables_in_words([[(38.5, 52.9, "Net"), {"text": "1,763"}]])


def test_periods_set_flush_right_over_their_years_head_their_own_pair(filing_words):
    # Microsoft's 10-Q for the quarter ended December 31, 2022, page 4: "Three Months
    # Ended" and "Six Months Ended" stand flush right over "2022 2021 | 2022 2021"
    tables = tables_in_words(filing_words["msft-20221231-10q.pdf#4"], page=4)
    comprehensive = tables[0]
    assert [c.period for c in comprehensive.columns] == ["2022-Q4", "2021-Q4", "2022-H2",
                                                         "2021-H2"]
    assert [c.text for c in row(comprehensive, "Net income").cells] == [
        "$16,425", "$18,765", "$33,981", "$39,270"]


def test_a_unit_line_between_the_column_heads_and_the_figures_ends_no_header(filing_words):
    # NVIDIA's 10-Q for the quarter ended October 29, 2023, page 24: "(In millions)" set
    # under "Three Months Ended | Nine Months Ended" and their dates, above "Revenue:"
    tables = tables_in_words(filing_words["nvda-20231029-10q.pdf#24"], page=24)
    markets = titled(tables, "specialized markets")
    assert [c.period for c in markets.columns] == [
        "2023-08-01..2023-10-29", "2022-08-01..2022-10-30", "2023-02-01..2023-10-29",
        "2022-02-01..2022-10-30"]
    assert markets.scale == 6
    assert row(markets, "Data Center").cells[0].text == "$14,514"


def test_a_lead_in_at_the_page_margin_gives_the_table_indented_under_it_its_scale(
        filing_words):
    # Apple's 10-K for fiscal 2024: "… were as follows (dollars in millions):" set at the
    # page's margin, the labels indented under "Gross margin:"; read only from the labels'
    # margin on, the lead-in was lost and the table had no scale
    tables = tables_in_words(filing_words["aapl-20240928-10k.pdf#27"], page=27)
    margin = tables[0]
    assert margin.title == "Gross Margin" and (margin.unit, margin.scale) == ("USD", 6)
    total = row(margin, "Total gross margin")
    assert total.cells[0].quantity.amount == Decimal(180_683)


def test_a_balance_is_never_read_from_a_years_change(filing_words):
    # Patriot's fiscal 2019 10-K: "Accounts receivable" under "Net changes in operating
    # assets and liabilities" is fiscal 2018's change, (224), in the column of the year
    # ended September 30, 2018; the balance that day, 7,866, is the balance sheet's
    flows = titled(tables_in_words(filing_words["pati-20190930-10k.pdf#44"], page=44),
                   "statements of cash flows")
    sheet = titled(tables_in_words(filing_words["pati-20190930-10k.pdf#43"], page=43),
                   "balance sheets")
    tables = {"flows": [flows], "both": [flows, sheet]}

    def cell(doc: str, period: str, row: str = "Accounts receivable"):
        step = ExtractStep(id="E2", operation="EXTRACT", source="$R1", row=row,
                           period=period)
        return read_cell(step, [Evidence(doc_id=doc, title=doc)], tables.__getitem__)

    assert cell("both", "2018-09-30").value == "7,866"
    assert cell("both", "FY2018").value == "7,866"  # the balance at the year's end
    for period in ("2018-09-30", "FY2018"):
        with pytest.raises(ToolError) as refused:
            cell("flows", period)
        assert refused.value.code == "NOT_FOUND"
        assert "a change over a period" in refused.value.message
    assert cell("flows", "FY2018", "change in accounts receivable").value == "(224)"
    # nor does the heuristic planner choose the change's cell, unless a change is asked
    item = item_words("accounts receivable")
    day = When("2018-09-30", (date(2018, 9, 30), date(2018, 9, 30)))
    year = When("2018", (date(2018, 1, 1), date(2018, 12, 31)))
    assert isinstance(choose_cell(item, day, [flows], columns_for), Miss)
    assert isinstance(choose_cell(item, year, [flows], columns_for), Miss)
    assert choose_cell(item, year, [flows], columns_for,
                       text="change in accounts receivable").cell.text == "(224)"
    # the block's total is no change: Apple writes it without "net" or "total"
    cash = Row(label="Cash generated by operating activities", cells=[],
               section="Changes in operating assets and liabilities")
    assert not under_changes(cash) and under_changes(cash.model_copy(update={
        "label": "Inventories"}))


def test_current_and_non_current_rows_of_one_name_are_neither_the_row_asked(filing_words):
    # Apple's balance sheet: "Term debt" under "Current liabilities:" (9,822) and under
    # "Non-current liabilities:" (95,281); the heading with fewer words is not the nearer
    tables = tables_in_words(filing_words["aapl-20240928-10k.pdf#34"], page=34)
    day = When("2023-09-30", (date(2023, 9, 30), date(2023, 9, 30)))
    assert isinstance(choose_cell(item_words("term debt"), day, tables, columns_for), Miss)
    assert isinstance(choose_cell(item_words("marketable securities"), day, tables,
                                  columns_for), Miss)
    chosen = choose_cell(item_words("non-current term debt"), day, tables, columns_for)
    assert chosen.cell.text == "95,281"
    chosen = choose_cell(item_words("current marketable securities"), day, tables, columns_for)
    assert chosen.cell.text == "31,590"
    chosen = choose_cell(item_words("total current liabilities"), day, tables, columns_for)
    assert chosen.cell.text == "145,308"


def test_a_part_of_a_line_item_is_not_the_line_item(filing_words):
    # Patriot's balance sheet: "Accrued liabilities, other" (398) under "Current
    # liabilities" beside "Accrued payroll and benefits" and "Accrued insurance"; the
    # library's "accrued and other current liabilities" joins two items, the label is one
    sheet = titled(tables_in_words(filing_words["pati-20190930-10k.pdf#43"], page=43),
                   "balance sheets")
    step = ExtractStep(id="E2", operation="EXTRACT", source="$R1", row="accrued liabilities",
                       period="2019-09-30")
    doc = Evidence(doc_id="pati", title="Patriot Transportation Holding Form 10-K fiscal 2019")
    with pytest.raises(ToolError) as refused:
        read_cell(step, [doc], lambda _: [sheet])
    assert refused.value.code == "NOT_FOUND"
    step = step.model_copy(update={"row": "accrued liabilities, other"})
    assert read_cell(step, [doc], lambda _: [sheet]).value == "398"


def test_the_current_part_of_a_line_item_is_not_its_total(filing_words):
    # Apple's balance sheet states "Deferred revenue" (8,249) under "Current liabilities:"
    # only; its total, $12.8 billion, is in a note's prose
    tables = tables_in_words(filing_words["aapl-20240928-10k.pdf#34"], page=34)
    day = When("2024-09-28", (date(2024, 9, 28), date(2024, 9, 28)))
    doc = Evidence(doc_id="aapl", title="Apple Inc. Form 10-K for fiscal 2024")

    def cell(row: str):
        step = ExtractStep(id="E2", operation="EXTRACT", source="$R1", row=row,
                           period="2024-09-28")
        return read_cell(step, [doc], lambda _: tables)

    assert cell("deferred revenue").value == "8,249"
    assert cell("current deferred revenue").value == "8,249"
    with pytest.raises(ToolError) as refused:
        cell("total deferred revenue")
    assert refused.value.code == "NOT_FOUND" and "current part" in refused.value.message
    assert isinstance(choose_cell(item_words("total deferred revenue"), day, tables,
                                  columns_for, text="total deferred revenue"), Miss)
    assert cell("total current liabilities").value == "176,392"
    # nor is the deferred tax on it (page 44: "Deferred tax assets:" over "Deferred
    # revenue" 3,413, under "2024" of a note dated "As of September 28, 2024 and
    # September 30, 2023"), which the question's words name as closely
    tables += tables_in_words(filing_words["aapl-20240928-10k.pdf#44"], page=44)
    assert any(r.label == "Deferred revenue" and r.section == "Deferred tax assets"
               for t in tables if t.page == 44 for r in t.rows)
    assert isinstance(choose_cell(item_words("total deferred revenue"), day, tables,
                                  columns_for, text="total deferred revenue"), Miss)
    with pytest.raises(ToolError) as refused:
        cell("total deferred revenue")
    assert refused.value.code == "NOT_FOUND"
    assert cell("deferred tax assets: deferred revenue").value == "3,413"


def _palantir(filing_words, *pages: int):
    return [t for p in pages
            for t in tables_in_words(filing_words[f"pltr-20221231-10k.pdf#{p}"], page=p)]


def _read(tables, row_asked: str, period: str):
    step = ExtractStep(id="E2", operation="EXTRACT", source="$R1", row=row_asked,
                       period=period)
    doc = Evidence(doc_id="pltr", title="Palantir Technologies Inc. Form 10-K for 2022")
    return read_cell(step, [doc], lambda _: tables)


def test_a_line_item_stated_as_current_and_noncurrent_parts_is_their_sum_unless_one_is_asked(
        filing_words):
    # Palantir's balance sheet: "Deferred revenue" 183,350 under "Current liabilities:"
    # and "Deferred revenue, noncurrent" 9,965; their total is stated nowhere, so the item
    # asked without a term (or as a total) is the two added, and the answer says so
    tables = _palantir(filing_words, 85)
    day = When("2022-12-31", (date(2022, 12, 31), date(2022, 12, 31)))
    for asked in ("deferred revenue", "total deferred revenue"):
        out = _read(tables, asked, "2022-12-31")
        assert out.value == "193,315" and out.quantity.amount == Decimal("193315")
        assert out.quantity.scale == 3 and out.quantity.unit == "USD"
        assert "183,350" in out.note and "9,965" in out.note and "added" in out.note
        assert "183,350" in out.quote and "9,965" in out.quote and out.document.page == 85
    assert isinstance(choose_cell(item_words("deferred revenue"), day, tables, columns_for,
                                  text="deferred revenue"), Miss)
    assert _read(tables, "current deferred revenue", "2022-12-31").value == "183,350"
    assert _read(tables, "deferred revenue, noncurrent", "2022-12-31").value == "9,965"
    # "Operating lease liabilities" beside "Operating lease liabilities, noncurrent"
    assert _read(tables, "operating lease liabilities", "2022-12-31").value == "249,404"
    assert _read(tables, "accounts payable", "2022-12-31").value == "$44,788"


def test_a_part_by_term_alone_is_never_the_total_asked(filing_words):
    # Palantir's balance sheet without the page that would state a non-current part: the
    # current part is not the total asked, and an item stated once is itself
    tables = [t for t in _palantir(filing_words, 85)]
    only_current = [t.model_copy(update={"rows": [r for r in t.rows if "noncurrent" not in
                                                  r.label.lower()]}) for t in tables]
    with pytest.raises(ToolError) as part:
        _read(only_current, "total deferred revenue", "2022-12-31")
    assert part.value.code == "NOT_FOUND" and "current part" in part.value.message
    assert _read(only_current, "deferred revenue", "2022-12-31").value == "183,350"


def test_a_row_a_footnote_qualifies_does_not_outrank_the_line_item(filing_words):
    # "Research and development expenses (1)" 265,808 in the reconciliation of segment
    # contribution, "(1) Excludes stock-based compensation expense"; the statement of
    # operations states "Research and development" 359,679 under "Operating expenses:"
    tables = _palantir(filing_words, 86, 114)
    marked = [r for t in tables for r in t.rows if r.marked]
    assert {r.label for r in marked} == {"Research and development expenses",
                                         "General and administrative expenses",
                                         "Rest of world"}  # "Rest of world (1)"
    # the statement of operations defines the line item: its figure is read, and the
    # reconciliation's is named beside it
    out = _read(tables, "research and development expenses", "2022")
    assert out.value == "359,679" and "265,808" in out.note and out.document.page == 86
    year = When("2022", (date(2022, 1, 1), date(2022, 12, 31)))
    chosen = choose_cell(item_words("research and development expense"), year, tables,
                         columns_for, text="research and development expense")
    assert isinstance(chosen, Miss) or chosen.cell.text == "359,679"
    assert _read(tables, "total stock-based compensation expense", "2022").value == "564,798"


def test_a_notes_pages_running_header_gives_its_unit_to_every_table_on_it(filing_words):
    # Rocket Lab's 10-K for 2023, page 89: "NOTES TO CONSOLIDATED FINANCIAL STATEMENTS
    # (CONTINUED)" over "(In thousands, except share and per share data)", then a fair
    # value rollforward and "7. INVENTORIES … consisted of the following:" with no unit
    tables = tables_in_words(filing_words["rklb-20231231-10k.pdf#89"], page=89)
    inventories = titled(tables, "inventories")
    assert inventories.scale == 3
    assert row(inventories, "Total inventories").cells[1].quantity.absolute() == 92_279_000


def test_a_year_asked_reads_the_years_column_never_the_deferred_tax_on_it(filing_words):
    # "Depreciation and amortization" 29,947 in the 2022 column of the cash flow statement,
    # and (7,296) under "Deferred tax liabilities" at December 31, 2022: the deferred tax
    # on it, read only when asked so (or when a report's one table is about deferred taxes)
    tables = [t for n in (68, 100)
              for t in tables_in_words(filing_words[f"rklb-20231231-10k.pdf#{n}"], page=n)]
    for when in (When("2022", (date(2022, 1, 1), date(2022, 12, 31))),
                 When("2022-12-31", (date(2022, 12, 31), date(2022, 12, 31)))):
        chosen = choose_cell(item_words("depreciation and amortization"), when, tables,
                             columns_for, text="depreciation and amortization")
        assert chosen.cell.text == "29,947", when
    day = When("2022-12-31", (date(2022, 12, 31), date(2022, 12, 31)))
    taxes = [t for t in tables if any(r.section == "Deferred tax liabilities" for r in t.rows)]
    chosen = choose_cell(item_words("depreciation and amortization"), day, taxes,
                         columns_for, text="depreciation and amortization")
    assert chosen.cell.text == "(7,296)"
    asked = "deferred tax liabilities: depreciation and amortization"
    chosen = choose_cell(item_words(asked), day, tables, columns_for, text=asked)
    assert chosen.cell.text == "(7,296)"


def test_a_deferred_tax_labelled_as_the_item_is_not_read_when_the_item_is_not_stated(
        filing_words):
    # Tesla's 10-K for 2022: the cash flow statement (page 52) states "Depreciation,
    # amortization and impairment" 3,747; the income tax note (page 81) "Depreciation and
    # amortization" (1,178) under "Deferred tax liabilities", which was answered to
    # "Tesla's depreciation and amortization in 2022" (-$1,178 million)
    cash = tables_in_words(filing_words["tsla-20221231-10k.pdf#52"], page=52)
    taxes = table_from_rows([["", "December 31, 2022", "December 31, 2021"],
                             ["Deferred tax liabilities:", "", ""],
                             ["Depreciation and amortization", "(1,178)", "(1,279)"],
                             ["Investment in certain financing funds", "(210)", "(186)"],
                             ["Total deferred tax liabilities", "(2,279)", "(2,328)"]],
                            page=81, title="Deferred tax assets (liabilities) as of December "
                                           "31, 2022 and 2021 consisted of the following")
    tables = [*cash, taxes]
    year = When("2022", (date(2022, 1, 1), date(2022, 12, 31)))
    chosen = choose_cell(item_words("depreciation and amortization"), year, tables,
                         columns_for, text="Tesla's depreciation and amortization")
    assert isinstance(chosen, Miss)
    doc = Evidence(doc_id="tsla", title="Tesla, Inc. Form 10-K for 2022")
    step = ExtractStep(id="E2", operation="EXTRACT", source="$R1",
                       row="depreciation and amortization", period="2022")
    with pytest.raises(ToolError) as e:
        read_cell(step, [doc], lambda _: tables)
    assert "deferred tax" in str(e.value) and "(1,178)" not in str(e.value).split("nearest")[0]


@pytest.mark.parametrize("label, section, part", [
    # labels of the filings' balance sheets (Ondas, Rocket Lab, Palantir, Apple)
    ("Operating lease liabilities, net of current", None, "non-current"),
    ("Long-term borrowings, excluding current installments", None, "non-current"),
    ("Current installments of long-term borrowings", None, "current"),
    ("Non-current operating lease liabilities", None, "non-current"),
    ("Deferred revenue, noncurrent", None, "non-current"),
    ("Operating lease liabilities", "Current Liabilities", "current"),
    ("Term debt", "Non-current liabilities", "non-current"),
    ("Total current assets", None, None),
    ("Accounts receivable, net", None, None),
])
def test_a_label_or_heading_says_which_part_by_term_a_row_states(label, section, part):
    assert term_part(Row(label=label, cells=[], section=section)) == part


def test_the_other_part_by_term_in_another_table_is_added_to_the_line_item(filing_words):
    # Ondas' balance sheet breaks over pages 35 and 36 ("Operating lease liabilities,
    # net of current" on 36, whose table has lost its column heads); its lease note on
    # page 47 states both parts as of December 31, 2023: the item is the two added
    tables = [t for n in (35, 47)
              for t in tables_in_words(filing_words[f"onds-20231231-10k.pdf#{n}"], page=n)]
    day = When("2023-12-31", (date(2023, 12, 31), date(2023, 12, 31)))
    step = ExtractStep(id="E2", operation="EXTRACT", source="$R1", row="Ondas operating "
                       "lease liabilities", period="2023-12-31")
    doc = Evidence(doc_id="onds", title="Ondas Holdings Inc. Form 10-K for 2023")
    out = read_cell(step, [doc], lambda _: tables)
    assert out.value == "6,485,809" and "685,099" in out.note and "5,800,710" in out.note
    assert isinstance(choose_cell(item_words("operating lease liabilities"), day, tables,
                                  columns_for, text="operating lease liabilities"), Miss)
    step = step.model_copy(update={"row": "current operating lease liabilities"})
    assert read_cell(step, [doc], lambda _: tables).value in ("685,099", "$685,099")


def test_a_heading_set_left_of_the_rows_labels_leaves_the_column_heads_above_it(filing_words):
    # Rocket Lab's 10-K for 2023, page 69: "Years Ended December 31," over "2023 2022
    # 2021", then "SUPPLEMENTAL DISCLOSURE OF CASH FLOW INFORMATION:" at the page's margin,
    # left of "Cash paid for interest" indented under it
    table = titled(tables_in_words(filing_words["rklb-20231231-10k.pdf#69"], page=69),
                   "cash flows (continued)")
    assert [c.period for c in table.columns] == ["2023", "2022", "2021"]
    paid = row(table, "Cash paid for interest")
    assert paid.section == "SUPPLEMENTAL DISCLOSURE OF CASH FLOW INFORMATION"
    assert paid.cells[0].quantity.absolute() == 15_553_000
    assert row(table, "Unpaid transaction costs").section == (
        "SUPPLEMENTAL DISCLOSURE OF NONCASH INVESTING AND FINANCING ACTIVITIES")


def test_a_table_continued_at_the_top_of_the_next_page_is_read_under_its_heads(filing_words):
    # Ondas' balance sheet breaks over pages 35 and 36: page 36 starts with its long-term
    # liabilities and equity, under no heads of its own, in the columns of page 35's
    # "December 31, 2023" and "December 31, 2022"
    alone = tables_in_words(filing_words["onds-20231231-10k.pdf#36"], page=36)
    assert [c.period for c in alone[0].columns] == [None, None]
    pages = Pages()
    first = pages.tables(filing_words["onds-20231231-10k.pdf#35"], page=35)
    continued, operations = pages.tables(filing_words["onds-20231231-10k.pdf#36"], page=36)
    assert [c.period for c in continued.columns] == [c.period for c in first[-1].columns] == [
        "2023-12-31", "2022-12-31"]
    assert continued.title == first[-1].title and continued.page == 36
    assert row(continued, "Total liabilities").cells[0].quantity.absolute() == 47_108_861
    # the next table on the page states its own heads
    assert [c.period for c in operations.columns] == ["2023", "2022"]
    # a table with a title of its own continues none: Palantir's page 72 opens with "The
    # following table sets forth … as a percentage of revenue:" over heads it does not
    # read, under the columns of page 71's statement of operations in thousands
    pages = Pages()
    pages.tables(filing_words["pltr-20221231-10k.pdf#71"], page=71)
    shares = pages.tables(filing_words["pltr-20221231-10k.pdf#72"], page=72)[0]
    assert "percentage of revenue" in shares.title and shares.scale == 0
    assert [c.period for c in shares.columns] == [None, None, None]
    # a table the page's prose follows does not reach its foot: it passes no heads on
    prose = [[(24.3, 60.0, "Some"), (62.0, 90.0, "words"), (92.0, 130.0, "here")]] * 5
    pages = Pages()
    pages.tables(filing_words["onds-20231231-10k.pdf#35"] + prose, page=35)
    assert [c.period for c in pages.tables(filing_words["onds-20231231-10k.pdf#36"],
                                           page=36)[0].columns] == [None, None]


def test_a_row_beside_its_noncurrent_part_in_one_table_is_the_current_part(filing_words):
    # Palantir's lease note, page 103: "Operating lease liabilities" $45,099 above
    # "Operating lease liabilities, noncurrent" 204,305 under a heading "Lease liabilities"
    # that says neither part; "Total lease liabilities" $249,404
    tables = tables_in_words(filing_words["pltr-20221231-10k.pdf#103"], page=103)
    assert [c.period for c in tables[0].columns] == ["2022-12-31", "2021-12-31"]
    added = _read(tables, "operating lease liabilities", "2022-12-31")
    assert added.value == "249,404" and "45,099" in added.note and "204,305" in added.note
    day = When("2022-12-31", (date(2022, 12, 31), date(2022, 12, 31)))
    assert isinstance(choose_cell(item_words("operating lease liabilities"), day, tables,
                                  columns_for, text="operating lease liabilities"), Miss)
    assert _read(tables, "total lease liabilities", "2022-12-31").value == "$249,404"
    assert _read(tables, "operating lease liabilities, noncurrent",
                 "2022-12-31").value == "204,305"


def test_a_row_with_a_column_for_each_segment_of_the_year_is_read_after_one_figure(filing_words):
    # Rocket Lab's 10-K for 2023: page 102 states "Revenues" under "2023 Launch Services"
    # and "2023 Space Systems", page 66's statement of operations the company's $244,592
    tables = [t for n in (102, 66)
              for t in tables_in_words(filing_words[f"rklb-20231231-10k.pdf#{n}"], page=n)]
    year = When("2023", (date(2023, 1, 1), date(2023, 12, 31)))
    assert _read(tables, "revenues", "2023").value == "$244,592"
    chosen = choose_cell(item_words("revenues"), year, tables, columns_for, text="revenues")
    assert chosen.cell.text == "$244,592"
    assert _read(tables, "launch services revenues", "2023").value == "$71,894"


def test_a_footnote_under_a_table_and_a_line_of_currency_signs_are_no_rows(filing_words):
    # Tesla's 10-K for 2022 (wkhtmltopdf): page 48's balance sheet ends in "(1) Prior
    # period results have been adjusted …", which was read as a row with a figure and
    # lost the table; page 49 sets "$ $ $" on a line of its own under the diluted figures
    # per share, whose heading "Net income per share of common stock attributable to
    # common stockholders (1)" ends in its footnote mark and is no part of "Basic"
    sheet = titled(tables_in_words(filing_words["tsla-20221231-10k.pdf#48"], page=48),
                   "balance sheets")
    assert row(sheet, "Total current assets").cells[0].quantity.absolute() == 40_917_000_000
    operations = titled(tables_in_words(filing_words["tsla-20221231-10k.pdf#49"], page=49),
                        "statements of operations")
    diluted = [r for r in operations.rows if r.label == "Diluted"]
    assert [r.cells[0].text for r in diluted] == ["3.62", "3,475"]
    assert diluted[0].section == ("Net income per share of common stock attributable to "
                                  "common stockholders")


def test_a_parts_subtotal_does_not_end_its_heading(filing_words):
    # Tesla's statement of operations for 2022, page 49: under "Revenues", "Total
    # automotive revenues" is the subtotal of the automotive lines; "Energy generation and
    # storage" and "Services and other" after it are revenues still (they were read under
    # no heading, so neither revenue nor cost of revenues was found); "Total revenues"
    # ends the heading, and "Total revenues, net" would as well
    operations = titled(tables_in_words(filing_words["tsla-20221231-10k.pdf#49"], page=49),
                        "statements of operations")
    sections = [(r.section, r.cells[0].text) for r in operations.rows
                if r.label == "Energy generation and storage"]
    assert sections == [("Revenues", "3,909"), ("Cost of revenues", "3,621")]
    assert row(operations, "Gross profit").section is None
    assert row(operations, "Income from operations").section is None
    table = table_from_rows([["", "2019", "2018"], ["Revenues:", "", ""],
                             ["Product", "10", "8"], ["Service", "5", "4"],
                             ["Total revenues, net", "15", "12"], ["Interest income", "1", "1"]])
    assert row(table, "Interest income").section is None


def test_a_label_the_table_states_before_is_a_row_under_the_next_heading(filing_words):
    # Tesla's segment note, page 88: "Automotive segment" over Revenues and Gross profit,
    # then "Energy generation and storage segment" over Revenues and Gross profit
    table = tables_in_words(filing_words["tsla-20221231-10k.pdf#88"], page=88)[0]
    assert [(r.section, r.label, r.cells[0].text) for r in table.rows] == [
        ("Automotive segment", "Revenues", "$77,553"),
        ("Automotive segment", "Gross profit", "$20,565"),
        ("Energy generation and storage segment", "Revenues", "$3,909"),
        ("Energy generation and storage segment", "Gross profit", "$288")]


def test_figures_set_on_the_line_under_their_label_are_that_labels_row(filing_words):
    # Tesla's cash flow statement for 2022, page 52: "Other long-term liabilities" on a
    # line of its own, its figures on the next; read as a heading over a total with no
    # label, it answered "total liabilities" for 2020 with 495
    flows = titled(tables_in_words(filing_words["tsla-20221231-10k.pdf#52"], page=52),
                   "cash flows")
    other = row(flows, "Other long-term liabilities")
    assert [c.text for c in other.cells] == ["1,904", "476", "495"] and not other.total
    assert all(r.label for r in flows.rows)
    assert row(flows, "Net cash provided by operating activities").total
    # a heading in title case is no label's first part: "Cash Flows from Investing
    # Activities" over "Purchases of property and equipment excluding finance leases, …"
    capex = row(flows, "Purchases of property and equipment excluding finance leases, net of "
                       "sales")
    assert capex.section == "Cash Flows from Investing Activities"
    assert row(flows, "Net income").section == "Cash Flows from Operating Activities"
    step = ExtractStep(id="E2", operation="EXTRACT", source="$R1", row="total liabilities",
                       period="2020")
    doc = Evidence(doc_id="tsla", title="Tesla, Inc. Form 10-K for 2022")
    with pytest.raises(ToolError) as missing:
        read_cell(step, [doc], lambda _: [flows])
    assert missing.value.code == "NOT_FOUND"


def test_a_lead_in_says_whose_figures_a_table_states_never_its_labels_words(filing_words):
    # Tesla's 10-K for 2020: the balance sheet, page 54, states "Total liabilities"
    # 28,418; page 103 the VIEs' $2,418 under a lead-in whose first line has 151
    # characters ("The aggregate carrying values of the VIEs' assets and liabilities, …
    # in the consolidated" / "balance sheets were as follows (in millions):"), no title
    sheet = tables_in_words(filing_words["tsla-20201231-10k.pdf#54"], page=54)[0]
    vies = tables_in_words(filing_words["tsla-20201231-10k.pdf#103"], page=103)[0]
    assert vies.title is None and vies.lead_in.startswith("The aggregate carrying values")
    assert vies.lead_in.endswith("were as follows (in millions):")
    day = When("December 31, 2020", (date(2020, 12, 31), date(2020, 12, 31)))
    chosen = choose_cell(item_words("total liabilities"), day, [sheet, vies], columns_for,
                         text="Tesla's total liabilities")
    assert chosen.cell.text == "28,418" and chosen.page == 54
    # without the lead-in, the balance sheet, a primary statement, still defines the line
    # item; without its title too, nothing tells the two apart, and the ambiguity names both
    bare = vies.model_copy(update={"lead_in": None})
    assert sheet.title and "BALANCE SHEETS" in sheet.title.upper()
    chosen = choose_cell(item_words("total liabilities"), day, [sheet, bare], columns_for,
                         text="Tesla's total liabilities")
    assert chosen.cell.text == "28,418" and chosen.page == 54
    untitled = sheet.model_copy(update={"title": None})
    chosen = choose_cell(item_words("total liabilities"), day, [untitled, bare], columns_for,
                         text="Tesla's total liabilities")
    assert isinstance(chosen, Miss) and "several rows" in chosen.why
    assert sorted(c.text for c in chosen.figures) == ["$2,418", "28,418"]


def test_a_table_a_lead_in_says_a_component_of_line_items_is_read_after_them(filing_words):
    # Palantir's 10-K for 2021, page 86: MD&A's statement of operations, "Cost of revenue
    # (1)" 352,547 for 2020, and under it "(1) Includes stock-based compensation expense
    # as follows (in thousands):" over "Cost of revenue $139,627"
    tables = tables_in_words(filing_words["pltr-20211231-10k.pdf#86"], page=86)
    assert tables[1].lead_in == ("Includes stock-based compensation expense as follows (in "
                                 "thousands):")
    year = When("2020", (date(2020, 1, 1), date(2020, 12, 31)))
    chosen = choose_cell(item_words("cost of revenue"), year, tables, columns_for,
                         text="Palantir's cost of revenue")
    assert chosen.cell.text == "352,547"
    step = ExtractStep(id="E2", operation="EXTRACT", source="$R1", row="cost of revenue",
                       period="2020")
    doc = Evidence(doc_id="pltr", title="Palantir Technologies Inc. Form 10-K for 2021")
    assert read_cell(step, [doc], lambda _: tables).value == "352,547"


def test_a_row_of_a_table_saying_where_an_expense_was_recorded_is_read_after_the_item(
        filing_words):
    # Palantir's 10-K for 2021: the statement of operations' "Cost of revenue" 352,547 for
    # 2020 (page 102) and the note's "Total stock-based compensation expense was as
    # follows" over "Cost of revenue" 139,627 (page 132), the compensation within it
    tables = [t for n in (102, 132)
              for t in tables_in_words(filing_words[f"pltr-20211231-10k.pdf#{n}"], page=n)]
    assert any(r.label == "Cost of revenue" and "$139,627" in [c.text for c in r.cells if c]
               for t in tables if t.page == 132 for r in t.rows)
    doc = Evidence(doc_id="pltr", title="Palantir Technologies Inc. Form 10-K for 2021")

    def read(row: str) -> str:
        step = ExtractStep(id="E2", operation="EXTRACT", source="$R1", row=row, period="2020")
        return read_cell(step, [doc], lambda _: tables).value

    assert read("cost of revenue") == "352,547"
    assert read("stock-based compensation: cost of revenue") == "$139,627"  # named: read
    # Rocket Lab's 10-K for 2021: its statement's "Research and development, net" 41,765
    # (page 64) and "Amortization expense recorded in the condensed consolidated
    # statements of operations …" over "Research and development" 2,088 (page 87): the
    # amortization row names the item more closely, but it is only the amortization
    # within the item: the statement's row is read, never the 2,088
    rocket = [t for n in (64, 87)
              for t in tables_in_words(filing_words[f"rklb-20211231-10k.pdf#{n}"], page=n)]
    doc = Evidence(doc_id="rklb", title="Rocket Lab USA, Inc. Form 10-K for 2021")
    step = ExtractStep(id="E2", operation="EXTRACT", source="$R1",
                       row="research and development", period="2021")
    out = read_cell(step, [doc], lambda _: rocket)
    assert out.value == "41,765" and out.document.page == 64
    # named as that expense, the component is read
    step = step.model_copy(update={"row": "amortization expense: research and development"})
    assert read_cell(step, [doc], lambda _: rocket).value == "2,088"


def test_a_row_under_deferred_tax_liabilities_is_the_tax_on_an_item_read_after_it(filing_words):
    # Ondas' 10-K for 2021: the cash flow statement's "Depreciation" 97,759 for 2020 (page
    # 54) and the income tax note's "Deferred Tax Liabilities: Depreciation" (36,897)
    # (page 82), the deferred tax on it, which made "depreciation expense" ambiguous
    tables = [t for n in (54, 82)
              for t in tables_in_words(filing_words[f"onds-20211231-10k.pdf#{n}"], page=n)]
    assert any(r.section == "Deferred Tax Liabilities" and r.label == "Depreciation"
               and r.cells[1].text == "(36,897)" for t in tables for r in t.rows)
    year = When("2020", (date(2020, 1, 1), date(2020, 12, 31)))
    chosen = choose_cell(item_words("depreciation"), year, tables, columns_for,
                         text="Ondas' depreciation")
    assert chosen.cell.text == "97,759"
    doc = Evidence(doc_id="onds", title="Ondas Holdings Inc. Form 10-K for 2021")
    for name in ("depreciation expense", "depreciation"):
        step = ExtractStep(id="E2", operation="EXTRACT", source="$R1", row=name, period="2020")
        assert read_cell(step, [doc], lambda _: tables).value == "97,759"
    # asked as the deferred tax, the row under that heading is read
    step = ExtractStep(id="E2", operation="EXTRACT", source="$R1",
                       row="deferred tax liabilities: depreciation", period="2020")
    assert read_cell(step, [doc], lambda _: tables).value == "(36,897)"


@pytest.mark.parametrize("title, statement", [
    ("Table of Contents Palantir Technologies Inc. Consolidated Statements of Operations", True),
    ("Table of Contents ROCKET LAB U.S.A., INC. AND SUBSIDIARIES CONSOLIDATED BALANCE SHEETS "
     "AS OF DECEMBER 31, 2023 AND 2022", True),
    ("Apple Inc. CONDENSED CONSOLIDATED STATEMENTS OF CASH FLOWS (Unaudited) (In millions)", True),
    ("Depreciation expense recorded in the consolidated statements of operations and "
     "comprehensive loss during the years ended December 31, 2023, 2022 and 2021 consisted "
     "of the following:", False),
    ("Table of Contents Palantir Technologies Inc. Notes to Consolidated Financial Statements",
     False),
    ("The following amounts were recorded in our consolidated statements of operations:", False),
])
def test_a_primary_statement_is_told_by_its_heading_not_by_a_note_naming_it(title, statement):
    # titles as the reader found them in Palantir's, Rocket Lab's and Apple's filings
    table = Table(columns=[Column(header="2023", period="2023")],
                  rows=[Row(label="Research and development", cells=[Cell(text="4,700")])],
                  title=title)
    assert of_a_statement(table) is statement


def test_a_row_joining_both_parts_is_not_the_one_part_asked(filing_words):
    # Apple's 10-K for 2024: page 41's hedged items "as of September 28, 2024 and
    # September 30, 2023" over "2024 2023" state "Current and non-current term debt"
    # $(18,247) for 2023; the balance sheet, page 34, "Term debt" under "Non-current
    # liabilities:" 95,281: "non-current term debt" is the balance sheet's
    tables = [t for n in (34, 41)
              for t in tables_in_words(filing_words[f"aapl-20240928-10k.pdf#{n}"], page=n)]
    day = When("2023-09-30", (date(2023, 9, 30), date(2023, 9, 30)))
    assert any(r.label == "Current and non-current term debt" for t in tables if t.page == 41
               for r in t.rows)
    chosen = choose_cell(item_words("non-current term debt"), day, tables, columns_for,
                         text="Apple's non-current term debt")
    assert chosen.cell.text == "95,281" and chosen.page == 34
    step = ExtractStep(id="E2", operation="EXTRACT", source="$R1", row="non-current term debt",
                       period="2023-09-30")
    doc = Evidence(doc_id="aapl", title="Apple Inc. Form 10-K for fiscal 2024")
    assert read_cell(step, [doc], lambda _: tables).value == "95,281"


def test_a_lead_in_that_ends_a_paragraph_still_gives_the_table_its_scale(filing_words):
    # Palantir's 10-K for 2022, page 114: "… at the time of sale. Revenue is as follows (in
    # thousands, except percentages):" ends a paragraph above the revenue by geography;
    # the unit was lost with the paragraph and "United States" answered $1,161,416
    # (dollars) for $1,161,416 thousand
    revenue = [t for t in _palantir(filing_words, 114)
               if t.lead_in and t.lead_in.startswith("Revenue is as follows")]
    assert len(revenue) == 1 and (revenue[0].unit, revenue[0].scale) == ("USD", 3)
    us = row(revenue[0], "United States")
    assert us.cells[0].quantity.scale == 3 and us.cells[1].quantity.kind == "percent"


def test_the_unit_clause_of_a_lead_in():
    assert unit_clause("Revenue is as follows (in thousands, except percentages):") == (
        "(in thousands, except percentages)")
    assert unit_clause("Revenue by geography was as follows, in millions:") == "in millions"
    assert unit_clause("Revenue by geography was as follows:") is None
    # a rate's denominator states no scale of the figures
    assert unit_clause("Costs normalised per $ million of revenue:") is None


def test_basic_and_diluted_under_a_heading_in_sentence_case_are_rows_of_their_own(
        filing_words):
    # Tesla's 10-K for 2023, page 51: the heading "Net income per share of common stock
    # attributable to common stockholders" read as the first line of the label "… Basic"
    tables = tables_in_words(filing_words["tsla-20231231-10k.pdf#51"], page=51)
    income = titled(tables, "statements of operations")
    heading = "Net income per share of common stock attributable to common stockholders"
    assert [c.text for c in row(income, "Basic", heading).cells] == ["$4.73", "$4.02", "$1.87"]
    assert [c.text for c in row(income, "Diluted", heading).cells] == ["$4.30", "$3.62", "$1.63"]
    shares = "Weighted average shares used in computing net income per share of common stock"
    assert row(income, "Diluted", shares).cells[0].text == "3,485"
    step = ExtractStep(id="E2", operation="EXTRACT", source="$R1", row="diluted EPS",
                       period="2023")
    assert read_cell(step, [Evidence(doc_id="t", title="Tesla 10-K 2023")],
                     lambda _id: tables).value == "$4.30"
