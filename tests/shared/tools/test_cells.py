"""EXTRACT by row: one cell of real report tables (TAT-QA's and a Form 10-K's, read by
the table reader), the row by its words or the domain library's names, the column by
its period; otherwise AMBIGUOUS or NOT_FOUND naming the rows and columns."""

from __future__ import annotations

import json
from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest

from shared.errors import ToolError
from shared.models import Evidence, ExtractStep
from shared.tables.read import table_from_rows, tables_in_text
from shared.planners.metric import When
from shared.planners.rows import choose_cell, item_words
from shared.tables.periods import columns_for
from shared.tools.cells import read_cell
from shared.tools.rows import fit, label_words

DATA = json.loads((Path(__file__).parent / "data" / "report_tables.json").read_text())
TEN_K = Evidence(doc_id="pati-2018-10k", title="Patriot Transportation Holding 2018 Form 10-K")


def tatqa(index: int):
    return table_from_rows(DATA["tatqa"][str(index)]["table"])


SUMMARY = DATA["pati_2018_five_year_summary"]
TABLES = {
    "pati-2018-10k": [table_from_rows(SUMMARY["rows"], page=SUMMARY["page"],
                                      title=SUMMARY["title"])]
                     + [t for page, text in DATA["pati_2018_10k"].items()
                        for t in tables_in_text(text, page=int(page))],
    **{f"tatqa-{i}": [tatqa(int(i))] for i in DATA["tatqa"]},
}


def doc(name: str) -> Evidence:
    return Evidence(doc_id=name, title=name)


def cell(row: str, period: str | None = None, documents=(TEN_K,), quantity=None,
         tables=TABLES):
    step = ExtractStep(id="E2", operation="EXTRACT", source="$R1", row=row, period=period,
                       quantity=quantity)
    return read_cell(step, list(documents), lambda doc_id: tables.get(doc_id, []))


def refused(*args, **kwargs) -> ToolError:
    with pytest.raises(ToolError) as e:
        cell(*args, **kwargs)
    return e.value


def test_the_row_named_is_read_not_the_row_under_it():
    debt = cell("Long-term debt", "FY2018")  # all dashes but 2014; equity is under it
    assert debt.value == "$ —" and debt.quantity.amount == 0
    assert cell("Long-term debt", "2014").value == "7,282"
    interest = cell("Interest expense", "FY2016")
    assert interest.quantity.amount == 130  # not 5,705, income from continuing operations
    assert interest.quantity.scale == 3 and interest.quantity.unit == "USD"


def test_a_five_year_table_oldest_first_reads_the_column_of_the_year_asked():
    summary = next(t for t in TABLES["pati-2018-10k"] if t.title.startswith("Five Year"))
    revenues = next(r for r in summary.rows if r.label == "Revenues")
    years = [c.header for c in summary.columns]
    assert years == ["2018", "2017", "2016", "2015", "2014"]
    oldest_first = table_from_rows([["(Amounts in thousands)", *reversed(years)],
                                    ["Revenues", *(c.text for c in reversed(revenues.cells))]])
    for tables in ({"pati-2018-10k": [summary]}, {"pati-2018-10k": [oldest_first]}):
        assert cell("revenue", "FY2015", tables=tables).quantity.amount == 122882
        assert cell("revenue", "FY2018", tables=tables).quantity.amount == 114065
        assert cell("revenue", tables=tables).quantity.amount == 114065  # the newest year


def test_a_real_table_with_years_oldest_first_reads_each_year_from_its_own_column():
    staff = doc("tatqa-276")  # December 31, 2018 then 2019
    assert cell("Wages and salaries", "2018", [staff]).value == "158,371"
    assert cell("Wages and salaries", "FY2019", [staff]).value == "191,459"
    assert cell("total fees", "2018", [doc("tatqa-81")]).value == "$86,000"
    flows = doc("tatqa-185")  # 2017 2018 Change
    assert cell("operating cash flow", "2018", [flows]).value == "$283,710"
    assert cell("operating cash flow", "FY2017", [flows]).value == "$223,630"


def test_a_change_column_between_the_years_is_never_read_as_a_year():
    oracle = doc("tatqa-121")  # 2019, Change, 2018
    assert cell("net cash provided by operating activities", "2018", [oracle]).value == "$15,386"
    assert cell("operating cash flow", "FY2019", [oracle]).quantity.scale == 6


def test_the_domain_library_names_line_items_as_filings_write_them():
    capex = cell("capital expenditure", "FY2018")
    assert capex.value == "(4,656)" and capex.confidence == "line_item"
    assert "Purchase of property and equipment" in capex.quote
    assert "capital expenditure" in capex.note and capex.document.page == 46
    assert cell("cost of goods sold", "2018", [doc("tatqa-127")]).value == "2,315"
    assert cell("PP&E, net", "2015").value == "42,620"


def test_a_part_is_read_from_its_own_row_and_its_total_only_when_total_is_asked():
    # "Cost of goods sold  $ 68,367" above "Total cost of goods sold  $ 71,513" (with
    # depreciation): TAT-QA's gold reads the row named, 74,646 for 2018
    assert cell("cost of goods sold", "2019", [doc("tatqa-253")]).value == "$ 68,367"
    assert cell("total cost of goods sold", "2019", [doc("tatqa-253")]).value == "$ 71,513"


def test_the_evidence_names_the_tables_page_and_the_quote_the_row_with_its_header():
    out = cell("Interest expense", "FY2016")
    assert out.document.doc_id == TEN_K.doc_id and out.document.page == 35
    assert out.document.cite().endswith("page 35")
    assert out.quote.startswith("Summary of Operations: Interest expense — 2016: 130 (row: 2018:")
    assert out.confidence == "table_row" and "Five Year Summary" in out.note


def test_one_figure_in_two_tables_is_one_answer_and_both_are_named():
    out = cell("Interest expense", "2016")  # 130 in the summary, (130) in the statement
    assert out.quantity.amount == 130 and "also stated as" in out.note and "(130)" in out.note
    unscaled = table_from_rows(SUMMARY["rows"], page=35)  # no "(Amounts in thousands)" seen
    both = {TEN_K.doc_id: [unscaled, *TABLES["pati-2018-10k"][1:]]}
    revenue = cell("revenue", "FY2017", tables=both)  # 112,165 twice, one table unscaled
    assert revenue.quantity.amount == 112165 and revenue.quantity.scale == 3


def test_rows_that_fit_alike_with_different_figures_are_ambiguous_and_named():
    e = refused("Basic", "FY2017")  # earnings per share .55 and weighted shares 3,299
    assert e.code == "AMBIGUOUS"
    assert ".55" in e.message and "3,299" in e.message and "'Basic'" in e.message


def test_a_heading_given_before_a_colon_picks_the_row_under_it():
    results = doc("tatqa-42")  # EBIT under Continuing Operations and under Reported Results
    e = refused("EBIT", "2019", [results])
    assert e.code == "AMBIGUOUS" and "(1,040)" in e.message and "(2,252)" in e.message
    assert cell("continuing operations: EBIT", "2019", [results]).value == "(1,040)"
    assert cell("EBIT (reported results)", "2018", [results]).value == "(15,278)"


def test_a_row_no_table_holds_is_not_found_naming_the_nearest_rows_and_their_columns():
    e = refused("goodwill impairment", "2018")
    assert e.code == "NOT_FOUND" and "no table row of its document is 'goodwill impairment'" \
        in e.message
    e = refused("revenue", "FY2019", [doc("tatqa-66")])
    assert e.code == "NOT_FOUND" and "names the domain library gives 'revenue'" in e.message
    assert "nearest rows:" in e.message and "columns '2017/2018', '2018/2019'" in e.message


