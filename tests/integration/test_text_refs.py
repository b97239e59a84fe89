"""Documents by reference, through the real stack: a GET stores which document and
version it read and a quote, never the text; the steps that read it get the text back,
from the search store or the shared cached copy of that version."""

from __future__ import annotations

import json
import time

import pytest
import redis
from fastapi.testclient import TestClient
from pydantic import SecretStr

from producers.api.app import create_app
from shared import naming
from shared.models import ExtractStep, GetStep, Query, StepTask
from shared.search import open_backend
from shared.journey.steps import run_step
from shared.stores.texts import TextReader, document_text, version_of

pytestmark = pytest.mark.integration

FILLER = "The company discussed its operations, its markets and its risks at length. " * 2800


def filing(doc_id: str, title: str, revenue: str) -> dict:
    """A document of real-filing size (about 200 KB) whose figure sits near its end."""
    return {"id": doc_id, "title": title, "date": "2024-05-01",
            "content": f"{title}\n{FILLER}\nTotal revenue of ${revenue} million for the quarter."}


def index(pipeline, tmp_path, *docs: dict) -> None:
    path = tmp_path / f"docs-{time.monotonic_ns()}.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in docs))
    result = pipeline.cli("index", str(path))
    assert result.returncode == 0, result.stderr


def plan(title: str) -> dict:
    return {"steps": [
        {"id": "E1", "operation": "GET", "source": title, "output_var": "$D"},
        {"id": "E2", "operation": "EXTRACT", "source": "$D",
         "pattern": r"Total revenue of \$(\d+(?:\.\d+)?) million", "output_var": "$R"}],
        "answer": "Revenue was ${{ R }} million."}


def test_a_get_stores_a_reference_and_a_quote_and_extract_reads_the_whole_text(pipeline, tmp_path):
    doc = filing("refs-orchard-q1", "Orchard Mills Q1 2024 Quarterly Report", "512.5")
    index(pipeline, tmp_path, doc)
    record = pipeline.ask("orchard revenue", plan(doc["title"]))
    assert record.status == "done", record.error
    get, extract = record.steps
    (ref,) = get.texts
    assert (ref.doc_id, ref.version, ref.chars) == (doc["id"], version_of(doc["content"]),
                                                   len(doc["content"]))
    assert get.value == ref.quote and ref.quote.startswith("Orchard Mills Q1 2024")
    assert len(doc["content"]) > 200_000 and get.result_length == len(doc["content"])
    stored = pipeline.store.r.hget(naming.steps_key(record.query_id), "E1")
    assert len(stored) < 4096  # the step hash holds the reference, not 200 KB of text
    assert extract.value == "512.5"  # read from the end of the text the GET only names


def test_top_k_items_are_stored_as_references_and_filter_reads_their_texts(pipeline, tmp_path):
    docs = [filing(f"refs-lake-{q}", f"Lakeside Foods Q{q} 2024 Quarterly Report", f"{q}00")
            for q in (1, 2)]
    index(pipeline, tmp_path, *docs)
    record = pipeline.ask("lakeside", {"steps": [
        {"id": "E1", "operation": "GET", "source": "Lakeside Foods Quarterly Report",
         "top_k": 2, "temporal_scope": "2024", "output_var": "$D"},
        {"id": "E2", "operation": "FILTER", "source": "$D", "pattern": r"revenue of \$200 ",
         "output_var": "$F"},
        {"id": "E3", "operation": "EXTRACT", "source": "$F",
         "pattern": r"Total revenue of \$(\d+) million", "output_var": "$R"}]})
    get, kept, extract = record.steps
    assert {r.doc_id for r in get.texts} == {d["id"] for d in docs}
    assert [r.item for r in get.texts] == [0, 1]
    assert all(len(v) <= 300 for v in get.value)
    assert [r.doc_id for r in kept.texts] == ["refs-lake-2"], kept.error_message
    assert extract.value == "200"


def test_a_reindexed_document_is_a_new_version_and_the_old_run_keeps_its_passage(pipeline, tmp_path):
    old = filing("refs-birch-q2", "Birch Tools Q2 2024 Quarterly Report", "100")
    index(pipeline, tmp_path, old)
    first = pipeline.ask("birch", plan(old["title"]))
    assert first.steps[1].value == "100"
    new = {**old, "content": "Restated. " + old["content"].replace("$100 million", "$250 million")}
    index(pipeline, tmp_path, new)
    second = pipeline.ask("birch again", plan(old["title"]))
    assert second.steps[1].value == "250"  # a new query reads the new version
    assert second.steps[0].texts[0].version == version_of(new["content"])
    kept = pipeline.store.record(first.query_id).steps[0]
    assert kept.texts[0].version == version_of(old["content"])  # still what it read
    assert kept.texts[0].quote.startswith("Birch Tools Q2 2024") and kept.value == kept.texts[0].quote


