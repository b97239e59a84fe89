"""The embedded search backend: SQLite FTS5 with BM25 ranking, in one file.

Consumes Documents (`add`) and search text, produces candidate Documents and Hits
filtered on a period `Window` in SQL, and a document's tables; `best` applies
`shared.search.matching`. The file and its parent directories are created on first use.
WAL mode lets many readers (threads or processes) search while one writer indexes; each
thread gets its own connection.

Schema version 3 (`PRAGMA user_version`):
- `documents`: the fields of each Document but its content, its period (given or read
  from its title) as `period_start`/`period_end`, and the `index_text` of its title
  (ideographs spaced out, so Chinese is searchable word by word), which `titles_fts`
  indexes; `document_texts`: the contents, apart.
- `pages`: one row per page of a document's content (the whole content for a document
  without pages), its span in the content and the `index_text` of title and page text;
  `pages_fts` indexes them. SEARCH ranks pages (BM25, title words weighing
  `TITLE_WEIGHT`), so a hit names the page it is on and its snippet is cut from that
  page by snippet.py (whose cost does not grow with how often a document holds the
  searched words); `candidates` ranks documents by their best page.
- `document_tables`: each document's tables (JSON of `Table`), read by `tables(doc_id)`.
- `document_words`: each document's distinct words (lower-cased, as written).

A GET (`best`) costs the same whatever the length of the documents: its candidates are
ranked by title (a document fits a source only by its title or URL) and come without
their contents, the partial-title rule asks `document_words` whether a text holds a
word, and only the documents found are read whole.

A store of version 1 (before periods) or 2 (whole documents indexed) is upgraded in place
the first time it is opened, in one transaction: periods read from the stored titles,
pages, words and indexes built from the stored contents (tables are read when a file is
indexed again). A store of a newer version is refused.
"""

from __future__ import annotations

import socket
import sqlite3
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator

from pydantic import ValidationError

from shared.config import PUBLICATION_LAG_DAYS
from shared.errors import StoreError
from shared.models.table import Table

from .backend import Hit
from .dates import DateRange
from .document import FIELDS, Document, describe, page_spans
from .fit import Window
from .matching import Match, find, with_documents
from .snippet import snippet
from .terms import fts_query, index_text, stem, word_starts, words

TITLE_WEIGHT = 10.0
"""BM25 weight of a word in the title relative to one in the page's text."""
SCHEMA_VERSION = 3
"""`PRAGMA user_version` of a store this code writes."""
UPGRADE_BATCH = 100
"""Documents read at a time while an older store is upgraded."""

_TABLE = """CREATE TABLE IF NOT EXISTS documents (
    pk INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, title TEXT NOT NULL,
    date TEXT, url TEXT, source_type TEXT)"""
_TEXTS = """CREATE TABLE document_texts (doc_pk INTEGER PRIMARY KEY, content TEXT NOT NULL)"""
"""Contents apart from the other fields: reading a document's title or date never walks
the pages of its text (a row's later columns sit after its earlier ones on disk)."""
_COLUMNS_ADDED = ("period TEXT", "period_origin TEXT", "period_start TEXT", "period_end TEXT",
                  "title_terms TEXT NOT NULL DEFAULT ''")