def test_words_before_the_name_make_another_row_so_cost_of_sales_is_never_sales():
    e = refused("sales", "2019", [doc("tatqa-237")])  # the table has Cost of sales only
    assert e.code == "NOT_FOUND" and "'Cost of sales'" in e.message
    e = refused("equipment", "2018")
    assert e.code == "NOT_FOUND"
    statement = [t for t in TABLES["pati-2018-10k"] if t.page == 44]  # Sales, general & admin.
    sales = cell("sales", "FY2018", tables={TEN_K.doc_id: statement})
    assert sales.value == "114,065"  # Total revenues, not Sales, general & administrative
    assert cell("SG&A", "FY2018", tables={TEN_K.doc_id: statement}).value == "9,735"


def test_a_period_the_table_lacks_is_not_found_naming_the_columns_it_has():
    e = refused("Wages and salaries", "FY2017", [doc("tatqa-276")])
    assert e.code == "NOT_FOUND" and "has no column for FY2017" in e.message
    assert "'December 31, 2018' (2018-12-31), 'December 31, 2019' (2019-12-31)" in e.message


def test_a_cell_of_another_kind_than_the_one_asked_is_not_a_value():
    e = refused("cost of revenue", "2019", [doc("tatqa-113")])  # 43%: a share of revenue
    assert e.code == "NOT_A_VALUE" and "'43%'" in e.message and "not a money" in e.message
    assert cell("cost of revenue", "2019", [doc("tatqa-113")], quantity="percent").value == "43%"


def test_a_per_share_figure_is_in_units_in_a_table_in_thousands():
    eps = cell("diluted earnings per share", "2016")
    assert eps.quantity.amount == Decimal("1.74") and eps.quantity.scale == 0
    shares = cell("weighted average shares, diluted", "2016")
    assert shares.quantity.amount == 3285 and shares.quantity.scale == 3


def test_a_list_of_documents_answers_from_the_first_whose_tables_hold_the_row():
    out = cell("operating cash flow", "2018", [doc("tatqa-276"), doc("tatqa-185"),
                                              doc("tatqa-121")])
    assert out.document.doc_id == "tatqa-185" and out.value == "$283,710"


def test_a_document_indexed_without_tables_says_so():
    e = refused("revenue", "2018", [doc("prose")])
    assert e.code == "NOT_FOUND" and "'prose' has no tables" in e.message


def test_a_source_without_documents_is_not_a_document():
    assert refused("revenue", "2018", [None]).code == "NOT_A_DOCUMENT"


def test_the_amount_column_of_a_year_is_read_not_its_percent_of_revenue_beside_it():
    costs = doc("tatqa-49")  # 2019 Amount, 2019 % of total revenue, 2018 Amount, …
    assert cell("cost of revenue", "FY2019", [costs]).value == "$ 324,350"
    assert cell("cost of revenue", "FY2019", [costs], quantity="percent").value == "45%"


def test_rows_under_a_heading_that_reads_on_into_them_are_named_by_both():
    costs = doc("tatqa-49")  # "Includes stock-based compensation of:" / "Cost of maintenance revenue"
    assert cell("cost of maintenance revenue", "FY2019", [costs]).value == "16,499"
    statement = table_from_rows([  # the end of the 10-K's income statement, page 44
        ["(In thousands, except per share amounts)", "2018", "2017", "2016"],
        ["Net income", "$ 5,119", "1,829", "5,705"],
        ["Earnings per common share:", "", "", ""],
        ["Net income- Basic", "$ 1.54", ".55", "1.74"],
        ["Diluted", "$ 1.54", ".55", "1.74"],
        ["Number of shares (in thousands) used in computing:", "", "", ""],
        ["-basic earnings per common share", "3,318", "3,299", "3,283"],
        ["-diluted earnings per common share", "3,320", "3,302", "3,285"]])
    tables = {TEN_K.doc_id: [statement]}
    eps = cell("basic earnings per common share", "2018", tables=tables)
    assert eps.value == "$ 1.54" and eps.quantity.scale == 0  # not the 3,318 shares


def test_a_label_that_says_more_in_parentheses_is_another_row():
    flows = doc("tatqa-7")  # Free cash flow (pre-spectrum) 5,443 above Free cash flow 4,411
    out = cell("free cash flow", "2019", [flows])
    assert out.value == "4,411" and out.quantity.unit == "EUR" and out.quantity.scale == 6
    assert cell("capital expenditure", "2018", [flows]).value == "(7,321)"  # Capital additions



# TAT-QA dev ("Sopifab annual report 2019"): share counts, then earnings per share in cents
EARNINGS_PER_SHARE = [
    ["", "2019", "2018"],
    ["", "53 WEEKS", "52 WEEKS"],
    ["Profit for the period attributable to equity holders of the parent entity used in",
     "", ""],
    ["earnings per share ($M)", "", ""],
    ["Continuing operations", "1,493", "1,605"],
    ["Discontinued operations", "1,200", "119"],
    ["", "2,693", "1,724"],
    ["Weighted average number of shares used in earnings per share (shares, millions) (1)",
     "", ""],
    ["Basic earnings per share", "1,305.7", "1,300.5"],
    ["Diluted earnings per share (2)", "1,313.7", "1,303.9"],
    ["Basic earnings per share (cents per share) (1)", "", ""],
    ["Continuing operations", "114.3", "123.4"],
    ["Discontinued operations", "91.9", "9.2"],
    ["", "206.2", "132.6"],
    ["Diluted earnings per share (cents per share) (1,2)", "", ""],
    ["Continuing operations", "113.6", "123.1"],
    ["Discontinued operations", "91.3", "9.2"],
    ["", "204.9", "132.3"],
]


def test_a_figure_per_share_is_never_read_from_a_row_under_a_count_of_shares():
    tables = {"s": [table_from_rows(EARNINGS_PER_SHARE)]}
    out = cell("Diluted earnings per share", "2019", documents=[doc("s")], tables=tables)
    assert out.value == "204.9"  # the total in cents, not the 1,313.7 million shares


# TAT-QA dev ("Nibusup annual report"): contractual obligations by period and in total
OBLIGATIONS = [["(In thousands)", "Total", "2020", "2021-2022", "2023-2024", "Thereafter"],
               ["Operating leases (1)", "$19,437", "$4,143", "$7,111", "$3,686", "$4,497"],
               ["Capital leases", "65", "27", "38", "—", "—"],
               ["Asset retirement obligation", "400", "—", "150", "250", ""],
               ["Total contractual obligations (2)", "$19,902", "$4,170", "$7,299", "$3,936",
                "$4,497"]]


def test_without_a_period_a_schedule_by_period_is_read_in_its_total_column():
    tables = {"o": [table_from_rows(OBLIGATIONS)]}
    assert cell("total capital leases", documents=[doc("o")], tables=tables).value == "65"
    assert cell("capital leases", "2020", documents=[doc("o")], tables=tables).value == "27"


def test_a_column_header_says_the_words_its_rows_leave_out():
    regions = doc("tatqa-18")  # columns "Fiscal Year 2018 Net Sales", "… % of Total", …
    assert cell("net sales in APAC", "2017", [regions]).value == "$288,764"
    assert cell("total net sales", "2018", [regions]).value == "$ 1,200,181"
    segments = doc("tatqa-1")  # "Appliances" under "Communications Solutions:"
    assert cell("amount for Appliances", "2019", [segments]).value == "680"


def test_a_row_named_with_its_column_headers_words_is_read_only_under_that_header():
    movements = doc("tatqa-262")  # "Financial assets" and "Financial liabilities" over 2019, 2018
    assert cell("IAS 39 opening balance of financial assets", "2018", [movements]).value \
        == "77,131"
    assert cell("financial liabilities closing balance", "2019", [movements]).value == "1,873"