def test_a_step_whose_document_version_is_gone_fails_with_document_changed(pipeline, tmp_path):
    """The GET read version 1; the document is re-indexed and the shared copy of version 1
    has expired before the EXTRACT runs: the EXTRACT refuses, never reading version 2."""
    old = filing("refs-cedar-q3", "Cedar Paper Q3 2024 Quarterly Report", "300")
    index(pipeline, tmp_path, old)
    query = Query(question="cedar", created_at=time.time())  # run here, never sent
    store, backend = pipeline.store, open_backend(pipeline.settings)
    get = GetStep(id="E1", operation="GET", source=old["title"], output_var="$D")
    extract = ExtractStep(id="E2", operation="EXTRACT", source="$D", pattern=r"Total revenue of \$(\d+) million",
                          output_var="$R")
    read = run_step(StepTask(query_id=query.id, step=get), store, backend)
    index(pipeline, tmp_path, {**old, "content": old["content"].replace("$300", "$999")})
    store.r.delete(naming.text_key(old["id"], read.texts[0].version))
    result = run_step(StepTask(query_id=query.id, step=extract, inputs={"D": "E1"}), store, backend)
    assert (result.status, result.error_code) == ("error", "DOCUMENT_CHANGED")
    assert "re-indexed" in result.error_message and "CHORDAL_TEXT_CACHE_S" in result.error_message
    backend.close()


def test_a_cached_copy_lets_a_step_finish_on_the_version_it_started_with(pipeline, tmp_path):
    old = filing("refs-dune-q4", "Dune Glass Q4 2024 Quarterly Report", "400")
    index(pipeline, tmp_path, old)
    first = pipeline.ask("dune", plan(old["title"]))
    assert first.steps[1].value == "400"  # reading version 1 left its shared copy
    ref = first.steps[0].texts[0]
    assert pipeline.store.r.ttl(naming.text_key(ref.doc_id, ref.version)) > 0
    query = Query(question="dune later", created_at=time.time())  # run here, never sent
    store, backend = pipeline.store, open_backend(pipeline.settings)
    get = GetStep(id="E1", operation="GET", source=old["title"], output_var="$D")
    run_step(StepTask(query_id=query.id, step=get), store, backend)
    index(pipeline, tmp_path, {**old, "content": old["content"].replace("$400", "$777")})
    extract = ExtractStep(id="E2", operation="EXTRACT", source="$D", pattern=r"Total revenue of \$(\d+) million",
                          output_var="$R")
    result = run_step(StepTask(query_id=query.id, step=extract, inputs={"D": "E1"}), store, backend)
    assert (result.status, result.value) == ("ok", "400")
    by_row = ExtractStep(id="E3", operation="EXTRACT", source="$D", row="Total revenue",
                         output_var="$T")
    cell = run_step(StepTask(query_id=query.id, step=by_row, inputs={"D": "E1"}), store, backend)
    assert (cell.status, cell.error_code) == ("error", "DOCUMENT_CHANGED")  # not today's tables
    assert "other tables" in cell.error_message
    backend.close()


def test_show_text_pages_through_what_a_get_read(pipeline, tmp_path):
    doc = filing("refs-elm-q1", "Elm Textiles Q1 2024 Quarterly Report", "61")
    index(pipeline, tmp_path, doc)
    record = pipeline.ask("elm", plan(doc["title"]))
    first = pipeline.cli("show", record.query_id, "--text", "E1", "--limit", "1000")
    assert first.returncode == 0, first.stderr
    assert first.stdout == doc["content"][:1000] + "\n"
    assert "next: --offset 1000" in first.stderr
    last = pipeline.cli("show", record.query_id, "--text", "E1", "--json",
                        "--offset", str(len(doc["content"]) - 40))
    page = json.loads(last.stdout)
    assert page["text"] == doc["content"][-40:] and page["next_offset"] is None
    assert (page["doc_id"], page["chars"]) == (doc["id"], len(doc["content"]))
    shown = pipeline.cli("show", record.query_id, "--json")
    assert len(shown.stdout) < 64 * 1024 and "refs-elm-q1" in shown.stdout
    none = pipeline.cli("show", record.query_id, "--text", "E2")  # an EXTRACT holds no text
    assert none.returncode == 1 and "no text 0" in none.stderr