_V2_CONTENT = "content_terms"
"""The column of version 2 whose text the pages hold now."""
_SCHEMA = [
    "CREATE INDEX IF NOT EXISTS documents_title ON documents(title COLLATE NOCASE)",
    "CREATE INDEX IF NOT EXISTS documents_url ON documents(url)",
    "CREATE INDEX IF NOT EXISTS documents_date ON documents(date)",
    "CREATE INDEX IF NOT EXISTS documents_period ON documents(period_start, period_end)",
    """CREATE TABLE pages (pk INTEGER PRIMARY KEY, doc_pk INTEGER NOT NULL, page INTEGER,
        start INTEGER NOT NULL, stop INTEGER NOT NULL, title_terms TEXT NOT NULL,
        text_terms TEXT NOT NULL)""",
    "CREATE INDEX pages_doc ON pages(doc_pk)",
    """CREATE VIRTUAL TABLE pages_fts USING fts5(title_terms, text_terms,
        content='pages', content_rowid='pk', tokenize='porter unicode61')""",
    """CREATE TRIGGER pages_ai AFTER INSERT ON pages BEGIN
        INSERT INTO pages_fts(rowid, title_terms, text_terms)
        VALUES (new.pk, new.title_terms, new.text_terms); END""",
    """CREATE TRIGGER pages_ad AFTER DELETE ON pages BEGIN
        INSERT INTO pages_fts(pages_fts, rowid, title_terms, text_terms)
        VALUES ('delete', old.pk, old.title_terms, old.text_terms); END""",
    """CREATE TABLE document_tables (doc_pk INTEGER NOT NULL, n INTEGER NOT NULL,
        page INTEGER, body TEXT NOT NULL, PRIMARY KEY (doc_pk, n))""",
    """CREATE TABLE document_words (doc_pk INTEGER NOT NULL, word TEXT NOT NULL,
        PRIMARY KEY (doc_pk, word)) WITHOUT ROWID""",
]
_TITLES = [
    """CREATE VIRTUAL TABLE titles_fts USING fts5(title_terms, content='documents',
        content_rowid='pk', tokenize='porter unicode61')""",
    """CREATE TRIGGER titles_ai AFTER INSERT ON documents BEGIN
        INSERT INTO titles_fts(rowid, title_terms) VALUES (new.pk, new.title_terms); END""",
    """CREATE TRIGGER titles_ad AFTER DELETE ON documents BEGIN
        INSERT INTO titles_fts(titles_fts, rowid, title_terms)
        VALUES ('delete', old.pk, old.title_terms); END""",
    """CREATE TRIGGER titles_au AFTER UPDATE ON documents BEGIN
        INSERT INTO titles_fts(titles_fts, rowid, title_terms)
        VALUES ('delete', old.pk, old.title_terms);
        INSERT INTO titles_fts(rowid, title_terms) VALUES (new.pk, new.title_terms); END""",
    "INSERT INTO titles_fts(titles_fts) VALUES ('rebuild')",
]
"""The index of titles GET ranks candidates by, made after the documents are written."""
_OLD_OBJECTS = ["DROP TRIGGER IF EXISTS documents_ai", "DROP TRIGGER IF EXISTS documents_ad",
                "DROP TRIGGER IF EXISTS documents_au", "DROP TABLE IF EXISTS documents_fts"]
_STORED = (*(f for f in FIELDS if f != "content"), "period_start", "period_end", "title_terms")
_COLUMNS = ", ".join("t.content" if f == "content" else f"d.{f}" for f in FIELDS)
_WITH_TEXT = "documents d JOIN document_texts t ON t.doc_pk = d.pk"
_OUTLINE = ", ".join("'' AS content" if f == "content" else f"d.{f}" for f in FIELDS)
"""The columns of a document without its content (from `documents d` alone), for ranking
GET candidates."""
_UPSERT = (
    f"INSERT INTO documents ({', '.join(_STORED)}) VALUES ({', '.join('?' * len(_STORED))}) "
    "ON CONFLICT(id) DO UPDATE SET "
    + ", ".join(f"{f} = excluded.{f}" for f in _STORED[1:]) + " RETURNING pk"
)
_PAGE = ("INSERT INTO pages (doc_pk, page, start, stop, title_terms, text_terms) "
         "VALUES (?, ?, ?, ?, ?, ?)")
_WINDOW = ("((d.period_start IS NOT NULL AND d.period_start <= ? AND d.period_end >= ?) OR "
           "(d.period_start IS NULL AND d.date BETWEEN ? AND ?))")
_PAGE_RANK = f"bm25(pages_fts, {TITLE_WEIGHT}, 1.0)"


def _window(window: Window | None) -> tuple[str, list[str]]:
    """The SQL condition (with its parameters) `Window.fits` stands for."""
    if window is None:
        return "1", []
    return _WINDOW, [window.last.isoformat(), window.first.isoformat(),
                     window.first.isoformat(), window.published_until.isoformat()]


