"""HTML pages as `chordal index` reads them: a real SEC filing in inline XBRL (its
hidden header, its page breaks, tables whose figures span the "$" columns) and small
pages for what filings do not show."""

from __future__ import annotations

from pathlib import Path

import pytest

from shared.errors import InputError
from shared.search.document import PAGE_BREAK
from shared.ingest.html import cells_in_columns, read_html

EXCERPT = Path(__file__).parents[2] / "fixtures" / "documents" / "aapl-20250329-10q-excerpt.htm"


@pytest.fixture(scope="module")
def filing():
    return read_html(EXCERPT)


def test_a_filing_is_read_page_by_page_without_its_hidden_xbrl_header(filing):
    assert filing.pages == 2 and filing.content.count(PAGE_BREAK) == 1
    toc, cash_flows = filing.content.split(PAGE_BREAK)
    assert toc.startswith("Apple Inc.\n\nForm 10-Q\n\nFor the Fiscal Quarter Ended March 29, 2025")
    assert "0000320193" not in filing.content and "P1Y" not in filing.content
    assert "CONDENSED CONSOLIDATED STATEMENTS OF CASH FLOWS (Unaudited)" in cash_flows
    assert filing.title == "aapl-20250329"


def test_a_table_row_is_one_line_with_its_figures_in_columns(filing):
    row = next(line for line in filing.content.splitlines() if line.startswith("Net income"))
    assert row.split() == ["Net", "income", "61,110", "57,552"]
    spent = next(line for line in filing.content.splitlines()
                 if line.startswith("Payments for acquisition of property"))
    assert spent.index("(6,011)") < row.index("57,552")  # the same column as Net income's


def test_the_statement_of_cash_flows_is_a_table_on_its_page_with_periods_and_scale(filing):
    (table,) = [t for t in filing.tables if t.title == "(In millions)"]
    assert table.page == 2 and table.scale == 6
    assert [c.period for c in table.columns] == ["2024-10-01..2025-03-29",
                                                 "2023-10-01..2024-03-30"]
    capex = next(r for r in table.rows if r.label.startswith("Payments for acquisition of"))
    assert [c.text for c in capex.cells] == ["(6,011)", "(4,388)"]


def test_a_spanning_heading_sits_over_its_figures_and_a_spanning_figure_in_its_last_column():
    rows = [[(1, ""), (3, "2019"), (3, "2018")],
            [(1, "Revenue"), (1, "$"), (1, "108,716"), (1, ""), (1, "$"), (1, "114,065"), (1, "")],
            [(1, "Net income"), (2, "1,763"), (1, ""), (2, "5,119"), (1, "")]]
    assert cells_in_columns(rows) == [
        ["", "", "2019", "", "", "2018", ""],
        ["Revenue", "$", "108,716", "", "$", "114,065", ""],
        ["Net income", "", "1,763", "", "", "5,119", ""]]


def test_a_small_page_without_breaks_is_one_page_and_its_tables_name_none(tmp_path):
    page = tmp_path / "note.html"
    page.write_bytes("""<html><head><meta charset="windows-1252"><title>Caf\xe9 &amp; Co.
        Annual Note 2024</title><style>p {color: red}</style></head><body>
        <h1>Caf\xe9 &amp; Co.</h1><p>Revenue rose<br>to a record.</p>
        <script>var x = "not text";</script>
        <table><caption>Results (in thousands)</caption>
          <tr><th></th><th>2024</th><th>2023</th></tr>
          <tr><td>Revenue</td><td>1,200</td><td>1,100</td></tr>
          <tr><td>Net income<table><tr><td>nested</td></tr></table></td><td>300</td><td>(20)</td></tr>
        </table><p>After the table.</body></html>""".encode("cp1252"))
    read = read_html(page)
    assert read.title == "Café & Co. Annual Note 2024" and read.pages == 1
    assert read.content.splitlines()[:3] == ["Café & Co.", "", "Revenue rose"]
    assert "not text" not in read.content and "color" not in read.content
    assert read.content.rstrip().endswith("After the table.")
    (table,) = read.tables
    assert table.page is None and table.scale == 3 and table.title == "Results (in thousands)"
    assert [r.label for r in table.rows][0] == "Revenue"


def test_a_page_with_no_text_is_refused_naming_the_file(tmp_path):
    page = tmp_path / "frame.html"
    page.write_text("<html><head><script src='app.js'></script></head><body></body></html>")
    with pytest.raises(InputError, match=r"frame\.html: the page holds no text"):
        read_html(page)