def test_the_api_serves_a_step_text_in_pages_and_a_record_without_it(pipeline, tmp_path):
    doc = filing("refs-fir-q2", "Fir Analytics Q2 2024 Quarterly Report", "72")
    index(pipeline, tmp_path, doc)
    record = pipeline.ask("fir", plan(doc["title"]))
    token = "t" * 40
    app = create_app(pipeline.settings.model_copy(update={"api_token": SecretStr(token)}), sweep_s=None)
    with TestClient(app, base_url="http://127.0.0.1") as c:
        auth = {"Authorization": f"Bearer {token}"}
        whole = c.get(f"/queries/{record.query_id}", headers=auth)
        assert whole.status_code == 200 and len(whole.content) < 16 * 1024
        assert whole.json()["steps"][0]["texts"][0]["doc_id"] == doc["id"]
        page = c.get(f"/queries/{record.query_id}/steps/E1/text?offset=5&limit=50",
                     headers=auth).json()
        assert page["text"] == doc["content"][5:55] and page["next_offset"] == 55
        assert c.get(f"/queries/{record.query_id}/steps/E9/text", headers=auth).status_code == 404
        shown = c.get(f"/ui/queries/{record.query_id}/live", headers=auth).text
        assert f'href="/queries/{record.query_id}/steps/E1/text">full text</a>' in shown
        assert "Fir Analytics Q2 2024" in shown  # the passage the text starts with
        assert c.get(f"/queries/{record.query_id}/steps/E1/text?limit=0",
                     headers=auth).status_code == 422


def test_a_reference_to_a_paged_document_counts_its_pages_instead_of_listing_them(pipeline, tmp_path):
    pages = [f"Page {n} of the Gale Marine 2024 annual report." for n in range(1, 300)]
    pages.append("Net income was $42.5 million for the year.")
    doc = {"id": "refs-gale-2024", "title": "Gale Marine 2024 Annual Report",
           "date": "2025-03-01", "content": "\f".join(pages)}
    index(pipeline, tmp_path, doc)
    record = pipeline.ask("gale", {"steps": [
        {"id": "E1", "operation": "GET", "source": doc["title"], "output_var": "$D"},
        {"id": "E2", "operation": "EXTRACT", "source": "$D",
         "pattern": r"Net income was \$(\d+\.\d) million", "output_var": "$P"}]})
    (ref,) = record.steps[0].texts
    assert ref.pages == 300 and record.steps[1].value == "42.5"  # read on the last page
    assert len(pipeline.store.r.hget(naming.steps_key(record.query_id), "E1")) < 2048


def test_debug_searches_the_whole_text_a_get_read_not_its_quote(pipeline, tmp_path):
    doc = filing("refs-hazel-q3", "Hazel Farms Q3 2024 Quarterly Report", "83")
    index(pipeline, tmp_path, doc)
    record = pipeline.ask("hazel", {"steps": [
        {"id": "E1", "operation": "GET", "source": doc["title"], "output_var": "$D"},
        {"id": "E2", "operation": "EXTRACT", "source": "$D",
         "pattern": r"Total revenue was \$(\d+) million", "output_var": "$R"}]})
    assert record.steps[1].error_code is not None, record.steps[1]
    shown = pipeline.cli("debug", record.query_id)
    assert "Total revenue of $83 million" in shown.stdout, shown.stdout + shown.stderr


def test_an_answer_template_sees_the_text_a_get_read_and_a_long_answer_is_cut(pipeline, tmp_path):
    doc = filing("refs-fern-q2", "Fern Looms Q2 2024 Quarterly Report", "81")
    index(pipeline, tmp_path, doc)
    counted = pipeline.ask("fern", {"steps": [{"id": "E1", "operation": "GET", "output_var": "$D",
                                               "source": doc["title"]}],
                                    "answer": "Read {{ D | length }} characters."})
    assert counted.status == "done", counted.error
    assert counted.answer.text == f"Read {len(doc['content'])} characters."  # not the quote's
    printed = pipeline.ask("fern whole", {"steps": [{"id": "E1", "operation": "GET",
                                                     "output_var": "$D", "source": doc["title"]}],
                                          "answer": "{{ D }}"})
    assert printed.status == "done", printed.error
    assert printed.answer.text.startswith("Fern Looms Q2 2024")
    assert "answer cut at 65,536 bytes (CHORDAL_MAX_STEP_BYTES)" in printed.answer.text
    assert len(printed.answer.text.encode()) < 66_000


def test_a_process_sends_a_documents_cached_copy_once_not_once_per_step(pipeline, tmp_path):
    doc = filing("refs-gale-q2", "Gale Ropes Q2 2024 Quarterly Report", "64")
    index(pipeline, tmp_path, doc)
    backend = open_backend(pipeline.settings)
    ref = document_text(backend.documents([doc["id"]])[doc["id"]]).ref
    r = SetsCounted(connection_pool=pipeline.store.r.connection_pool)  # the stack's Redis
    reader = TextReader(backend, r, 3600)
    for _ in range(5):
        assert reader.text(ref) == doc["content"]
    assert r.sets == 1
    assert r.ttl(naming.text_key(ref.doc_id, ref.version)) > 3000
    backend.close()


class SetsCounted(redis.Redis):
    """A client of the real Redis that counts its SET commands."""

    sets = 0

    def set(self, *args, **kwargs):
        self.sets += 1
        return super().set(*args, **kwargs)