def test_total_asked_for_by_itself_is_the_total_line_its_parentheses_tell_apart():
    ltv = doc("tatqa-26")  # "Total (value)" above "Total (loan)"
    assert cell("Total (loan)", "2019", [ltv]).value == "828.8"
    assert cell("Total", "2018", [doc("tatqa-1")]).value == "$ 13,988"


def test_context_supplies_words_but_never_replaces_one():
    e = refused("gross sales in APAC", "2017", [doc("tatqa-18")])  # its header says net sales
    assert e.code == "NOT_FOUND"
    e = refused("revenue from Appliances", "2019", [doc("tatqa-1")])
    assert e.code == "NOT_FOUND"


# TAT-QA dev tables (bench/data/tatqa/build) whose periods are written in the rows: a
# share-option table dating each balance in its label, and a table of valuations under
# a heading row for each year
OPTIONS = table_from_rows([
    ["", "Number of Shares", "Weighted-Average Exercise Price Per Share",
     "Weighted-Average Remaining Contractual Term (in Years)"],
    ["Outstanding at September 30, 2016", "3,015,374", "$3.95", "6.4"],
    ["Granted", "147,800", "$7.06", ""],
    ["Exercised", "(235,514)", "$2.92", ""],
    ["Outstanding at September 30, 2017", "2,845,866", "$4.21", "5.4"],
    ["Granted", "299,397", "$8.60", ""],
    ["Outstanding at September 30, 2018", "2,806,364", "$4.75", "4.6"]])
VALUATIONS = table_from_rows([
    ["", "External valuation %", "Internal valuation %"],
    ["Year ended 30 June 2019", "", ""],
    ["Leasehold", "23%", "77%"],
    ["Freehold", "38%", "62%"],
    ["Year ended 30 June 2018", "", ""],
    ["Leasehold", "60%", "40%"],
    ["Freehold", "27%", "73%"]])
DATED_ROWS = {"options": [OPTIONS], "valuations": [VALUATIONS]}


def test_a_period_the_row_label_names_picks_the_row_when_no_column_names_one():
    options = [doc("options")]
    for period in ("2018-09-30", "2018", "FY2018"):
        read = cell("shares outstanding", period, options, tables=DATED_ROWS)
        assert read.value == "2,806,364"  # the count, not the price per share beside it
    assert cell("shares outstanding", "2016", options, tables=DATED_ROWS).value == "3,015,374"
    # a row between two dated balances is of the year between them: the grants of the
    # year ended September 30, 2018, as a count, not the price beside it
    assert cell("number of shares granted", "2018", options, tables=DATED_ROWS).value == \
        "299,397"
    assert refused("granted", "2018", options, tables=DATED_ROWS).code == "AMBIGUOUS"
    assert refused("shares outstanding", "2019", options, tables=DATED_ROWS).code == "NOT_FOUND"


def test_a_period_a_heading_row_names_picks_the_rows_under_it():
    valuations = [doc("valuations")]
    assert cell("leasehold external valuation %", "2018", valuations,
                tables=DATED_ROWS).value == "60%"
    assert cell("freehold internal valuation", "FY2019", valuations,
                tables=DATED_ROWS).value == "62%"
    assert refused("leasehold", "2018", valuations, tables=DATED_ROWS).code == "AMBIGUOUS"


def test_a_column_that_names_a_period_wins_over_a_date_in_a_row_label():
    table = table_from_rows([["", "2019", "2018"],
                             ["Balance at December 31, 2018", "5", "7"],
                             ["Balance at December 31, 2019", "9", "5"]])
    read = cell("Balance at December 31, 2019", "2018", [doc("t")], tables={"t": [table]})
    assert read.value == "5"


def test_a_negative_in_a_row_of_both_signs_is_a_signed_figure_and_alone_stays_bracketed():
    # TAT-QA dev: net income 542.0 in 2019 and (762.3) in 2018; an expense row all in
    # parentheses is amounts shown as outflows, which COMPUTE will not guess about
    tables = {"t": [table_from_rows([["", "2019", "2018"], ["Net income", "542.0", "(762.3)"],
                                     ["Interest expense", "(5,940)", "(598)"]])]}
    signed = cell("Net income", "2018", documents=[doc("t")], tables=tables)
    assert (signed.value, signed.quantity.text, signed.quantity.amount) == (
        "(762.3)", "-762.3", Decimal("-762.3"))
    outflow = cell("Interest expense", "2018", documents=[doc("t")], tables=tables)
    assert outflow.quantity.text == "(598)"


def test_the_heading_given_picks_the_heading_that_says_no_more():
    # TAT-QA dev (discontinued operations): "Software delivery, support and maintenance"
    # under "Revenue" and again under "Cost of revenue"
    tables = {"t": [table_from_rows([
        ["", "2018", "2017"], ["Revenue", "", ""],
        ["Software delivery, support and maintenance", "$9,441", "$10,949"],
        ["Client services", "404", "1,044"], ["Total revenue", "9,845", "11,993"],
        ["Cost of revenue", "", ""],
        ["Software delivery, support and maintenance", "2,322", "2,918"],
        ["Client services", "830", "261"], ["Total cost of revenue", "3,152", "3,179"]])]}
    read = cell("Revenue: Software delivery, support and maintenance", "2018",
                documents=[doc("t")], tables=tables)
    assert read.value == "$9,441"
    assert cell("Cost of revenue: Software delivery, support and maintenance", "2018",
                documents=[doc("t")], tables=tables).value == "2,322"
    assert refused("Software delivery, support and maintenance", "2018", documents=[doc("t")],
                   tables=tables).code == "AMBIGUOUS"
    # the step's own words complete the name with a heading: the one that says no more
    assert cell("Software delivery, support and maintenance revenue", "2018",
                documents=[doc("t")], tables=tables).value == "$9,441"
    assert cell("Software delivery, support and maintenance cost of revenue", "2017",
                documents=[doc("t")], tables=tables).value == "2,918"


def test_a_row_asked_as_a_percentage_reads_the_percent_column():
    # TAT-QA dev: net sales by region, each year an amount and its "% of Total"
    tables = {"t": [table_from_rows([
        ["", "Fiscal Year 2019", "", "Fiscal Year 2018", ""],
        ["", "Net Sales", "% of Total", "Net Sales", "% of Total"],
        ["APAC", "$533,340", "38.6%", "$479,987", "40.0%"],
        ["EMEA", "315,535", "22.8%", "277,898", "23.1%"]],
        title="In fiscal years 2019 and 2018, net sales by channel and the percentages of net "
              "sales by region to total net sales were as follows (dollars in thousands):")]}
    assert cell("APAC", "2018", documents=[doc("t")], tables=tables).value == "$479,987"
    read = cell("percentage of sales from APAC", "2018", documents=[doc("t")], tables=tables)
    assert (read.value, read.quantity.kind) == ("40.0%", "percent")


def test_a_column_header_says_in_parentheses_what_its_figures_are():
    # TAT-QA dev: revenue by channel, each year's column "(As percentage of net revenues)"
    years = ["Year Ended December 31,"] * 3
    tables = {"t": [table_from_rows([
        ["", *years], ["", "2019", "2018", "2017"],
        ["", *["(As percentage of net revenues)"] * 3],
        ["OEM", "70%", "65%", "66%"], ["Distribution", "30", "35", "34"],
        ["Total", "100%", "100%", "100%"]])]}
    read = cell("percentage of net revenues of OEM", "2018", documents=[doc("t")], tables=tables)
    assert (read.value, read.quantity.kind) == ("65%", "percent")
    assert refused("percentage of net income of OEM", "2018", documents=[doc("t")],
                   tables=tables).code == "NOT_FOUND"


