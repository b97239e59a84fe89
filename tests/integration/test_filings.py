"""A real filing as a user has it, asked without an LLM: `chordal index` reads the PDF
of a Form 10-Q (Patriot Transportation Holding, quarter ended December 31, 2014; a
public SEC filing, tests/fixtures/documents) and `chordal ask` answers from its tables
through real workers on a real Redis: a line item at a balance-sheet date, a change
between two of its columns, and an honest "not found" (exit 3) for a question whose
answer is words or that no indexed filing covers."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from shared.config import Settings
from shared.models import RunRecord
from shared.stack.embedded import Stack

from ..conftest import Pipeline, free_port

pytestmark = pytest.mark.integration

FILING = Path(__file__).resolve().parents[1] / "fixtures" / "documents" / "pati-20141231-10q.pdf"
TITLE = "Patriot Transportation Holding Form 10-Q for the quarter ended December 31, 2014"


@pytest.fixture(scope="module")
def filing(tmp_path_factory) -> Pipeline:
    home = tmp_path_factory.mktemp("filing")
    settings = Settings(home=home, redis_port=free_port(), redis_url=None,
                        search_db=home / "search.db", llm_base_url=None, llm_model=None)
    with Stack(settings) as stack:
        p = Pipeline(settings.model_copy(update={"redis_url": stack.redis_url}))
        indexed = p.cli("index", str(FILING), "--title", TITLE, "--period",
                        "2014-10-01..2014-12-31", "--source-type", "filing", timeout=300)
        assert indexed.returncode == 0, indexed.stderr
        yield p


def ask(p: Pipeline, question: str) -> tuple[int, RunRecord]:
    result = p.cli("ask", question, "--json", timeout=180)
    assert result.stdout.strip(), result.stderr
    return result.returncode, RunRecord.model_validate_json(result.stdout)


def test_a_line_item_at_a_balance_sheet_date_is_read_from_the_filings_table(filing):
    code, record = ask(filing, "What were Patriot Transportation Holding's total current "
                               "liabilities at December 31, 2014?")
    assert code == 0, record.answer
    assert record.planner == "heuristic"
    get, extract = record.plan.steps
    assert (get.source, extract.period) == (TITLE, "2014-12-31")
    assert "current liabilities" in extract.row.lower()
    cell = record.steps[-1]
    assert cell.value == "9,060"
    assert (cell.quantity.kind, cell.quantity.amount, cell.quantity.scale) == \
        ("money", Decimal(9060), 3)
    assert cell.document.page == 4  # the combined balance sheets
    assert "9,060" in record.answer.text


def test_a_change_between_two_columns_is_computed_from_both_cells(filing):
    code, record = ask(filing, "What was the change in Patriot Transportation Holding's total "
                               "current liabilities from September 30, 2014 to December 31, "
                               "2014?")
    assert code == 0, record.answer
    periods = [s.period for s in record.plan.steps if s.operation == "EXTRACT"]
    assert periods == ["2014-09-30", "2014-12-31"]
    result = record.steps[-1]
    assert result.operation == "COMPUTE" and Decimal(result.value) == Decimal(-1276)


@pytest.mark.parametrize("question", [
    "Which states does Patriot Transportation Holding operate terminals in?",
    "Why did Patriot Transportation Holding's revenues fall in the quarter ended December "
    "31, 2014?",
    "What is the FY2019 capital expenditure amount (in USD millions) for Patriot "
    "Transportation Holding?",
])
def test_what_the_filing_does_not_state_as_a_figure_is_not_found_never_a_figure(filing,
                                                                                 question):
    code, record = ask(filing, question)
    assert code == 3
    assert record.plan is None and record.planner == "heuristic"
    assert record.answer.text.lower().startswith("not found")
    assert TITLE in record.answer.text  # the nearest document is named
