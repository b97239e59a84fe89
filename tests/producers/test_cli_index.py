"""`chordal index FILE [--backend sqlite|elasticsearch]` as a user runs it: a real
subprocess, a real SQLite store, and a real Redis holding the shared GET cache."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis

from shared.search import SqliteSearch
from shared.search.cache import CachedSearch
from shared.stack.redis_server import EmbeddedRedis

from ..conftest import free_port, processes_using

pytestmark = pytest.mark.integration  # each test runs the CLI or a Redis of its own

ROOT = Path(__file__).resolve().parents[2]
DOCS = [{"id": "tsla-q3", "title": "Tesla Q3 2023 Financial Report", "date": "2023-09-30",
         "content": "Battery yield rate of 91.7%."},
        {"title": "Weekly Bulletin", "content": "Trains replace the night ferries."}]


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory):
    with EmbeddedRedis(tmp_path_factory.mktemp("index-redis"), free_port()) as server:
        yield server


@pytest.fixture
def corpus(tmp_path) -> Path:
    path = tmp_path / "docs.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    return path


def chordal(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("CHORDAL_")}
    clean.update(PYTHONPATH=str(ROOT), CHORDAL_HOME=str(tmp_path / "home"), **env)
    return subprocess.run([sys.executable, "-m", "producers", *args], cwd=tmp_path, env=clean,
                          capture_output=True, text=True, timeout=60)


def test_without_an_elasticsearch_url_documents_go_to_the_sqlite_store(tmp_path, corpus,
                                                                       redis_server):
    result = chordal(tmp_path, "index", str(corpus), CHORDAL_REDIS_URL=redis_server.url)
    assert result.returncode == 0, result.stderr
    assert "indexed 2 documents" in result.stdout and "into sqlite (2 in the store)" in result.stdout
    assert ("periods: 0 given, 1 read from titles, 1 none (these count by publication date); "
            "1 with neither period nor date (e.g. 'Weekly Bulletin')") in result.stdout
    with SqliteSearch(tmp_path / "home" / "search.db") as store:
        assert store.best("Weekly Bulletin").found


def test_indexing_clears_the_shared_get_cache_so_workers_see_the_new_documents(
        tmp_path, corpus, redis_server):
    r = redis.Redis.from_url(redis_server.url)
    with SqliteSearch(tmp_path / "home" / "search.db") as store:
        worker_view = CachedSearch(store, r, 1800)
        assert worker_view.best("Tesla Q3 2023 Financial Report").found == []  # cached
        result = chordal(tmp_path, "index", str(corpus), "--backend", "sqlite",
                         CHORDAL_REDIS_URL=redis_server.url)
        assert result.returncode == 0, result.stderr
        assert worker_view.best("Tesla Q3 2023 Financial Report").found[0].document.id == "tsla-q3"
    r.close()


def test_the_elasticsearch_backend_without_a_url_is_refused_naming_the_variable(tmp_path, corpus):
    result = chordal(tmp_path, "index", str(corpus), "--backend", "elasticsearch")
    assert result.returncode == 2
    assert "CHORDAL_ES_URL" in result.stderr
    assert not (tmp_path / "home" / "search.db").exists()


def test_an_unknown_backend_is_refused_listing_the_ones_there_are(tmp_path, corpus):
    result = chordal(tmp_path, "index", str(corpus), "--backend", "solr")
    assert result.returncode == 2
    assert "sqlite, elasticsearch" in result.stderr


def test_an_elasticsearch_that_is_down_fails_the_command_saying_it_cannot_connect(tmp_path, corpus):
    result = chordal(tmp_path, "index", str(corpus),
                     CHORDAL_ES_URL=f"http://127.0.0.1:{free_port()}", CHORDAL_GET_CACHE_S="0")
    assert result.returncode == 1
    assert "cannot connect" in result.stderr and "CHORDAL_ES_URL" in result.stderr


@pytest.mark.parametrize("line, says", [
    ('{"title": ' + "[" * 100_000 + "]" * 100_000 + ', "content": "c"}',
     "docs.jsonl line 1: nested too deeply"),
    (json.dumps({"title": "Report \ud800", "content": "c"}),
     "docs.jsonl line 1: field 'title': holds a lone surrogate"),
], ids=["100k-deep", "surrogate"])
def test_a_line_python_reads_but_no_store_can_keep_exits_2_naming_it(tmp_path, line, says):
    path = tmp_path / "docs.jsonl"
    path.write_text(line + "\n")
    result = chordal(tmp_path, "index", str(path))
    assert result.returncode == 2, result.stderr
    assert says in result.stderr and "Traceback" not in result.stderr
    assert "'record'" not in result.stderr


def test_an_empty_file_indexes_nothing_and_exits_2_as_enqueue_does(tmp_path):
    path = tmp_path / "docs.jsonl"
    path.write_text("\n  \n")
    result = chordal(tmp_path, "index", str(path))
    assert result.returncode == 2, result.stdout
    assert "no documents in the file" in result.stderr
    assert not (tmp_path / "home" / "search.db").exists()


DOCUMENTS = ROOT / "tests" / "fixtures" / "documents"
FILING = DOCUMENTS / "pati-20141231-10q.pdf"
PAGE = DOCUMENTS / "aapl-20250329-10q-excerpt.htm"
TITLE = "Patriot Transportation Holding Form 10-Q for the quarter ended December 31, 2014"


def test_a_pdf_filing_is_indexed_with_its_title_pages_and_tables(tmp_path, redis_server):
    result = chordal(tmp_path, "index", str(FILING), "--title", TITLE, "--date", "2015-02-11",
                     "--period", "2014-10-01..2014-12-31", "--source-type", "filing",
                     CHORDAL_REDIS_URL=redis_server.url)
    assert result.returncode == 0, result.stderr
    assert f"indexed 1 documents from {FILING} into sqlite (1 in the store)" in result.stdout
    assert f"{FILING}: '{TITLE}', 30 pages, " in result.stderr  # progress, on stderr
    with SqliteSearch(tmp_path / "home" / "search.db") as store:
        (found,) = store.best(TITLE).found
        assert (found.document.period, found.document.source_type) == ("2014-Q4", "filing")
        assert found.document.content.count("\f") == 29
        assert any("CASH FLOWS" in (t.title or "") and t.page == 6
                   for t in store.tables(found.document.id))
        assert store.search("revolving credit uncollateralized", 1)[0].page == 8


def test_a_directory_indexes_each_file_with_the_metadata_of_its_sidecar(tmp_path, corpus):
    folder = tmp_path / "filings"
    folder.mkdir()
    for source, meta in [(FILING, {"title": TITLE, "date": "2015-02-11"}),
                         (PAGE, {"title": "Apple Q2 FY2025 Form 10-Q", "date": "2025-05-02"})]:
        (folder / source.name).write_bytes(source.read_bytes())
        (folder / f"{source.name}.json").write_text(json.dumps(meta))
    result = chordal(tmp_path, "index", str(folder), str(corpus), CHORDAL_GET_CACHE_S="0")
    assert result.returncode == 0, result.stderr
    assert "indexed 4 documents from 3 files into sqlite (4 in the store)" in result.stdout
    assert "[1/3]" in result.stderr and "'Apple Q2 FY2025 Form 10-Q', 2 pages" in result.stderr
    with SqliteSearch(tmp_path / "home" / "search.db") as store:
        assert store.best("Apple Q2 FY2025 Form 10-Q").found[0].document.date == "2025-05-02"


def test_a_file_without_a_title_fails_the_run_naming_it_and_nothing_is_written(tmp_path, corpus):
    result = chordal(tmp_path, "index", str(corpus), str(FILING), CHORDAL_GET_CACHE_S="0")
    assert result.returncode == 2, result.stdout
    assert "nothing indexed: 1 of 2 files cannot be indexed" in result.stderr
    assert f"{FILING}: no title for this document; give one with --title" in result.stderr
    assert "pati-20141231-10q.pdf.json next to it" in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""
    with SqliteSearch(tmp_path / "home" / "search.db") as store:
        assert store.count() == 0  # the good file's documents were rolled back with the run


def test_a_file_without_a_title_is_named_before_any_file_is_read(tmp_path):
    # a folder of filings, one without its sidecar: said at once, where the run had read
    # every other file's pages first (Tesla's 449-page 10-K: minutes) to refuse them all
    folder = tmp_path / "filings"
    folder.mkdir()
    (folder / "a.pdf").symlink_to(ROOT / "bench" / "data" / "filings" / "tsla-20201231-10k.pdf")
    (folder / "a.pdf.json").write_text(json.dumps({"title": "Tesla 10-K 2020"}))
    (folder / "b.pdf").symlink_to(FILING)
    (folder / "c.pdf").symlink_to(FILING)
    (folder / "c.pdf.json").write_text(json.dumps({"title": "Patriot 10-Q", "date": "soon"}))
    result = chordal(tmp_path, "index", str(folder), CHORDAL_GET_CACHE_S="0")
    assert result.returncode == 2, result.stderr
    assert "nothing indexed: 2 of 3 files cannot be indexed" in result.stderr
    assert f"{folder / 'b.pdf'}: no title for this document" in result.stderr
    assert f"{folder / 'c.pdf'}: field 'date'" in result.stderr
    assert "'Tesla 10-K 2020'," not in result.stderr  # the summary of a file read


def test_options_for_one_document_are_refused_with_several_files(tmp_path, corpus):
    result = chordal(tmp_path, "index", str(FILING), str(PAGE), "--title", TITLE)
    assert result.returncode == 2
    assert "--title describes one document, and 2 files were given" in result.stderr
    assert "pati-20141231-10q.pdf.json for pati-20141231-10q.pdf" in result.stderr


def test_two_files_that_name_one_document_are_refused_before_one_replaces_the_other(tmp_path):
    folder = tmp_path / "twice"
    folder.mkdir()
    for name in ("a.htm", "b.htm"):
        (folder / name).write_bytes(PAGE.read_bytes())  # both titled by <title>
    result = chordal(tmp_path, "index", str(folder), CHORDAL_GET_CACHE_S="0")
    assert result.returncode == 2
    assert "b.htm: its document 'aapl-20250329' has the id of one in" in result.stderr
    with SqliteSearch(tmp_path / "home" / "search.db") as store:
        assert store.count() == 0


def test_a_killed_index_command_leaves_no_process_reading_pages(tmp_path):
    # a 449-page 10-K, whose pages' words worker processes find: the command killed (the
    # OOM killer, `kill -9`) mid-file takes them with it, where they would read on alone
    tesla = ROOT / "bench" / "data" / "filings" / "tsla-20201231-10k.pdf"
    home = tmp_path / "home"
    clean = {k: v for k, v in os.environ.items() if not k.startswith("CHORDAL_")}
    command = subprocess.Popen(
        [sys.executable, "-m", "producers", "index", str(tesla), "--title", "Tesla 10-K 2020",
         "--processes", "2"], cwd=tmp_path, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**clean, "PYTHONPATH": str(ROOT), "CHORDAL_HOME": str(home)})
    try:
        deadline = time.monotonic() + 60
        while (len(workers := [p for p in processes_using(home) if p != command.pid]) < 3
               and time.monotonic() < deadline):
            time.sleep(0.2)  # two workers and multiprocessing's resource tracker
        assert len(workers) >= 3, "the command started no worker processes"
        time.sleep(2)  # reading pages
    finally:
        command.send_signal(signal.SIGKILL)
        command.wait(30)
    deadline = time.monotonic() + 30
    while (alive := [p for p in workers if running(p)]) and time.monotonic() < deadline:
        time.sleep(0.2)
    for pid in alive:  # this test's own, by PID: stopped before it fails
        os.kill(pid, signal.SIGKILL)
    assert not alive, f"processes {alive} outlived the killed command"


def running(pid: int) -> bool:
    """Whether `pid` is a process that has not ended (a zombie has)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"