def test_the_total_a_row_adds_into_says_what_the_row_is():
    # TAT-QA dev: revenue by country, no title, the total's label naming what its parts
    # are; revenues by segment, the eliminations negative; a total of totals
    assert cell("revenue from UK", "2019", [doc("tatqa-71")]).value == "83.2"
    assert cell("revenue from external customers from UK", "2018",
                [doc("tatqa-71")]).value == "73.5"
    assert cell("operating revenues for Bell Wireless", "2019-Q4",
                [doc("tatqa-31")]).value == "2,493"
    assert cell("net sales from total electronic components", "2018",
                [doc("tatqa-91")]).value == "1,235,173"  # a part of Total Net Sales
    assert cell("net sales of ceramic components", "2019",
                [doc("tatqa-91")]).value == "$421,849"
    # words the total does not say are not supplied
    assert refused("operating income from UK", "2019", [doc("tatqa-71")]).code == "NOT_FOUND"
    # nor by a total that is not the sum of the rows above it
    assert refused("operating revenues for Bell Wireless", "2019-Q4", [doc("tatqa-31")],
                   tables={"tatqa-31": [_without_row(tatqa(31), 0)]}).code == "NOT_FOUND"
    assert refused("revenue from UK", "2019", [doc("tatqa-71")],
                   tables={"tatqa-71": [_without_row(tatqa(71), 1)]}).code == "NOT_FOUND"


def _without_row(table, n):
    return table.model_copy(update={"rows": table.rows[:n] + table.rows[n + 1:]})


def test_a_rows_heading_or_column_may_be_named_after_within_or_under():
    # TAT-QA dev: earnings appropriated beside dividends per share, both by year; results
    # of continuing operations above those including discontinued ones
    assert cell("Legal reserve within Appropriation of earnings", "2019",
                [doc("tatqa-41")]).value == "$963,947"
    assert cell("Cash dividends within Appropriation of earnings", "2018",
                [doc("tatqa-41")]).value == "6,916,105"  # not the $0.58 a share beside it
    assert cell("operating revenue under continuing operations", "2018",
                [doc("tatqa-42")]).value == "176,931"  # not 178,139 of reported results


def test_a_rollforward_row_is_of_the_period_between_the_balances_around_it():
    # TAT-QA dev: non-vested shares, each year's grants between two dated balances
    tables = {"t": [table_from_rows([
        ["", "Shares", "Weighted Average Grant Date Fair Value"],
        ["Non-vested at December 31, 2017", "1,061,046", "$12.70"],
        ["Granted", "424,225", "15.84"], ["Vested", "(338,510)", "12.43"],
        ["Non-vested at December 31, 2018", "1,146,761", "$13.94"],
        ["Granted", "473,550", "16.28"], ["Vested", "(365,223)", "13.43"],
        ["Forfeited", "(12,632)", "15.06"],
        ["Non-vested at December 31, 2019", "1,242,456", "$15.02"]])]}
    assert cell("shares granted", "2019", documents=[doc("t")], tables=tables).value == \
        "473,550"
    assert cell("shares granted", "2018", documents=[doc("t")], tables=tables).value == \
        "424,225"
    assert refused("shares forfeited", "2018", documents=[doc("t")], tables=tables).code == \
        "NOT_FOUND"


def test_of_several_columns_of_a_date_the_header_that_says_the_rest_of_the_item_is_read():
    # TAT-QA dev: the carrying amount and the fair value of each debt, for each year end
    tables = {"t": [table_from_rows([
        ["", "December 31, 2019", "", "December 31, 2018", ""],
        ["", "Carrying Amount", "Fair Value", "Carrying Amount", "Fair Value"],
        ["Term Loan A Facility due July 2023", "223.8", "223.8", "222.2", "222.2"],
        ["Total debt", "$ 3,774.4", "$ 4,073.9", "$ 3,474.2", "$ 3,535.1"]],
        title="The table below shows the carrying amounts and estimated fair values of our "
              "debt (in millions):")]}
    read = cell("fair value of total debt", "2019-12-31", documents=[doc("t")], tables=tables)
    assert read.value == "$ 4,073.9"
    assert cell("total debt carrying amount", "2018-12-31", documents=[doc("t")],
                tables=tables).value == "$ 3,474.2"
    assert refused("total debt", "2019-12-31", documents=[doc("t")],
                   tables=tables).code == "AMBIGUOUS"


def test_a_total_asked_of_a_row_that_is_none_is_read_in_the_total_column():
    # TAT-QA dev: contractual obligations by when they fall due, and their total
    tables = {"t": [table_from_rows([
        ["", "Total", "Less Than 1 Year", "1-3 Years", "3-5 Years", "More Than 5 Years"],
        ["Operating leases", "$98,389", "$37,427", "$36,581", "$12,556", "$11,825"],
        ["Capital leases", "50,049", "7,729", "17,422", "10,097", "14,801"],
        ["Total", "$8,031,229", "$1,125,748", "$1,314,675", "$501,250", "$5,089,556"]])],
        # restructuring charges by segment: expected, incurred and remaining
        "s": [table_from_rows([
            ["", "Total Expected Charges", "Cumulative Charges Incurred",
             "Remaining Expected Charges"],
            ["Transportation Solutions", "$ 160", "$ 144", "$ 16"],
            ["Industrial Solutions", "80", "66", "14"],
            ["Total", "$ 289", "$ 254", "$ 35"]])]}
    assert cell("total operating leases", documents=[doc("t")], tables=tables).value == \
        "$98,389"
    assert cell("operating leases more than 5 years", documents=[doc("t")],
                tables=tables).value == "$11,825"
    # no total asked: which column is not said
    assert refused("capital leases", documents=[doc("t")], tables=tables).code == "AMBIGUOUS"
    # the header saying most of the rest of the step's words
    assert cell("Transportation Solutions total expected charges", documents=[doc("s")],
                tables=tables).value == "$ 160"
    assert cell("Industrial Solutions remaining expected charges", documents=[doc("s")],
                tables=tables).value == "14"
    assert refused("Industrial Solutions charges", documents=[doc("s")],
                   tables=tables).code == "AMBIGUOUS"


def test_a_heading_that_says_where_its_rows_are_reported_is_no_part_of_their_names():
    # TAT-QA dev: deferred compensation liabilities, by the balance-sheet line they are in
    tables = {"t": [table_from_rows([
        ["", "April 26, 2019", "April 27, 2018"],
        ["Deferred compensation plan assets", "$ 35", "$ 31"],
        ["Deferred compensation liabilities reported as:", "", ""],
        ["Accrued expenses", "$ 6", "$ 6"],
        ["Other long-term liabilities", "$ 29", "$ 25"]])]}
    assert cell("other long-term liabilities", "2019", documents=[doc("t")],
                tables=tables).value == "$ 29"
    assert cell("accrued expenses", "2018", documents=[doc("t")], tables=tables).value == "$ 6"


def test_a_label_in_nested_parentheses_is_named_without_them():
    # TAT-QA dev: interest rate swaps, 2019 and 2018
    tables = {"t": [table_from_rows([
        ["", "2019", "2018"], ["Interest rate swaps", "", ""],
        ["Carrying amount (non-current (liabilities)/assets)", "(494)", "1,663"],
        ["Notional amount", "29,423", "77,630"]])]}
    assert cell("carrying amount of interest rate swaps", "2018", documents=[doc("t")],
                tables=tables).value == "1,663"


