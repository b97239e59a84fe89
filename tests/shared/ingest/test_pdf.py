"""PDF files as `chordal index` reads them: a real SEC filing through pdfplumber, its
pages' words laid out in columns, pages apart, tables from the table reader."""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
from pathlib import Path

import pypdfium2
import pytest

from shared.errors import InputError
from shared.search.document import PAGE_BREAK, page_at
from shared.ingest.layout import Placed, char_width, laid_out, lines_of
from shared.ingest.pdf import read_pdf

FILING = Path(__file__).parents[2] / "fixtures" / "documents" / "pati-20141231-10q.pdf"


@pytest.fixture(scope="module")
def filing():
    return read_pdf(FILING, processes=2)  # its pages' words found by two worker processes


def page(text: str, number: int) -> str:
    return text.split(PAGE_BREAK)[number - 1]


def test_a_filing_keeps_its_pages_apart_in_order(filing):
    assert filing.pages == 30 == filing.content.count(PAGE_BREAK) + 1
    assert "FORM 10-Q" in page(filing.content, 1)
    offset = filing.content.index("Revolving credit (uncollateralized)")
    assert page_at(filing.content, offset) == 8


def test_a_row_label_stays_on_the_line_of_its_figures_in_their_columns(filing):
    lines = page(filing.content, 8).splitlines()
    (row,) = [line for line in lines if line.startswith("Revolving credit (uncollateralized)")]
    assert row.split() == ["Revolving", "credit", "(uncollateralized)", "$", "6,551", "7,282"]
    header = next(line for line in lines if "December 31," in line and "September 30," in line)
    assert header.index("December") > row.index("$")  # over the figures, as on the page


def test_prose_keeps_one_space_between_words(filing):
    text = page(filing.content, 8)
    assert "As of December 31, 2014, $6,551,000 was\nborrowed under the FRP Credit Agreement" \
        in text


def test_tables_come_with_the_page_they_are_on_and_their_columns_periods(filing):
    cash_flows = [t for t in filing.tables if "CASH FLOWS" in (t.title or "")]
    assert [t.page for t in cash_flows] == [6]
    assert [c.period for c in cash_flows[0].columns] == ["2014-Q4", "2013-Q4"]
    assert cash_flows[0].scale == 3  # "(In thousands)"


def test_words_set_apart_from_their_figure_and_dot_leaders_are_laid_out_as_a_reader_sees_them():
    words = [Placed(50, 110, 100, 110, "Revenues"), Placed(112, 300, 100, 110, "........$"),
             Placed(330, 360, 100, 110, "(1,657"), Placed(361, 364, 100, 110, ")"),
             Placed(420, 440, 100, 110, "9.1"), Placed(440, 446, 100, 110, "%"),
             Placed(50, 70, 112, 122, "Net"), Placed(73, 93, 112, 122, "loss"),
             Placed(50, 70, 124, 134, "Net"), Placed(73, 93, 125, 135, "sales"),
             Placed(50, 70, 160, 170, "Notes")]
    width = char_width(words)
    lines = lines_of(words, width)
    assert [line.cells()[-1][2] for line in lines] == ["9.1%", "loss", "sales", "Notes"]
    assert [w.text for w in lines[0].words] == ["Revenues", "$", "(1,657)", "9.1%"]
    text = laid_out(lines, width).split("\n")
    assert text[0].split() == ["Revenues", "$", "(1,657)", "9.1%"] and "  $" in text[0]
    assert text[1:] == ["Net loss", "Net sales", "", "Notes"]  # a wide gap: a blank line


def test_a_line_that_is_only_a_dot_leader_is_no_line():
    # page 431 of Tesla's 10-K for 2020, an exhibit's signature block: a leader alone on
    # its line over "for and on behalf of [Name of Chargor]" (indexing the filing failed)
    words = [Placed(14.1, 214.1, 273.9, 283.9, "." * 60),
             Placed(14.1, 26.0, 284.3, 294.3, "for"), Placed(28.7, 44.0, 284.3, 294.3, "and")]
    width = char_width(words)
    lines = lines_of(words, width)
    assert [[w.text for w in line.words] for line in lines] == [["for", "and"]]
    assert laid_out(lines, width) == "for and"
    assert laid_out(lines_of(words[:1], width), width) == ""


def test_a_file_that_is_not_a_pdf_is_refused_naming_it(tmp_path):
    bad = tmp_path / "report.pdf"
    bad.write_text("<html>not a PDF</html>")
    with pytest.raises(InputError, match=r"report\.pdf: cannot be read as a PDF"):
        read_pdf(bad)


def test_a_scan_without_text_is_refused_saying_to_run_ocr_first(tmp_path):
    scan = tmp_path / "scan.pdf"
    pdf = pypdfium2.PdfDocument.new()
    pdf.new_page(612, 792)
    pdf.save(scan)
    with pytest.raises(InputError, match=r"scan\.pdf: the PDF holds no text .*OCR"):
        read_pdf(scan)


def test_a_page_the_reader_fails_on_keeps_its_text_and_is_named(monkeypatch, filing):
    # a fault of the table reader or of the layout on one page (page 431 of Tesla's 10-K
    # for 2020 once stopped the whole filing): that page's tables are left out, or its
    # words kept in reading order, and the page is named; every other page reads as before
    from shared.ingest import pdf

    tables, layout = pdf.Pages.tables, pdf.laid_out

    def failing_tables(self, lines, page=None):
        if page == 6:
            raise IndexError("list index out of range")
        return tables(self, lines, page)

    def failing_layout(lines, width):
        if any(w.text == "Revolving" for line in lines for w in line.words):
            raise ValueError("max() arg is an empty sequence")
        return layout(lines, width)

    monkeypatch.setattr(pdf.Pages, "tables", failing_tables)
    monkeypatch.setattr(pdf, "laid_out", failing_layout)
    read = read_pdf(FILING)
    assert read.pages == 30 and read.unread == [
        "page 6: its tables were not read (IndexError: list index out of range)",
        "page 8: its words were not laid out in columns (ValueError: max() arg is an empty "
        "sequence); its text is in reading order"]
    assert "CASH FLOWS" in page(read.content, 6) and not [t for t in read.tables if t.page == 6]
    assert "Revolving credit (uncollateralized) $ 6,551 7,282" in page(read.content, 8)
    assert [t for t in read.tables if t.page != 6] == [t for t in filing.tables if t.page != 6]
    assert filing.unread == []


@pytest.fixture(scope="module")
def alone():
    return read_pdf(FILING, processes=1)


def test_pages_read_in_worker_processes_read_as_in_this_one_and_the_workers_end(filing, alone):
    assert (alone.content, alone.tables, alone.unread) == (
        filing.content, filing.tables, filing.unread)
    assert not multiprocessing.active_children()


def test_a_worker_process_that_dies_costs_no_page(caplog, alone):
    # a worker killed while pages are being read (the OOM killer, an operator): the pages
    # not yet read are read in this process, with a warning, and the file reads whole
    killed = []

    def kill_a_worker(number, pages):
        if number == 3 and not killed:
            killed.append(multiprocessing.active_children()[0].pid)
            os.kill(killed[0], signal.SIGKILL)

    with caplog.at_level(logging.WARNING, logger="shared.ingest.pdf"):
        read = read_pdf(FILING, kill_a_worker, processes=2)
    assert killed and not multiprocessing.active_children()
    assert (read.content, read.tables, read.pages) == (alone.content, alone.tables, 30)
    (warning,) = [r.getMessage() for r in caplog.records]
    assert "a process finding the words of its pages died" in warning
    assert "read in this process" in warning