def _row(doc: Document) -> tuple:
    period = doc.period_range()
    return (*(getattr(doc, f) for f in FIELDS if f != "content"),
            period[0].isoformat() if period else None, period[1].isoformat() if period else None,
            index_text(doc.title))


def _write(conn: sqlite3.Connection, doc: Document) -> None:
    """Insert or replace `doc` with its pages and tables."""
    pk = conn.execute(_UPSERT, _row(doc)).fetchone()[0]
    conn.execute("INSERT INTO document_texts (doc_pk, content) VALUES (?, ?) ON CONFLICT(doc_pk) "
                 "DO UPDATE SET content = excluded.content", (pk, doc.content))
    conn.execute("DELETE FROM pages WHERE doc_pk = ?", (pk,))
    conn.execute("DELETE FROM document_tables WHERE doc_pk = ?", (pk,))
    conn.execute("DELETE FROM document_words WHERE doc_pk = ?", (pk,))
    conn.executemany("INSERT INTO document_words (doc_pk, word) VALUES (?, ?)",
                     [(pk, w) for w in set(words(doc.content))])
    title = index_text(doc.title)
    conn.executemany(_PAGE, [(pk, page, start, stop, title, index_text(doc.content[start:stop]))
                             for page, start, stop in page_spans(doc.content)
                             if page is None or doc.content[start:stop].strip()])
    conn.executemany("INSERT INTO document_tables (doc_pk, n, page, body) VALUES (?, ?, ?, ?)",
                     [(pk, n, t.page, t.model_dump_json()) for n, t in enumerate(doc.tables)])