def test_a_schedule_whose_rows_are_years_reads_the_column_the_item_names():
    # TAT-QA dev: future minimum lease payments, a row per year, a column per kind of lease
    tables = {"t": [table_from_rows([
        ["", "Operating Leases", "Finance Leases"], ["2021", "$138", "$6"],
        ["2022", "135", "6"], ["Thereafter", "577", "35"],
        ["Total future minimum lease payments", "1,134", "68"]],
        title="Future minimum lease payments under non-cancellable operating and finance "
              "leases as of January 31, 2020 (table in millions):")]}
    assert cell("operating leases", "2021", documents=[doc("t")], tables=tables).value == "$138"
    assert cell("finance leases", "2022", documents=[doc("t")], tables=tables).value == "6"
    assert refused("leases", "2022", documents=[doc("t")], tables=tables).code == "NOT_FOUND"
    assert refused("operating leases", "2024", documents=[doc("t")], tables=tables).code == \
        "NOT_FOUND"


def test_a_footnote_digit_glued_to_a_labels_last_word_is_a_mark():
    # TAT-QA dev: "Order intake1" (footnote 1), beside a count that is part of a name
    tables = {"t": [table_from_rows([
        ["", "2019", "2018"], ["Order intake1", "1,296", "1,208"],
        ["Scope 1", "12", "14"]])]}
    assert cell("order intake", "2019", documents=[doc("t")], tables=tables).value == "1,296"
    assert cell("Scope 1", "2018", documents=[doc("t")], tables=tables).value == "14"
    assert refused("Scope", "2018", documents=[doc("t")], tables=tables).code == "NOT_FOUND"


def test_a_total_the_title_names_is_the_tables_total_not_a_subtotal_under_a_heading():
    # TAT-QA dev: a blank subtotal under its heading and a "Total" of the table
    tables = {"t": [table_from_rows([
        ["", "Fiscal 2019", "Fiscal 2018"], ["Acquisition-related charges", "", ""],
        ["Acquisition and integration costs", "$ 27", "$ 14"],
        ["Amortization of fair value adjustments", "3", "8"], ["", "30", "22"],
        ["Restructuring and other charges, net", "255", "126"], ["Total", "$ 302", "$ 148"]],
        title="Charges in operating income were as follows:")]}
    assert cell("Total charges in operating income", "2018", documents=[doc("t")],
                tables=tables).value == "$ 148"


def test_what_a_label_says_of_its_period_after_for_the_year_ended_is_not_its_name():
    # TAT-QA dev: dividends paid, each row dated in its label
    tables = {"t": [table_from_rows([
        ["", "2019", "2018"],
        ["Final dividend for the year ended 30 June 2018 of AU 14 cents (2017: AU 12 cents)",
         "13,327", "12,534"],
        ["Interim dividend for the half year ended 31 December 2018 of AU 16 cents",
         "14,801", "13,099"]])]}
    assert cell("final dividend", "2018", documents=[doc("t")], tables=tables).value == "12,534"
    assert cell("interim dividend", "2019", documents=[doc("t")], tables=tables).value == \
        "14,801"


def test_a_quarter_asked_in_a_table_of_quarters_under_years_is_the_years_asked_or_newest():
    # TAT-QA dev: quarterly results, "First" … "Fourth" over rows under "2019" and "2018"
    tables = {"t": [table_from_rows([
        ["", "First", "Second", "Third", "Fourth"], ["2019", "", "", "", ""],
        ["Net sales", "$117,625", "$120,684", "$115,651", "$115,040"],
        ["Operating earnings", "$14,218", "$17,083", "$10,124", "$12,391"],
        ["2018", "", "", "", ""],
        ["Net sales", "$113,530", "$118,021", "$118,859", "$120,073"],
        ["Operating earnings", "$13,359", "$14,544", "$16,118", "$17,017"]])]}
    assert cell("net sales", "Q3", documents=[doc("t")], tables=tables).value == "$115,651"
    assert cell("operating earnings", "Q4", documents=[doc("t")], tables=tables).value == \
        "$12,391"
    # with its year, the quarter of the rows under that year (the cell sweep's question)
    assert cell("net sales", "2018-Q2", documents=[doc("t")], tables=tables).value == "$118,021"
    assert cell("net sales", "Q3 FY2019", documents=[doc("t")], tables=tables).value == \
        "$115,651"
    # under "Fiscal 2019" the quarters are the company's: not the calendar's 2019-Q3
    fiscal = {"t": [table_from_rows([["", "First", "Third"], ["Fiscal 2019", "", ""],
                                     ["Net sales", "$117,625", "$115,651"]])]}
    assert cell("net sales", "Q3 FY2019", documents=[doc("t")], tables=fiscal).value == \
        "$115,651"
    assert refused("net sales", "2019-Q3", documents=[doc("t")], tables=fiscal).code == \
        "NOT_FOUND"
    # in two tables of one year's quarters each, which year is not told
    years = {"t": [table_from_rows([["", f"Fiscal {y} First Quarter", f"Fiscal {y} Third Quarter"],
                                    ["Revenues", a, b]])
                   for y, a, b in ((2019, "$94,888", "$88,495"), (2018, "$88,081", "$93,669"))]}
    assert refused("revenues", "Q3", documents=[doc("t")], tables=years).code == "AMBIGUOUS"
    assert cell("revenues", "Q3 FY2018", documents=[doc("t")], tables=years).value == "$93,669"


# TAT-QA dev: a rollforward whose rows close "of the fiscal year"; cash flows, "(used for)"
ROLLFORWARD = [["", "2019", "2018"],
               ["Balance at the beginning of the fiscal year", "$1,264", "$1,626"],
               ["Additions based on positions taken in prior years", "142", "-"],
               ["Decreases based on positions taken in prior years", "(119 )", "(304)"],
               ["Balance at the end of the fiscal year", "$1,258", "$1,264"]]
CASH_FLOWS = [["", "", "Year Ended May 31,", ""], ["(Dollars in millions)", "2019", "Change", "2018"],
              ["Net cash provided by operating activities", "$14,551", "-5%", "$15,386"],
              ["Net cash used for financing activities", "$(42,056)", "321%", "$(9,982)"]]


def test_a_row_is_named_without_the_year_its_label_closes_with_or_the_verb_a_question_adds():
    tables = {"r": [table_from_rows(ROLLFORWARD)], "c": [table_from_rows(CASH_FLOWS)]}
    assert cell("beginning balance", "2018", [doc("r")], tables=tables).value == "$1,626"
    assert cell("ending balance", "2019", [doc("r")], tables=tables).value == "$1,258"
    assert cell("net cash was used for financing activities", "2018", [doc("c")],
                tables=tables).value == "$(9,982)"
    # the words it leaves out are the period's, never the line item's
    assert refused("balance at the beginning of the prior year", "2018", [doc("r")],
                   tables=tables).code == "NOT_FOUND"


def test_a_balance_at_end_of_period_is_the_items_figure_for_the_period():
    # TAT-QA dev: an Australian share capital note; the rows' figures are of the year's
    # close, where "Contributed equity" has no row of its own
    capital = table_from_rows([
        ["$M", "2019", "2018"], ["Balance at start of period", "6,201", "5,719"],
        ["Shares bought back", "(205)", "(146)"], ["Balance at end of period", "6,033", "6,201"],
        ["Contributed equity at end of period", "5,828", "6,055"]])
    tables = {"k": [capital]}
    assert cell("contributed equity", "2019", [doc("k")], tables=tables).value == "5,828"
    # the start of a period still takes its comma ("Goodwill, beginning of year") or its words
    assert refused("contributed equity at start", "2019", [doc("k")],
                   tables=tables).code == "NOT_FOUND"


