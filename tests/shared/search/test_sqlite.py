import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from datetime import date
from pathlib import Path

import pytest

import shared
from shared.config import Settings
from shared.errors import StoreError
from shared.ingest import load_jsonl
from shared.search import Document, SqliteSearch, open_backend
from shared.search.fit import Window
from shared.search.sqlite import SCHEMA_VERSION

BUNDLED = Path(shared.__file__).parent / "data" / "corpus.jsonl"
Q3 = Window(date(2023, 7, 1), date(2023, 9, 30), lag_days=60)


@pytest.fixture
def store(tmp_path):
    backend = SqliteSearch(tmp_path / "search.db")
    yield backend
    backend.close()


@pytest.fixture
def corpus(store):
    store.add(load_jsonl(BUNDLED))
    return store


def doc(title, content="Quarterly text.", date=None, **extra):
    return Document(title=title, content=content, date=date, **extra)


def test_the_store_file_and_its_parent_directories_are_created_on_first_use(tmp_path):
    path = tmp_path / "deep" / "er" / "search.db"
    with SqliteSearch(path) as backend:
        assert backend.count() == 0
    assert path.exists()


def test_reindexing_the_same_file_does_not_duplicate_documents(corpus):
    before = corpus.count()
    assert corpus.add(load_jsonl(BUNDLED)) == before
    assert corpus.count() == before


def test_re_adding_a_document_with_a_known_id_replaces_its_text(store):
    store.add([doc("Notice", "Old wording about ferries.", id="n1")])
    store.add([doc("Notice", "New wording about trains.", id="n1")])
    assert store.count() == 1
    assert store.search("trains")[0].document.content == "New wording about trains."
    assert store.search("ferries") == []


def test_add_is_all_or_nothing_when_a_document_fails_midway(store):
    def documents():
        yield doc("First")
        raise RuntimeError("the loader broke")

    with pytest.raises(RuntimeError):
        store.add(documents())
    assert store.count() == 0


def test_bm25_ranks_a_title_match_above_a_content_mention(store):
    store.add([
        doc("Market overview", "Analysts compared Voltara with its rivals over the whole year."),
        doc("Voltara annual summary", "Revenue grew and margins held."),
    ])
    hits = store.search("Voltara")
    assert [h.document.title for h in hits] == ["Voltara annual summary", "Market overview"]
    assert hits[0].score > hits[1].score


def test_search_returns_a_snippet_around_the_matched_word(corpus):
    hit = corpus.search("battery yield rate", window=Q3)[0]
    assert "**yield**" in hit.snippet


def test_best_does_not_settle_for_a_document_sharing_one_common_word(corpus):
    assert corpus.best("Zephyr Airlines cabin crew 2023").found == []


def test_a_window_keeps_periods_that_overlap_it_and_undated_periods_published_in_the_lag(store):
    store.add([
        doc("Battery report Q2 2023", id="q2", date="2023-07-20"),
        doc("Battery report Q3 2023", id="q3", date="2023-10-25"),
        doc("Battery notes", id="sept", date="2023-09-12"),
        doc("Battery notes", id="late", date="2024-01-15"),
        doc("Battery notes", id="none"),
    ])
    assert {h.document.id for h in store.search("battery", 10, Q3)} == {"q3", "sept"}
    assert store.best("Battery report", (date(2023, 7, 1), date(2023, 9, 30))).found[0].document.id == "q3"
    assert store.best("Battery report", (date(2021, 1, 1), date(2021, 12, 31))).found == []


@pytest.mark.parametrize("query, word", [
    ('"Tesla" AND (yield* OR NEAR(', "tesla"),
    ("title: ^Kestrel -- '", "kestrel"),
    ("measles)", "measles"),
])
def test_fts_syntax_in_user_text_is_searched_as_plain_words(corpus, query, word):
    top = corpus.search(query)[0].document
    assert word in (top.title + top.content).lower()


@pytest.mark.parametrize("query", ["", "the of and", "?!*()"])
def test_a_query_with_no_searchable_words_finds_nothing(corpus, query):
    assert corpus.search(query) == []
    assert corpus.best(query).found == []


def test_concurrent_reads_from_threads_all_get_the_same_answer(corpus):
    def lookup(i):
        return corpus.best("Tesla Q3 2023 Financial Report").found[0].document.id, corpus.count()

    with ThreadPoolExecutor(max_workers=16) as pool:
        results = set(pool.map(lookup, range(200)))
    assert len(results) == 1


@pytest.mark.integration  # starts a process
def test_readers_see_the_previous_documents_while_a_writer_is_indexing(tmp_path):
    path = tmp_path / "search.db"
    writer, reader = SqliteSearch(path), SqliteSearch(path)
    writer.add([doc("Existing")])
    seen = []

    def documents():
        yield doc("New one")
        seen.append(reader.count())  # another connection, mid-transaction
        seen.append(subprocess.run(
            [sys.executable, "-c",
             f"from shared.search import SqliteSearch; print(SqliteSearch({str(path)!r}).count())"],
            capture_output=True, text=True, check=True, timeout=60,
        ).stdout.strip())
        yield doc("Another")

    writer.add(documents())
    assert seen == [1, "1"]
    assert reader.count() == 3
    writer.close(), reader.close()