class SqliteSearch:
    """A `SearchBackend` on one SQLite file; safe to share between threads."""

    def __init__(self, path: str | Path, lag_days: int = PUBLICATION_LAG_DAYS):
        self.path = Path(path)
        """The SQLite database file."""
        self.lag_days = lag_days
        self._local = threading.local()
        self._lock = threading.Lock()
        self._connections: list[sqlite3.Connection] = []
        self._closed = False

    @contextmanager
    def _db(self, action: str) -> Iterator[sqlite3.Connection]:
        """This thread's connection; SQLite errors become StoreError naming the file."""
        try:
            yield self._connection()
        except sqlite3.Error as e:
            raise StoreError(
                f"search store {self.path}: {action} failed ({e}); check that the file is a "
                "Chordal search store and is writable, or delete it and re-run `chordal index`"
            ) from e

    def _connection(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            return conn
        with self._lock:
            if self._closed:
                raise StoreError(f"search store {self.path} is closed; open a new backend")
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            # only a new or old store takes the write lock: readers must not wait for an indexer
            if conn.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
                self._migrate(conn)
            self._connections.append(conn)
        self._local.conn = conn
        return conn

    def _migrate(self, conn: sqlite3.Connection) -> None:
        """Create the schema, or upgrade a version-1 or -2 store to it, in one transaction."""
        conn.execute("BEGIN IMMEDIATE")
        try:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise StoreError(
                    f"search store {self.path} has schema version {version}, made by a newer "
                    f"Chordal (this one reads version {SCHEMA_VERSION}); upgrade Chordal, or "
                    "index the corpus into a new file (CHORDAL_SEARCH_DB)")
            if version < SCHEMA_VERSION:
                conn.execute(_TABLE)
                for statement in _OLD_OBJECTS:
                    conn.execute(statement)
                have = {row[1] for row in conn.execute("PRAGMA table_info(documents)")}
                for column in _COLUMNS_ADDED:
                    if column.split()[0] not in have:
                        conn.execute(f"ALTER TABLE documents ADD COLUMN {column}")
                if _V2_CONTENT in have:
                    conn.execute(f"ALTER TABLE documents DROP COLUMN {_V2_CONTENT}")
                conn.execute(_TEXTS)
                if "content" in have:
                    conn.execute("INSERT INTO document_texts SELECT pk, content FROM documents")
                    conn.execute("ALTER TABLE documents DROP COLUMN content")
                for statement in _SCHEMA:
                    conn.execute(statement)
                self._reindex(conn, version)
                for statement in _TITLES:
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def _reindex(self, conn: sqlite3.Connection, version: int) -> None:
        """Every stored document written again as `add` writes it: its period read from
        its title when it has none, its pages indexed."""
        last = -1
        while rows := conn.execute(f"SELECT d.pk, {_COLUMNS} FROM {_WITH_TEXT} WHERE d.pk > ? "
                                   "ORDER BY d.pk LIMIT ?", (last, UPGRADE_BATCH)).fetchall():
            for row in rows:
                record = {k: v for k, v in zip(FIELDS, row[1:]) if v is not None}
                try:
                    _write(conn, Document.model_validate(record))
                except ValidationError as e:
                    raise StoreError(
                        f"search store {self.path}: upgrading it from schema version {version} "
                        f"stopped at document {record.get('id')!r} ({'; '.join(describe(e))}); "
                        "the store is left as it was: index the corpus into a new file "
                        "(CHORDAL_SEARCH_DB) with this Chordal") from None
            last = rows[-1][0]

    @property
    def identity(self) -> str:
        """Names this store for the GET cache: this file on this host (another machine's
        file of the same path is another store)."""
        return f"sqlite:{socket.gethostname()}:{self.path.resolve()}"

    def add(self, docs: Iterable[Document]) -> int:
        with self._db("indexing") as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                n = 0
                for doc in docs:
                    _write(conn, doc)
                    n += 1
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            return n

    def count(self) -> int:
        with self._db("counting documents") as conn:
            return conn.execute("SELECT count(*) FROM documents").fetchone()[0]

    def search(self, query: str, limit: int = 5, window: Window | None = None) -> list[Hit]:
        match = fts_query(query)
        if match is None or limit < 1:
            return []
        where, params = _window(window)
        sql = (f"SELECT p.doc_pk, p.page, p.start, p.stop, {_PAGE_RANK} AS rank "
               "FROM pages_fts JOIN pages p ON p.pk = pages_fts.rowid "
               "JOIN documents d ON d.pk = p.doc_pk "
               f"WHERE pages_fts MATCH ? AND {where} ORDER BY rank, d.id, p.page LIMIT ?")
        with self._db("searching") as conn:
            pages = conn.execute(sql, [match, *params, limit]).fetchall()
            docs = self._documents(conn, {row[0] for row in pages})
        return [Hit(docs[pk], -rank, snippet(docs[pk].content[start:stop], query), page)
                for pk, page, start, stop, rank in pages]

    @staticmethod
    def _documents(conn: sqlite3.Connection, pks: set[int]) -> dict[int, Document]:
        if not pks:
            return {}
        rows = conn.execute(f"SELECT d.pk, {_COLUMNS} FROM {_WITH_TEXT} WHERE d.pk IN "
                            f"({', '.join('?' * len(pks))})", list(pks)).fetchall()
        return {row[0]: _document(row[1:]) for row in rows}

    def candidates(self, text: str, window: Window | None, limit: int) -> list[Document]:
        found = {d.id: d for d in self._exact(text, window, limit)}
        for doc in self._ranked(text, window, limit):
            found.setdefault(doc.id, doc)
        return list(found.values())[:limit]

    def _ranked(self, text: str, window: Window | None, limit: int) -> list[Document]:
        """Documents with `text`'s words, ranked by their best page, best first."""
        match = fts_query(text)
        if match is None or limit < 1:
            return []
        where, params = _window(window)
        sql = ("WITH ranked AS MATERIALIZED (SELECT rowid AS pk, "
               f"{_PAGE_RANK} AS rank FROM pages_fts WHERE pages_fts MATCH ?), "
               "best AS (SELECT p.doc_pk, min(r.rank) AS rank FROM ranked r "
               "JOIN pages p ON p.pk = r.pk GROUP BY p.doc_pk) "
               f"SELECT {_COLUMNS} FROM best b JOIN documents d ON d.pk = b.doc_pk "
               f"JOIN document_texts t ON t.doc_pk = d.pk WHERE {where} ORDER BY b.rank, d.id "
               "LIMIT ?")
        with self._db("searching") as conn:
            return [_document(row) for row in conn.execute(sql, [match, *params, limit])]

    def _titled(self, text: str, window: Window | None, limit: int) -> list[Document]:
        """Documents without their contents whose titles hold `text`'s words, ranked by
        them: a document fits a GET only by its title (or URL: `_exact`), whatever its
        text holds, so ranking titles alone costs the same for any length of text."""
        match = fts_query(text)
        if match is None or limit < 1:
            return []
        where, params = _window(window)
        sql = (f"SELECT {_OUTLINE} FROM titles_fts JOIN documents d ON d.pk = titles_fts.rowid "
               f"WHERE titles_fts MATCH ? AND {where} ORDER BY bm25(titles_fts), d.id LIMIT ?")
        with self._db("searching titles") as conn:
            return [_document(row) for row in conn.execute(sql, [match, *params, limit])]

    def best(self, source: str, scope: DateRange | None = None) -> Match:
        """The rules judge candidates ranked by title, without their contents: whether a
        text holds a word is read from the document's words, and only the documents
        found are read whole."""
        def outlines(text: str, window: Window | None, limit: int) -> list[Document]:
            found = {d.id: d for d in self._exact(text, window, limit, outline=True)}
            for doc in self._titled(text, window, limit):
                found.setdefault(doc.id, doc)
            return list(found.values())[:limit]

        def exact(text: str, window: Window | None, limit: int) -> list[Document]:
            return self._exact(text, window, limit, outline=True)

        match = find(outlines, source, scope, self.lag_days, exact=exact, holds=self._holds)
        return with_documents(match, self.documents)

    def _holds(self, doc_id: str, stems: frozenset[str]) -> bool:
        """Whether the document's text has a word of each of `stems`, from its words: the
        ones that begin like a stem are read and stemmed (`holds_all` on its words)."""
        begins, whole, ideographs = word_starts(stems)
        found: set[str] = set()
        sql = ("SELECT w.word FROM document_words w JOIN documents d ON d.pk = w.doc_pk "
               "WHERE d.id = ? AND w.word >= ? AND w.word < ?")
        with self._db("reading a document's words") as conn:
            for begin in begins:
                found.update(r[0] for r in conn.execute(sql, (doc_id, begin, begin + "\U0010ffff")))
            for word in [*whole, *ideographs]:
                found.update(r[0] for r in conn.execute(sql, (doc_id, word, word + "\0")))
        return set(stems) <= {stem(w) for w in found}

    def documents(self, ids: list[str]) -> dict[str, Document]:
        if not ids:
            return {}
        with self._db("reading documents") as conn:
            rows = conn.execute(f"SELECT {_COLUMNS} FROM {_WITH_TEXT} WHERE d.id IN "
                                f"({', '.join('?' * len(ids))})", ids).fetchall()
        return {row[0]: _document(row) for row in rows}

    def tables(self, doc_id: str) -> list[Table]:
        with self._db("reading tables") as conn:
            rows = conn.execute("SELECT t.body FROM document_tables t JOIN documents d ON "
                                "d.pk = t.doc_pk WHERE d.id = ? ORDER BY t.n", (doc_id,))
            return [Table.model_validate_json(body) for (body,) in rows]

    def _exact(self, source: str, window: Window | None, limit: int,
               outline: bool = False) -> list[Document]:
        """Documents whose title (any case) or URL is exactly `source`, latest first
        (with `outline`, without their contents)."""
        text = source.strip()
        where, params = _window(window)
        found = f"{_OUTLINE} FROM documents d" if outline else f"{_COLUMNS} FROM {_WITH_TEXT}"
        sql = (f"SELECT {found} WHERE (d.title = ? COLLATE NOCASE OR "
               f"d.url = ?) AND {where} ORDER BY d.date IS NULL, d.date DESC, d.id LIMIT ?")
        with self._db("looking up a title") as conn:
            rows = conn.execute(sql, [text, text, *params, limit]).fetchall()
        return [_document(row) for row in rows]

    def close(self) -> None:
        with self._lock:
            self._closed = True
            for conn in self._connections:
                conn.close()
            self._connections.clear()
        self._local = threading.local()

    def __enter__(self) -> SqliteSearch:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _document(row: tuple) -> Document:
    return Document.model_construct(**dict(zip(FIELDS, row[: len(FIELDS)])))