def test_rows_whose_words_differ_only_in_small_words_are_told_apart_word_for_word():
    # TAT-QA dev: balances with a group's parent, both ways
    peel = table_from_rows([["£m", "2019", "2018"], ["Net investment in finance lease", "0.8", "1.2"],
                            ["Amounts owed by members of Peel", "0.3", "0.3"],
                            ["Amounts owed to members of Peel", "(0.1)", "(0.1)"]])
    tables = {"peel": [peel]}
    assert cell("amounts owed by members of Peel", "2019", [doc("peel")],
                tables=tables).value == "0.3"
    assert cell("Amounts owed to members of Peel", "2018", [doc("peel")],
                tables=tables).value == "(0.1)"
    # words that say neither row word for word stay ambiguous
    assert refused("members of Peel amounts owed", "2019", [doc("peel")],
                   tables=tables).code == "AMBIGUOUS"


def test_a_column_that_counts_a_flow_is_not_read_for_a_balance():
    # TAT-QA dev: customers at August 31, then net additions over the year, the header
    # "Net additions (losses)" written once over its two columns (a colspan lost)
    subscribers = table_from_rows([
        ["", "", "Net additions (losses)", "", "% of penetration(2)(3)", ""],
        ["", "August 31, 2019", "August 31, 2019", "August 31, 2018 (1)", "August 31, 2019",
         "August 31, 2018 (3)"],
        ["Primary service units", "901,446", "16,981", "20,251", "", ""],
        ["Internet service customers", "446,137", "21,189", "21,417", "50.8", "49.7"]])
    tables = {"cogeco": [subscribers]}
    assert cell("Primary service units", "2019-08-31", [doc("cogeco")],
                tables=tables).value == "901,446"
    # 20,251 is the year's net additions, not the units at August 31, 2018
    assert refused("Primary service units", "2018-08-31", [doc("cogeco")],
                   tables=tables).code == "NOT_FOUND"
    assert cell("net additions of internet service customers", "2018-08-31",
                [doc("cogeco")], tables=tables).value == "21,417"


def test_a_segments_row_under_its_heading_is_read_after_the_row_of_the_whole():
    # a segment note repeats "Net sales" under each segment's heading; the statement
    # states the company's in a row of its own
    statement = table_from_rows([["", "2023", "2022"], ["Net sales", "127,358", "116,444"],
                                 ["Operating income", "4,774", "3,669"]],
                                title="Consolidated Statements of Operations (in millions)")
    segments = table_from_rows([["", "2023", "2022"], ["North America", "", ""],
                                ["Net sales", "76,881", "69,244"],
                                ["Operating income", "898", "(1,568)"], ["AWS", "", ""],
                                ["Net sales", "21,354", "18,441"],
                                ["Operating income", "5,123", "6,518"]],
                               title="Segment information (in millions)")
    assert segments.rows[0].section == "North America"
    step = ExtractStep(id="E2", operation="EXTRACT", source="$R1", row="net sales",
                       period="2023")
    tables = [segments, statement]
    assert read_cell(step, [doc("amzn")], lambda _: tables).value == "127,358"
    aws = step.model_copy(update={"row": "AWS: net sales"})
    assert read_cell(aws, [doc("amzn")], lambda _: tables).value == "21,354"
    # with no row of the whole, the segments' rows are as near as each other
    with pytest.raises(ToolError) as ambiguous:
        read_cell(step, [doc("amzn")], lambda _: [segments])
    assert ambiguous.value.code == "AMBIGUOUS"
    day = When("2023", (date(2023, 1, 1), date(2023, 12, 31)))
    chosen = choose_cell(item_words("net sales"), day, tables, columns_for, text="net sales")
    assert chosen.cell.text == "127,358"


def test_a_table_of_a_part_of_the_company_is_read_after_the_companys_own():
    # Tesla's 10-K notes state its VIEs' balance sheet lines with the balance sheet's
    # labels ("Total current assets" 364 beside the balance sheet's 40,917)
    sheet = table_from_rows([["", "December 31, 2022", "December 31, 2021"],
                             ["Current assets", "", ""],
                             ["Total current assets", "40,917", "27,100"]],
                            title="Consolidated Balance Sheets (in millions)")
    vies = table_from_rows([["", "December 31, 2022", "December 31, 2021"],
                            ["Current assets", "", ""],
                            ["Total current assets", "364", "263"]],
                           title="The aggregate carrying values of the VIEs' assets and "
                                 "liabilities were as follows (in millions):")
    step = ExtractStep(id="E2", operation="EXTRACT", source="$R1", row="total current assets",
                       period="2022-12-31")
    assert read_cell(step, [doc("tsla")], lambda _: [vies, sheet]).value == "40,917"
    of_vies = step.model_copy(update={"row": "VIEs total current assets"})
    assert read_cell(of_vies, [doc("tsla")], lambda _: [vies, sheet]).value == "364"
    day = When("2022-12-31", (date(2022, 12, 31), date(2022, 12, 31)))
    chosen = choose_cell(item_words("total current assets"), day, [vies, sheet], columns_for,
                         text="total current assets")
    assert chosen.cell.text == "40,917"


# Ondas Holdings Inc.'s 10-K for 2024, page 59: a segment note, each year's columns the two
# segments' and their total
ONDAS_SEGMENTS = [["", "2024 Ondas Networks", "2024 Ondas OAS", "2024 Ondas Total",
                   "2023 Ondas Networks", "2023 Ondas OAS", "2023 Ondas Total"],
                  ["Total assets", "$24,297,317", "$85,324,971", "$109,622,288",
                   "$19,272,162", "$72,892,520", "$92,164,682"],
                  ["Capital expenditures", "$1,042,699", "$593,696", "$1,636,395", "$79,208",
                   "$131,827", "$211,035"],
                  ["Interest expense", "(632,132)", "(676,704)", "(1,308,836)", "(15,000)",
                   "(427,412)", "(442,412)"]]
ONDAS_STATEMENTS = [["", "2024", "2023"],
                    ["Interest expense", "(3,620,258)", "(4,154,759)"],
                    ["CASH FLOWS FROM INVESTING ACTIVITIES", "", ""],
                    ["Purchase of equipment", "(1,636,395)", "(211,035)"]]


def test_a_segments_row_names_no_segment_reads_the_total_of_its_columns():
    tables = {"o": [table_from_rows(ONDAS_SEGMENTS, title="Additional segment information")],
              "s": [table_from_rows(ONDAS_STATEMENTS, title="Consolidated statements"),
                    table_from_rows(ONDAS_SEGMENTS, title="Additional segment information")]}
    assert cell("capital expenditures", "2024", [doc("o")], tables=tables).value == \
        "$1,636,395"
    assert cell("Ondas Networks capital expenditures", "2024", [doc("o")],
                tables=tables).value == "$1,042,699"
    # the segments' total after the company's own row: their interest expense leaves out
    # the corporate interest
    assert cell("interest expense", "2024", [doc("s")], tables=tables).value == "(3,620,258)"
    # a figure read from segments only must be what a row of the whole states
    assert cell("capital expenditure", "2024", [doc("s")], tables=tables).value == \
        "$1,636,395"
    assert refused("capital expenditure", "2023", [doc("s")], tables={"s": [
        table_from_rows([*ONDAS_STATEMENTS[:3], ["Purchase of equipment", "(1,636,395)",
                                                 "(200,000)"]]),
        table_from_rows(ONDAS_SEGMENTS)]}).code == "AMBIGUOUS"


# Palantir Technologies Inc.'s 10-K for 2024: MD&A's revenue table (page 74), its "in
# thousands" in the text above it; the statement of operations (page 85); the statement
# of equity (page 87), its columns the equity's components
PLTR_REVENUE = [["", "2024", "2023", "Change Amount", "Change %"],
                ["Government", "$ 1,569,605", "$ 1,222,215", "$ 347,390", "28 %"],
                ["Commercial", "1,295,902", "1,002,797", "293,105", "29 %"],
                ["Total revenue", "$ 2,865,507", "$ 2,225,012", "$ 640,495", "29 %"]]