def test_a_closed_backend_refuses_use_with_a_clear_error(store):
    store.count()
    store.close()
    with pytest.raises(StoreError, match="is closed"):
        store.count()


def test_a_file_that_is_not_a_search_store_gives_a_store_error_naming_it(tmp_path):
    path = tmp_path / "notes.db"
    path.write_text("this is not a database " * 100)
    with pytest.raises(StoreError, match="notes.db"):
        SqliteSearch(path).count()


def test_open_backend_uses_the_search_path_from_settings(tmp_path):
    backend = open_backend(Settings(home=tmp_path / "home"))
    try:
        backend.add([doc("Anything")])
        assert backend.count() == 1
        assert (tmp_path / "home" / "search.db").exists()
    finally:
        backend.close()


V1_SCHEMA = """
CREATE TABLE documents (
    pk INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, title TEXT NOT NULL,
    content TEXT NOT NULL, date TEXT, url TEXT, source_type TEXT);
CREATE VIRTUAL TABLE documents_fts USING fts5(
    title, content, content='documents', content_rowid='pk', tokenize='porter unicode61');
CREATE TRIGGER documents_ai AFTER INSERT ON documents BEGIN
    INSERT INTO documents_fts(rowid, title, content) VALUES (new.pk, new.title, new.content);
END;
CREATE TRIGGER documents_ad AFTER DELETE ON documents BEGIN
    INSERT INTO documents_fts(documents_fts, rowid, title, content)
    VALUES ('delete', old.pk, old.title, old.content);
END;
CREATE TRIGGER documents_au AFTER UPDATE ON documents BEGIN
    INSERT INTO documents_fts(documents_fts, rowid, title, content)
    VALUES ('delete', old.pk, old.title, old.content);
    INSERT INTO documents_fts(rowid, title, content) VALUES (new.pk, new.title, new.content);
END;
INSERT INTO documents (id, title, content, date) VALUES
    ('q3', 'Acme Q3 2024 Production Report', 'Acme built 44,900 units.', '2024-10-16'),
    ('cn', '华川电子2024年第三季度报告', '毛利率为23.1%。', '2024-10-25');
"""
"""A store as Chordal wrote it before documents had periods (schema version 1)."""


def test_a_store_made_before_periods_is_upgraded_in_place_with_periods_read_from_titles(tmp_path):
    import sqlite3

    path = tmp_path / "old.db"
    with sqlite3.connect(path) as conn:
        conn.executescript(V1_SCHEMA)
    with SqliteSearch(path) as store:
        (found,) = store.best("Acme Q3 2024 Production Report").found
        assert (found.document.id, found.document.period, found.document.period_origin) == (
            "q3", "2024-Q3", "inferred")
        assert store.search("毛利率")[0].document.id == "cn"  # the index was rebuilt
        store.add([doc("Acme Q4 2024 Production Report", id="q4", date="2025-01-20")])
        assert store.count() == 3
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_a_store_made_by_a_newer_chordal_is_refused_with_what_to_do(tmp_path):
    import sqlite3

    path = tmp_path / "new.db"
    with sqlite3.connect(path) as conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(StoreError, match="newer Chordal.*CHORDAL_SEARCH_DB"):
        SqliteSearch(path).count()


SCHEMA_2 = Path(__file__).parent / "fixtures" / "schema2.db"
"""A store Chordal wrote with schema version 2 (whole documents indexed): the first 8
pages of Patriot Transportation's 10-Q for the quarter ended December 31, 2014, and two
short documents (fixtures/README.md)."""


def test_a_store_of_schema_2_is_upgraded_in_place_and_its_searches_name_pages(tmp_path):
    import shutil
    import sqlite3

    path = tmp_path / "v2.db"
    shutil.copy(SCHEMA_2, path)
    with SqliteSearch(path) as store:
        hit = store.search("revolving credit uncollateralized", 1)[0]
        assert (hit.document.id, hit.page) == ("pati-10q-2014-12", 8)
        assert "**Revolving** **credit** (**uncollateralized**)" in hit.snippet
        title = "Patriot Transportation Holding Form 10-Q for the quarter ended December 31, 2014"
        (found,) = store.best(title).found
        assert (found.document.period, found.document.content.count("\f")) == ("2014-Q4", 7)
        assert store.search("毛利率")[0].document.id == "huachuan-q3"
        assert store.tables("pati-10q-2014-12") == []
        store.add([doc("Acme Q4 2024 Production Report", id="q4", date="2025-01-20")])
        assert store.count() == 4
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 3
        columns = {row[1] for row in conn.execute("PRAGMA table_info(documents)")}
        assert "content_terms" not in columns  # the pages hold the text now


def test_an_upgrade_that_fails_midway_leaves_the_schema_2_store_as_it_was(tmp_path):
    import shutil
    import sqlite3

    path = tmp_path / "v2.db"
    shutil.copy(SCHEMA_2, path)
    with sqlite3.connect(path) as conn:  # a row no Document accepts: the upgrade stops on it
        conn.execute("UPDATE documents SET date = 'not a date' WHERE id = 'acme-q3'")
    with pytest.raises(StoreError, match="stopped at document .acme-q3.*not an ISO date.*left as it was"):
        SqliteSearch(path).count()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 2
        assert conn.execute("SELECT count(*) FROM documents_fts").fetchone()[0] == 3
