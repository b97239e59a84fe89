"""The table reader on rows of cells: real tables of annual reports from TAT-QA's dev set
(an HTML table's or a JSON record's cells read the same way)."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from bench.tables import locate, question_period
from shared.tables.periods import columns_for
from shared.tables.read import table_from_rows, tables_from_rows
from shared.tables.quantities import parse_quantity
from shared.tools.rows import PRICE_SUBJECT, subject_of

from .conftest import DATA, row

EXCERPT = json.loads((DATA / "tatqa_dev_excerpt.json").read_text())
TABLES = {c["uid"][:8]: c["table"] for c in EXCERPT}


def _questions():
    for context in EXCERPT:
        for q in context["questions"]:
            period = question_period(q["question"])
            if len(q["answer"]) == 1 and parse_quantity(q["answer"][0]) and period:
                yield context["uid"][:8], q["question"], q["answer"][0], period


def test_no_answer_cell_a_question_names_is_read_from_another_column():
    outcomes = [locate(table_from_rows(TABLES[uid]), question, answer, period)
                for uid, question, answer, period in _questions()]
    assert len(outcomes) >= 30
    assert "wrong" not in outcomes
    # the excerpt holds the dev set's hard cases (ambiguous columns, January year ends)
    assert outcomes.count("right") >= 0.7 * sum(1 for o in outcomes if not o.startswith("skip"))


def test_years_under_a_spanning_fiscal_year_header_are_fiscal_years():
    table = table_from_rows(TABLES["3ffd9053"], title="total net sales (in millions):")
    assert (table.unit, table.scale) == ("USD", 6)
    assert [c.period for c in table.columns] == [
        "2018-10-01..2019-09-30", "2017-10-01..2018-09-30", "2016-10-01..2017-09-30"]
    sales = row(table, "Total sales")
    assert sales.total and sales.cells[columns_for(table, "FY2019")[0]].quantity.absolute() == (
        Decimal("1496.5E6"))


def test_columns_run_oldest_first_as_well_as_newest_first():
    table = table_from_rows(TABLES["b224a7d4"])  # "December 31," over "2018", "2019"
    assert [c.period for c in table.columns] == ["2018-12-31", "2019-12-31"]
    assert columns_for(table, "2019") == [1] and columns_for(table, "FY18") == [0]


def test_a_columns_header_types_its_figures_where_the_tables_unit_is_another_columns():
    # a stock option roll-forward (TAT-QA dev): the "$" of the price column is not the
    # unit of the share counts beside it, nor of the remaining term in years
    options = table_from_rows([
        ["", "Number of Shares", "Weighted-Average Exercise Price Per Share",
         "Weighted-Average Remaining Contractual Term (in Years)"],
        ["Outstanding at September 30, 2016", "3,015,374", "$3.95", "6.4"],
        ["Granted", "147,800", "$7.06", ""]], title="(in thousands)")
    counts, price, term = row(options, "Outstanding at September 30, 2016").cells
    assert (counts.quantity.kind, counts.quantity.unit) == ("number", None)
    assert counts.quantity.absolute() == Decimal("3015374E3")  # a count, in the table's scale
    assert (price.quantity.kind, price.quantity.unit, price.quantity.scale) == ("money", "USD", 0)
    assert (term.quantity.kind, term.quantity.absolute()) == ("number", Decimal("6.4"))
    # an Australian share capital note: "NUMBER" of shares in millions beside "$M"
    capital = table_from_rows([
        ["", "2019", "", "2018", ""], ["", "NUMBER", "", "NUMBER", ""],
        ["SHARE CAPITAL", "M", "$M", "M", "$M"],
        ["Balance at start of period", "1,313.3", "6,201", "1,294.4", "5,719"]])
    cells = row(capital, "Balance at start of period").cells
    kinds = [(c.quantity.kind, c.quantity.unit) for c in cells]
    assert kinds == [("number", None), ("money", "USD")] * 2


def test_a_header_misspelt_names_no_period():
    table = table_from_rows(TABLES["3661fba5"])  # "Fiscal Yaar Ended March 31," over years
    assert [c.period for c in table.columns] == [None, None, None]


def test_a_header_repeated_below_the_rows_starts_a_table_of_its_own():
    rows = TABLES["8b43d33f"]
    first = table_from_rows(rows)
    assert [r.label for r in first.rows] == [
        "Foreign government obligations", "U.S. government obligations", "Total"]
    both = tables_from_rows(rows)
    assert [t.columns[0].period for t in both] == ["2019-12-31", "2018-12-31"]
    assert row(both[1], "Total").cells[3].text == "$179,000"


def test_a_year_ending_in_january_is_named_by_its_dates_and_the_newest_by_a_bare_year():
    table = table_from_rows(TABLES["89cf13a2"])
    assert columns_for(table, "2019") == columns_for(table, "FY2020") == []
    assert columns_for(table, "2020") == [0]
    assert columns_for(table, "January 31, 2020") == [0]
    assert columns_for(table, "year ended February 1, 2019") == [1]


def test_a_column_between_two_years_spanned_from_above_gets_no_period():
    table = table_from_rows(TABLES["37fc1d68"])  # "2019" over "Men", "Women"; "2018" over both
    assert [c.header for c in table.columns] == [
        "2019 Men Years", "2019 Women Years", "2018 Men Years", "2018 Women Years"]
    assert columns_for(table, "2019") == [0, 1]  # for the caller: ambiguous


def test_a_head_broken_off_mid_phrase_over_its_own_column_heads_that_column_alone():
    # TAT-QA dev: "Balance at Beginning of" over "Period (1/1/19)", beside two heads of
    # their own; "As of" over dates still spans them
    table = table_from_rows([
        ["", "Balance at Beginning of", "", ""],
        ["", "Period (1/1/19)", "Increase / (Decrease)", "Balance at End of Period"],
        ["Accounts receivable", "$90,831", "$7,117", "$97,948"]])
    assert [c.header for c in table.columns] == [
        "Balance at Beginning of Period (1/1/19)", "Increase / (Decrease)",
        "Balance at End of Period"]
    spanned = table_from_rows([["", "As of", ""], ["", "December 31, 2019", "December 31, 2018"],
                               ["Cash", "1", "2"]])
    assert [c.period for c in spanned.columns] == ["2019-12-31", "2018-12-31"]


@pytest.mark.parametrize("header, cells", [
    (["2019", "", "2018", ""], ["$", "1,452.4", "$", "1,146.2"]),
    (["2019", "2019", "2018", "2018"], ["$", "1,452.4", "$", "1,146.2"]),
    (["2019", "", "2018", ""], ["(1,452.4", ")", "1,146.2", ""]),
    (["", "2019", "", "2018"], ["$", "(1,452.4)", "$", "1,146.2"]),
])
def test_a_currency_sign_or_closing_parenthesis_in_a_cell_of_its_own_joins_its_figure(
        header, cells):
    # TAT-QA's first table, its cells split as an HTML table sets them (colspans blank
    # or repeated)
    table = table_from_rows([["", *header], ["Fixed Price", *cells]])
    assert [c.period for c in table.columns] == ["2019", "2018"]
    first, second = row(table, "Fixed Price").cells
    assert abs(first.quantity.amount) == Decimal("1452.4")
    assert second.quantity.amount == Decimal("1146.2")


def test_a_rate_reconciliation_writing_percent_signs_on_its_first_and_last_lines_is_in_percents():
    # TAT-QA dev ("Zavubiz annual report 2019"): the lines between carry no "%"
    table = table_from_rows([
        ["Years Ended December 31,", "2019", "2018", "2017"],
        ["Statutory federal income tax rate", "21.0%", "21.0%", "35.0%"],
        ["State and local income tax rate, net of federal tax benefits", "3.7", "3.7", "1.6"],
        ["Preferred stock disposition", "(9.9)", "—", "—"],
        ["Affordable housing credit", "(0.4)", "(0.6)", "(0.6)"],
        ["Effective income tax rate", "13.0%", "18.3%", "(48.3)%"]])
    state = table.rows[1].cells
    assert [c.quantity.kind for c in state] == ["percent"] * 3
    assert table.rows[3].cells[2].quantity.amount == Decimal("-0.6")
    assert table.rows[4].cells[2].quantity.kind == "percent"


def test_a_column_of_amounts_with_a_percent_line_stays_in_amounts():
    table = table_from_rows([["", "2019", "2018"], ["Revenue", "$1,200", "$1,100"],
                             ["Gross margin", "40%", "41%"], ["Units", "300", "280"],
                             ["Growth", "9%", "4%"]])
    assert table.rows[2].cells[0].quantity.kind != "percent"  # "$" elsewhere in the column


def test_a_change_spanning_from_above_heads_the_columns_comparing_not_the_years():
    table = table_from_rows(TABLES["79a8ddc2"])  # "Percent Change" over "2019 Actual Constant 2018"
    assert [c.period for c in table.columns] == [
        "2018-06-01..2019-05-31", None, None, "2017-06-01..2018-05-31"]
    assert [c.header for c in table.columns][1:3] == [
        "Year Ended May 31, Percent Change Actual", "Year Ended May 31, Percent Change Constant"]
    assert columns_for(table, "2018") == [3]


def test_a_heading_in_a_column_of_figures_under_the_periods_heads_the_rows_not_a_column():
    # TAT-QA dev: the section's name set in the first column of figures, between the
    # header naming the years and the first figures
    table = table_from_rows([["Year Ended May 31,", "", "", "", ""],
                             ["", "", "", "Percent Change", ""],
                             ["(Dollars in millions)", "2019", "Actual", "Constant", "2018"],
                             ["", "Cloud and License Revenues:", "", "", ""],
                             ["Americas (1)", "$18,410", "2%", "3%", "$18,030"],
                             ["EMEA", "9,168", "0%", "4%", "9,163"]])
    assert [c.period for c in table.columns] == [
        "2018-06-01..2019-05-31", None, None, "2017-06-01..2018-05-31"]
    assert [(r.section, r.label) for r in table.rows] == [
        ("Cloud and License Revenues", "Americas"), ("Cloud and License Revenues", "EMEA")]
    # above the periods it is a header cell, as "Percent Change" is
    assert table_from_rows([["", "Total revenues", "", ""], ["", "2019", "2018", "Change"],
                            ["Americas", "5", "4", "25%"]]).columns[0].period == "2019"


def test_a_year_beside_the_units_of_the_columns_is_their_period():
    # TAT-QA dev: "2019 | £m | £m" under the columns' names
    table = table_from_rows([["", "Total", "Fixed rate financial assets"],
                             ["2019", "£m", "£m"], ["Sterling", "29.1", "–"],
                             ["Euro", "115.9", "1.4"]])
    assert [(c.header, c.period) for c in table.columns] == [
        ("2019 Total", "2019"), ("2019 Fixed rate financial assets", "2019")]
    assert table.scale == 6

def test_a_row_adding_up_the_rows_above_it_is_a_total_whatever_its_label_says():
    # Ripufup's (TAT-QA dev) income before taxes by jurisdiction
    table = table_from_rows([["", "2019", "2018", "2017"],
                             ["Swiss", "$212,986", "$177,935", "$161,544"],
                             ["Non-Swiss", "58,147", "54,330", "53,445"],
                             ["Income before taxes", "$271,133", "$232,265", "$214,989"],
                             ["Income tax expense", "41,298", "37,156", "32,004"]])
    assert [r.total for r in table.rows] == [False, False, True, False]


def test_a_row_that_adds_up_in_one_column_only_is_not_a_total():
    table = table_from_rows([["", "2019", "2018"],
                             ["Product", "100", "70"],
                             ["Services", "50", "30"],
                             ["Gross margin", "150", "90"]])
    assert not any(r.total for r in table.rows)


# TAT-QA dev: a stock's price range by quarter, the year above the columns or above the rows
PRICES_BY_QUARTER = [["", "", "Common Stock Price Range 2018"], ["", "Low", "High"],
                     ["First Quarter", "$ 5.99", "$ 8.40"], ["Second Quarter", "$ 4.79", "$ 6.48"],
                     ["Third Quarter", "$ 2.66", "$ 4.63"], ["Fourth Quarter", "$ 1.88", "$ 3.39"]]
QUARTERS_UNDER_YEARS = [["", "High", "Low"], ["2019:", "", ""],
                        ["Fourth Quarter", "$11.44", "$9.47"], ["Third Quarter", "$14.96", "$10.26"],
                        ["Second Quarter", "$20.91", "$12.61"], ["First Quarter", "$18.19", "$8.87"],
                        ["2018:", "", ""], ["Fourth Quarter", "$12.16", "$7.43"],
                        ["Third Quarter", "$20.60", "$10.95"], ["Second Quarter", "$18.30", "$6.70"],
                        ["First Quarter", "$7.35", "$6.00"]]


def test_a_table_of_quarters_down_the_side_is_read_with_its_quarters_as_columns():
    table = table_from_rows(PRICES_BY_QUARTER)
    assert [c.period for c in table.columns] == ["2018-Q1", "2018-Q2", "2018-Q3", "2018-Q4"]
    assert [(r.section, r.label) for r in table.rows] == [
        ("Common Stock Price Range", "Low"), ("Common Stock Price Range", "High")]
    high = table.rows[1]
    assert high.cells[columns_for(table, "2018-Q1")[0]].quantity.amount == Decimal("8.40")

    table = table_from_rows(QUARTERS_UNDER_YEARS)
    assert [r.label for r in table.rows] == ["High", "Low"]
    assert columns_for(table, "2019-Q3") == [1] and columns_for(table, "2018-Q4") == [4]
    assert [c.text for c in table.rows[1].cells][:2] == ["$9.47", "$10.26"]
    assert table.rows[1].cells[0].quantity.kind == "money"


@pytest.mark.parametrize("rows", [
    # years across: the quarter's row has no item of its own to turn into
    [["", "2019", "2018"], ["First Quarter", "$0.10", "$0.09"], ["Second Quarter", "$0.10", "$0.09"]],
    # a row that is no quarter (the year's total)
    [["", "High", "Low"], ["2019:", "", ""], ["Fourth Quarter", "$11.44", "$9.47"],
     ["Full year", "$20.91", "$8.87"]],
    # a quarter of no known year
    [["", "High", "Low"], ["Fourth Quarter", "$11.44", "$9.47"], ["Third Quarter", "$14.96", "$10.26"]],
    # the same quarter twice
    [["", "High", "Low"], ["2019:", "", ""], ["Fourth Quarter", "$11.44", "$9.47"],
     ["Fourth Quarter", "$14.96", "$10.26"]],
])
def test_a_table_not_wholly_of_quarters_of_known_years_is_left_as_it_is(rows):
    table = table_from_rows(rows)
    assert [r.label for r in table.rows] == [r[0] for r in rows[1:] if any(r[1:])]


def test_the_header_again_for_earlier_dates_starts_a_table_of_its_own():
    # a goodwill rollforward (TAT-QA dev), the year before set under the year's own
    head = ["(In Millions)", "Dec 29, 2018", "Acquisitions", "Transfers", "Other",
            "Dec 28, 2019"]
    earlier = ["(In Millions)", "Dec 30, 2017", "Acquisitions", "Transfers", "Other",
               "Dec 29, 2018"]
    rows = [head, ["Data Center Group", "$5,424", "$1,758", "$—", "$—", "$7,155"],
            ["Total", "$24,513", "$1,825", "$—", "$(62)", "$26,276"],
            earlier, ["Data Center Group", "$5,421", "$3", "$—", "$—", "$5,424"],
            ["Total", "$24,389", "$162", "$—", "$(38)", "$24,513"]]
    first, second = tables_from_rows(rows)
    assert [r.label for r in first.rows] == ["Data Center Group", "Total"]
    assert [c.period for c in second.columns][::4] == ["2017-12-30", "2018-12-29"]
    assert row(second, "Total").cells[4].text == "$24,513"
    # a body row of words only is not a header: it names no period
    words = ["Of which:", "", "Acquisitions", "", "", ""]
    assert [r.label for r in table_from_rows([head, rows[1], words, rows[2]]).rows] == [
        "Data Center Group", "Of which:", "Total"]


def test_a_column_of_years_states_no_figure():
    # a tax carryforward table (TAT-QA dev): the year each expires beside its amount
    rows = [["(dollars in thousands)", "Last Fiscal Year of Expiration", "Amount"],
            ["Income tax net operating loss carryforwards:(1)", "", ""],
            ["Domestic–state", "2039", "$57,299"],
            ["Foreign", "2039 or indefinite", "$565,609"]]
    table = table_from_rows(rows)
    assert [c.quantity for c in row(table, "Domestic–state").cells][0] is None
    assert row(table, "Domestic–state").cells[1].quantity.amount == 57299


def test_a_measure_written_once_over_its_periods_heads_each_of_them():
    table = table_from_rows([
        ["", "", "Net additions (losses)", "", "% of penetration", ""],
        ["", "August 31, 2019", "August 31, 2019", "August 31, 2018", "August 31, 2019",
         "August 31, 2018"],
        ["Internet service customers", "446,137", "21,189", "21,417", "50.8", "49.7"]])
    assert [c.header for c in table.columns] == [
        "August 31, 2019", "Net additions (losses) August 31, 2019",
        "Net additions (losses) August 31, 2018", "% of penetration August 31, 2019",
        "% of penetration August 31, 2018"]
    # a period phrase over its years is no measure: the columns beside it keep their own
    years = table_from_rows([["", "", "Years Ended", "", "2019 vs. 2018", ""],
                             ["", "July 27, 2019", "July 28, 2018", "July 29, 2017",
                              "Variance in Dollars", "Variance in Percent"],
                             ["Product", "$39,005", "$36,709", "$35,705", "$2,296", "6%"]])
    assert [c.header for c in years.columns][2:] == [
        "July 29, 2017", "2019 vs. 2018 Variance in Dollars", "Variance in Percent"]


# TAT-QA dev's Mukakol: a stock's quarterly high and low, the lead-in cut off
PRICE_RANGE = [["", "High", "Low"], ["2019:", "", ""], ["Fourth Quarter", "$11.44", "$9.47"],
               ["Third Quarter", "$14.96", "$10.26"], ["Second Quarter", "$20.91", "$12.61"],
               ["First Quarter", "$18.19", "$8.87"]]


def test_a_table_of_only_high_and_low_amounts_per_share_is_a_stock_price_range():
    table = table_from_rows(PRICE_RANGE)
    assert [r.label for r in table.rows] == ["High", "Low"]
    assert subject_of(table) == PRICE_SUBJECT


@pytest.mark.parametrize("change", [
    lambda cell: cell.replace("$", "") + "%",  # high and low rates: not a price
    lambda cell: cell.split(".")[0],           # whole dollars: amounts, not prices per share
])
def test_high_and_low_rows_of_other_figures_are_about_nothing_unsaid(change):
    rows = [r if n < 2 else [r[0], *map(change, r[1:])] for n, r in enumerate(PRICE_RANGE)]
    assert subject_of(table_from_rows(rows)) is None


def test_a_table_with_rows_beside_high_and_low_is_about_what_it_says():
    rows = [[*r, "Dividends declared" if n == 0 else "" if n == 1 else "$0.10"]
            for n, r in enumerate(PRICE_RANGE)]
    table = table_from_rows(rows)
    assert [r.label for r in table.rows] == ["High", "Low", "Dividends declared"]
    assert subject_of(table) is None


def test_a_labelled_row_of_none_above_the_figures_is_a_row_not_a_header():
    # TAT-QA dev's Fopotus (VMware's employee stock purchase plan): "Dividend yield" is
    # "None" in each year, the first row under the header
    table = table_from_rows([
        ["", "", "For the Year Ended", ""],
        ["VMware Employee Stock Purchase Plan", "January 31, 2020", "February 1, 2019",
         "February 2, 2018"],
        ["Dividend yield", "None", "None", "None"],
        ["Expected volatility", "27.4%", "33.5%", "22.6%"]])
    assert [c.header for c in table.columns] == [
        "For the Year Ended January 31, 2020", "For the Year Ended February 1, 2019",
        "For the Year Ended February 2, 2018"]
    assert [r.label for r in table.rows] == ["Dividend yield", "Expected volatility"]
    assert table.rows[0].cells[0].quantity is None  # no figure is read from "None"


@pytest.mark.parametrize("unit, scale", [("$000", 3), ("£000", 3), ("(000)", 3), ("€m", 6)])
def test_a_row_of_units_under_the_years_is_the_scale_not_a_row_of_zeros(unit, scale):
    table = table_from_rows([["", "2019", "2018"], ["", unit, unit], ["Revenue", "1,200", "1,100"]])
    assert [r.label for r in table.rows] == ["Revenue"] and table.scale == scale
    assert [c.period for c in table.columns] == ["2019", "2018"]