PLTR_OPERATIONS = [["(in thousands)", "2024", "2023", "2022"],
                   ["Revenue", "$ 2,865,507", "$ 2,225,012", "$ 1,905,871"],
                   ["Net income (loss)", "467,918", "217,375", "(371,094)"],
                   ["Net income (loss) attributable to common stockholders", "$ 462,190",
                    "$ 209,825", "$ (373,705)"]]
PLTR_EQUITY = [["", "Accumulated Deficit", "Total Palantir's Stockholders' Equity",
                "Noncontrolling Interests", "Total Equity"],
               ["Balance as of December 31, 2022", "$(5,859,438)", "$2,565,326", "$77,111",
                "$2,642,437"],
               ["Net income", "209,825", "209,825", "7,550", "217,375"],
               ["Balance as of December 31, 2023", "$(5,649,613)", "$3,475,561", "$85,404",
                "$3,560,965"]]


def test_a_figure_stated_without_its_scale_takes_the_scale_of_a_table_stating_it():
    tables = {"p": [table_from_rows(PLTR_REVENUE, page=74, title="Revenue"),
                    table_from_rows(PLTR_OPERATIONS, page=85,
                                    title="Consolidated Statements of Operations")]}
    out = cell("revenue", "2024", [doc("p")], tables=tables)
    assert (out.value, out.quantity.scale) == ("$ 2,865,507", 3)


def test_a_statement_of_equitys_row_is_read_in_no_column_a_library_synonym_names():
    # the library knows net income as "net income attributable to common stockholders":
    # those words name no component ("Total Palantir's Stockholders' Equity", 209,825)
    tables = {"p": [table_from_rows(PLTR_OPERATIONS, page=85,
                                    title="Consolidated Statements of Operations"),
                    table_from_rows(PLTR_EQUITY, page=87,
                                    title="Consolidated Statements of Equity (in thousands)")]}
    assert cell("net income (loss)", "2023", [doc("p")], tables=tables).value == "217,375"


def test_a_portion_asked_is_the_row_the_heading_and_title_complete():
    # Apple's 10-K for 2021, page 45: the provision for income taxes, "Federal:" over
    # "Current" and "Deferred"; asked as "the current federal portion of the provision"
    tables = {"t": [table_from_rows([
        ["", "2021", "2020", "2019"],
        ["Federal:", "", "", ""],
        ["Current", "$ 8,257", "$ 6,306", "$ 6,384"],
        ["Deferred", "(7,176)", "(3,619)", "2,939"],
        ["Total", "1,081", "2,687", "9,323"],
        ["State:", "", "", ""],
        ["Current", "1,620", "455", "475"],
        ["Deferred", "(338)", "21", "(51)"],
        ["Total", "1,282", "476", "424"],
        ["Provision for income taxes", "$ 14,527", "$ 9,680", "$ 10,481"]],
        title="The provision for income taxes for 2021, 2020 and 2019, consisted of the "
              "following (in millions):")]}
    assert cell("current federal portion of provision for income taxes", "2021",
                documents=[doc("t")], tables=tables).value == "$ 8,257"
    assert cell("federal: current", "2020", documents=[doc("t")],
                tables=tables).value == "$ 6,306"


VEDEBEL = [  # TAT-QA dev: foreign exchange exposure by currency, under dated headings
    ["", "USD denominated RMB’Million", "Non-USD denominated RMB’Million"],
    ["As at 31 December 2019", "", ""],
    ["Monetary assets, current", "27,728", "2,899"],
    ["Monetary assets, non-current", "373", "–"],
    ["Monetary liabilities, current", "(4,273)", "(14,732)"],
    ["Monetary liabilities, non-current", "(91)", "(5,739)"],
    ["", "23,737", "(17,572)"],
    ["As at 31 December 2018", "", ""],
    ["Monetary assets, current", "18,041", "1,994"],
    ["Monetary assets, non-current", "2,642", "–"],
    ["Monetary liabilities, current", "(3,434)", "(4,587)"],
    ["Monetary liabilities, non-current", "(3,733)", "(9,430)"],
    ["", "13,516", "(12,023)"]]


def test_a_header_that_states_its_unit_still_names_its_column():
    table = table_from_rows(VEDEBEL, title="As at 31 December 2019, the Group’s major monetary "
                            "assets and liabilities exposed to foreign exchange risk are "
                            "listed below:")
    assert [c.header for c in table.columns] == ["USD denominated RMB’Million",
                                                 "Non-USD denominated RMB’Million"]
    assert table.scale == 6
    tables = {"t": [table]}
    # "non-USD" is said of the column: the row is "current", not "non-current"
    assert cell("non-USD denominated current monetary assets", "2019-12-31",
                documents=[doc("t")], tables=tables).value == "2,899"
    assert cell("USD denominated current monetary assets", "2019-12-31",
                documents=[doc("t")], tables=tables).value == "27,728"
    assert cell("noncurrent monetary assets", "2018-12-31", quantity="money",
                documents=[doc("t")], tables=tables).value == "2,642"  # USD: the other is "–"
    # the unlabelled row under both is assets less liabilities: no total of liabilities
    assert refused("total non-USD denominated monetary liabilities", "2019-12-31",
                   documents=[doc("t")], tables=tables).code == "NOT_FOUND"


def test_a_row_spelt_the_british_way_is_the_american_name():
    tables = {"t": [table_from_rows([
        ["£m", "2019", "2018"],
        ["Amortisation of acquired intangibles", "41.2", "38.9"],
        ["Capitalised development costs", "12.0", "9.7"]])]}
    assert cell("amortization of acquired intangibles", "2019", documents=[doc("t")],
                tables=tables).value == "41.2"
    assert cell("capitalized development costs", "2018", documents=[doc("t")],
                tables=tables).value == "9.7"


def test_a_row_whose_label_states_its_scale_is_in_that_scale_though_the_table_states_none():
    # TAT-QA dev (an egg producer's key figures): each row says its own unit
    table = table_from_rows([["Fiscal Year ended", "June 1, 2019", "June 2, 2018"],
                             ["Gross profit (in thousands)", "222,859", "361,046"],
                             ["Net average shell egg selling price (rounded)", "1.27", "1.40"]])
    read = cell("gross profit", "2018", [doc("t")], tables={"t": [table]})
    assert (read.value, read.quantity.amount, read.quantity.scale) == ("361,046", 361046, 3)


def test_a_word_that_says_how_a_line_adds_up_is_not_part_of_its_name():
    # TAT-QA dev (the cell sweep's): property and equipment, "Less: Accumulated
    # depreciation"; and a maturity's "Less than 1 year", which is its name
    table = table_from_rows([
        ["", "December 31, 2019", "December 31, 2018"],
        ["Land", "$1,949", "$2,185"],
        ["Construction in progress", "5,037", "2,253"],
        ["", "492,379", "475,076"],
        ["Less: Accumulated depreciation", "366,389", "339,658"],
        ["Less current portion", "(1,200)", "(1,100)"],
        ["", "$125,990", "$135,418"]])
    tables = {TEN_K.doc_id: [table]}
    assert cell("accumulated depreciation", "2019-12-31", tables=tables).value == "366,389"
    assert cell("current portion", "2018-12-31", tables=tables).value == "(1,100)"
    assert "less" in label_words("Less than 1 year").words


