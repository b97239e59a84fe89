"""EXTRACT reads a table's cell end to end: a Form 10-K indexed with its tables, plans in
JSON and ReWOO read cells by row and period through real planner, executor and
finalizer processes; a row the tables lack is not found, and `chordal debug` names the
nearest rows and their periods."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shared.models import RunRecord
from shared.search import Document, open_backend
from shared.tables.read import table_from_rows, tables_in_text

pytestmark = pytest.mark.integration
DATA = json.loads((Path(__file__).resolve().parents[1] / "shared" / "tools" / "data"
                   / "report_tables.json").read_text())
TITLE = "Patriot Transportation Holding 2018 Form 10-K"


@pytest.fixture(scope="module")
def filing(pipeline):
    summary = DATA["pati_2018_five_year_summary"]
    pages = DATA["pati_2018_10k"]
    tables = [table_from_rows(summary["rows"], page=summary["page"], title=summary["title"])]
    tables += [t for page, text in pages.items() for t in tables_in_text(text, page=int(page))]
    backend = open_backend(pipeline.settings)
    backend.add([Document(id="pati-2018-10k", title=TITLE, content="\f".join(pages.values()),
                          date="2018-12-07", period="2017-10-01..2018-09-30",
                          source_type="filing", tables=tables)])
    backend.close()
    return pipeline


def cell(step_id, row, period, var, **kw):
    return {"id": step_id, "operation": "EXTRACT", "source": "$R1", "row": row,
            "period": period, "output_var": var, **kw}


def test_a_plan_reads_cells_by_row_and_period_with_their_pages_and_rows_as_evidence(filing):
    record = filing.ask("What were Patriot's capital expenditure in fiscal 2018 and its "
                        "interest expense in fiscal 2015?", {"domain": "finance", "steps": [
                            {"id": "E1", "operation": "GET", "source": TITLE,
                             "output_var": "$R1"},
                            cell("E2", "capital expenditure", "FY2018", "$CAPEX",
                                 quantity="money"),
                            cell("E3", "Interest expense", "FY2015", "$INTEREST"),
                            cell("E4", "proceeds from the sale of equipment", "FY2018",
                                 "$SOLD")]})
    steps = {s.step_id: s for s in record.steps}
    capex, interest, sold = steps["E2"], steps["E3"], steps["E4"]
    assert (capex.status, capex.value, capex.confidence) == ("ok", "(4,656)", "line_item")
    assert (capex.quantity.amount, capex.quantity.scale, capex.quantity.unit) == (-4656, 3, "USD")
    assert capex.document.doc_id == "pati-2018-10k" and capex.document.page == 46
    assert capex.quote.startswith("Cash flows from investing activities: Purchase of property "
                                  "and equipment")
    assert (interest.value, interest.document.page) == ("112", 35)  # the five-year summary
    assert sold.error_code == "NOT_FOUND" and "nearest rows: 'Proceeds from the sale of " \
        "property, plant and equipment'" in sold.error_message
    assert record.answer is not None and "page 46" in " ".join(
        f.evidence.cite() for f in record.answer.footnotes)
    debugged = filing.cli("debug", record.query_id)
    assert debugged.returncode == 0, debugged.stderr
    assert "E4 [NOT_FOUND]" in debugged.stdout
    assert "nearest row: 'Proceeds from the sale of property, plant and equipment' in table " \
        "'CONSOLIDATED STATEMENTS OF CASH FLOWS" in debugged.stdout
    assert "'2018' (2017-10-01..2018-09-30)" in debugged.stdout


def test_a_rewoo_plan_reads_a_cell_through_chordal_ask(filing, tmp_path):
    plan = tmp_path / "plan.rewoo.txt"
    plan.write_text(f"#E1 = Lookup[{TITLE}]\n"
                    "#E2 = Extract[#E1, row=net cash provided by operating activities, "
                    "period=FY2017]\n"
                    "Answer: Operating cash flow was {{ E2 }} thousand dollars.\n")
    result = filing.cli("ask", "Patriot's operating cash flow in fiscal 2017?", "--plan",
                        str(plan), "--json")
    assert result.returncode == 0, result.stderr
    record = RunRecord.model_validate_json(result.stdout)
    (flow,) = [s for s in record.steps if s.operation == "EXTRACT"]
    assert flow.status == "ok" and flow.document.page == 46
    assert flow.quantity.scale == 3 and record.answer.complete
