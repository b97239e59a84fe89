import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from datetime import date
from pathlib import Path

import pytest

import shared
from shared.config import Settings
from shared.errors import StoreError
from shared.search import FULL_TEXT, TITLE_MATCH, Document, SqliteSearch, load_jsonl, open_backend

BUNDLED = Path(shared.__file__).parent / "data" / "corpus.jsonl"
Q3 = (date(2023, 7, 1), date(2023, 9, 30))


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
    hit = corpus.search("battery yield rate", date_range=Q3)[0]
    assert "**yield**" in hit.snippet


def test_best_finds_the_exact_title_with_title_match(corpus):
    found, label = corpus.best("Tesla Q3 2023 Financial Report", Q3)
    assert (found.title, label) == ("Tesla Q3 2023 Financial Report", TITLE_MATCH)


def test_best_with_all_source_words_in_a_title_says_title_match(corpus):
    found, label = corpus.best("Kestrel datasheet")
    assert (found.title, label) == ("Kestrel KX-900 Microcontroller Datasheet", TITLE_MATCH)


def test_best_on_words_only_in_the_text_says_full_text(corpus):
    found, label = corpus.best("solid-state pilot line Dresden investment")
    assert found.title == "Voltara Energy opens solid-state pilot line in Dresden"
    assert label == FULL_TEXT


def test_best_does_not_settle_for_a_document_sharing_one_common_word(corpus):
    assert corpus.best("Zephyr Airlines cabin crew 2023") is None


def test_date_filter_skips_documents_outside_the_range_and_undated_ones(store):
    store.add([
        doc("Battery report", date="2023-06-30"),
        doc("Battery report", date="2023-09-30"),
        doc("Battery report"),
    ])
    assert [h.document.date for h in store.search("battery report", 10, Q3)] == ["2023-09-30"]
    assert store.best("Battery report", Q3)[0].date == "2023-09-30"
    assert store.best("Battery report", (date(2021, 1, 1), date(2021, 12, 31))) is None


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
    assert corpus.best(query) is None


def test_concurrent_reads_from_threads_all_get_the_same_answer(corpus):
    def lookup(i):
        return corpus.best("Tesla Q3 2023 Financial Report", Q3)[0].id, corpus.count()

    with ThreadPoolExecutor(max_workers=16) as pool:
        results = set(pool.map(lookup, range(200)))
    assert len(results) == 1


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