def test_a_row_under_a_heading_that_reads_on_into_it_is_named_by_its_own_words_too():
    # TAT-QA dev (a UK tax reconciliation, the cell sweep's): "Tax effect of:" over
    # "Non-deductible items", which readers call by its own words
    reconciliation = table_from_rows([
        ["", "52 weeks ended 30 Mar 2019 £m", "52 weeks ended 31 Mar 2018 £m"],
        ["(Loss)/profit before taxation", "(42.7)", "20.9"],
        ["Tax effect of:", "", ""],
        ["Non-deductible items", "(0.9)", "(0.1)"],
        ["Impairment of goodwill", "-", "(0.8)"],
        ["Income tax credit/(charge)", "8.9", "(13.7)"]])
    tables = {TEN_K.doc_id: [reconciliation]}
    assert cell("non-deductible items", "2018", tables=tables).value == "(0.1)"
    assert cell("tax effect of non-deductible items", "2019", tables=tables).value == "(0.9)"
    # a row that names the words by itself is read before one named so under a heading
    items = table_from_rows([["", "2019", "2018"], ["Non-deductible items", "(5.0)", "(6.0)"]])
    both = {TEN_K.doc_id: [reconciliation, items]}
    assert cell("non-deductible items", "2018", tables=both).value == "(6.0)"
    # what the rows include is not the line item they name
    compensation = table_from_rows([
        ["(in thousands)", "2019", "2018"],
        ["Includes stock-based compensation of:", "", ""],
        ["Cost of services revenue", "1,820", "1,002"],
        ["Research and development", "3,011", "2,500"]])
    tables = {TEN_K.doc_id: [compensation]}
    assert refused("cost of services revenue", "2019", tables=tables).code == "NOT_FOUND"


def test_a_label_that_writes_its_heading_before_a_colon_is_read_under_that_heading():
    # TAT-QA dev (the cell sweep's): income tax expense by jurisdiction, each line
    # "Current: Federal", "Deferred: State" on its own
    tables = {TEN_K.doc_id: [table_from_rows([
        ["", "2019", "2018"],
        ["Current: Federal", "$1,139,927", "$1,294,253"],
        ["Current: State", "428,501", "423,209"],
        ["Deferred: Federal", "34,466", "(470,166)"],
        ["Deferred: State", "6,106", "(83,296)"],
        ["Income tax expense", "$1,609,000", "$1,164,000"]])]}
    assert cell("Current: Federal", "2019", tables=tables).value == "$1,139,927"
    assert cell("deferred state", "2018", tables=tables).value == "(83,296)"
    assert refused("federal", "2019", tables=tables).code == "AMBIGUOUS"


def test_a_quarter_is_the_column_of_a_table_of_quarters_dated_by_their_last_days():
    # "Selected quarterly financial data" as bank 10-Ks head it: each quarter by its end
    quarters = table_from_rows([
        ["(in thousands)", "Dec. 31, 2019", "Sept. 30, 2019", "June 30, 2019", "March 31, 2019"],
        ["Total interest income", "48,915", "49,102", "47,660", "46,335"]])
    tables = {TEN_K.doc_id: [quarters]}
    assert cell("total interest income", "2019-Q3", tables=tables).value == "49,102"
    # a balance sheet's two dates, three quarters apart, are no table of quarters
    balances = table_from_rows([["", "September 30, 2019", "December 31, 2018"],
                                ["Total assets", "1,200", "1,100"]])
    tables = {TEN_K.doc_id: [balances]}
    assert refused("total assets", "2019-Q3", tables=tables).code == "NOT_FOUND"


def test_a_title_saying_what_its_rows_are_included_in_names_none_of_them():
    # TAT-QA dev: "Operating income included the following:" lists charges within the
    # operating income; its "Total" is theirs, not the operating income
    table = table_from_rows([["", "2019", "2018"],
                             ["Acquisition and integration costs", "$ 27", "$ 14"],
                             ["Restructuring and other charges, net", "255", "126"],
                             ["Other items", "17", "—"],
                             ["Total", "$ 302", "$ 148"]],
                            title="Operating income included the following:")
    with pytest.raises(ToolError) as e:
        cell("operating income", "2019", [doc("t")], tables={"t": [table]})
    assert e.value.code == "NOT_FOUND"
    # its rows are still read by their own words
    assert cell("restructuring and other charges, net", "2019", [doc("t")],
                tables={"t": [table]}).value == "255"


def test_extract_reads_no_row_by_the_words_of_its_titles_scale_exceptions():
    # "(in thousands, except per share amounts)" says which rows are in units: "Net loss"
    # under it is not the net loss per share, nor "Net revenue" the revenue per share
    income = table_from_rows(
        [["", "2022", "2021"], ["Net revenue", "1,905,871", "1,541,889"],
         ["Net loss", "$ (373,705)", "$ (520,379)"],
         ["Net loss per share attributable to common stockholders, basic", "$ (0.18)",
          "$ (0.27)"]],
        title="Consolidated Statements of Operations (in thousands, except per share amounts)")
    tables = {"pltr": [income]}
    assert cell("net loss", "2022", [doc("pltr")], tables=tables).quantity.amount == -373705
    for row in ("net loss per share", "revenue per share"):
        e = refused(row, "2022", [doc("pltr")], tables=tables)
        assert e.code in ("NOT_FOUND", "AMBIGUOUS") and "(373,705)" not in e.message


EPS_BOTH = {name: [table_from_rows(t["rows"], page=t["page"], title=t["title"])]
            for name, t in DATA["eps_basic_and_diluted"].items()}


@pytest.mark.parametrize("name, row, period, value", [
    ("ondas_2023_p36", "basic net loss per share", "2023", "$(0.88)"),
    ("ondas_2023_p36", "diluted earnings per share", "2022", "$(1.73)"),
    ("ondas_2023_p36", "weighted average number of common shares outstanding, basic", "2023",
     "52,740,215"),
    ("rklb_2023_p66", "diluted net loss per share", "2021", "$(0.56)"),  # "Basic and diluted"
    ("rklb_2023_p66", "basic weighted average shares outstanding", "2022", "466,214,095"),
    ("rklb_2023_p101", "diluted eps", "2023", "$(0.38)"),  # "…stockholders-basic and diluted"
    ("rklb_2023_p101", "diluted weighted average shares outstanding", "2021", "209,895,135"),
])
def test_a_row_stating_basic_and_diluted_as_one_is_read_for_either(name, row, period, value):
    # companies with losses state one figure for both ("Net loss per share - basic and
    # diluted"): it is basic's and diluted's
    out = cell(row, period, documents=[doc(name)], tables=EPS_BOTH)
    assert out.value == value and out.document.page == EPS_BOTH[name][0].page


def test_a_join_of_basic_and_diluted_in_parentheses_is_the_labels_own():
    # "Net loss per share (basic and diluted)", as smaller filers write it: what a label
    # says in parentheses is set aside, but not this (it was read for neither part)
    both = label_words("Net loss per share (basic and diluted)")
    assert both == label_words("Net loss per share, basic and diluted")
    for name in ("net loss per share, basic", "diluted net loss per share"):
        assert fit(label_words(name), both).how == "exact"
    assert fit(label_words("net loss per share"), label_words("Net loss per share (1)"))


def test_a_join_that_sums_its_parts_names_neither_part():
    # "basic and diluted" states one figure for each; "current and non-current" their sum
    both, summed = label_words("Net loss per share, basic and diluted"), \
        label_words("Deferred revenue, current and non-current")
    assert fit(label_words("net loss per share, basic"), both).how == "exact"
    assert fit(label_words("deferred revenue, current"), summed) is None
    assert fit(label_words("deferred revenue, current and non-current"), summed).how == "exact"
    # a name saying both words is the row as it stands
    assert fit(label_words("net loss per share, basic and diluted"), both).how == "exact"
