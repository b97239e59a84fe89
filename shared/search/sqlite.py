"""The embedded search backend: SQLite FTS5 with BM25 ranking, in one file.

Consumes Documents (`add`) and search text, produces candidate Documents and Hits
filtered on a period `Window` in SQL; `best` applies `shared.search.matching`. FTS5 ranks
the hits (BM25); each hit's snippet is cut by snippet.py, whose cost does not grow with
how often a document holds the searched words (FTS5's snippet() weighs every match). The file
and its parent directories are created on first use. WAL mode lets many readers
(threads or processes) search while one writer indexes; each thread gets its own
connection.

Schema version 2 (`PRAGMA user_version`) stores each document's period (given or read
from its title) as `period_start`/`period_end`, and indexes `index_text` of title and
content (ideographs spaced out, so Chinese titles are searchable word by word). A
version-1 store (before periods) is upgraded in place the first time it is opened: the
periods are read from the stored titles and the full-text index is rebuilt. A store of
a newer version is refused.
"""

from __future__ import annotations

import socket
import sqlite3
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator

from shared.errors import StoreError

from .backend import Hit
from .dates import DateRange
from .document import FIELDS, Document
from .fit import PUBLICATION_LAG_DAYS, Window
from .matching import Match, find
from .snippet import snippet
from .terms import fts_query, index_text

TITLE_WEIGHT = 10.0
"""BM25 weight of a word in the title relative to one in the content."""
SCHEMA_VERSION = 2
"""`PRAGMA user_version` of a store this code writes."""

_TABLE = """CREATE TABLE IF NOT EXISTS documents (
    pk INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, title TEXT NOT NULL,
    content TEXT NOT NULL, date TEXT, url TEXT, source_type TEXT)"""
_COLUMNS_V2 = ("period TEXT", "period_origin TEXT", "period_start TEXT", "period_end TEXT",
               "title_terms TEXT NOT NULL DEFAULT ''", "content_terms TEXT NOT NULL DEFAULT ''")
_INDEXES = [
    "CREATE INDEX IF NOT EXISTS documents_title ON documents(title COLLATE NOCASE)",
    "CREATE INDEX IF NOT EXISTS documents_url ON documents(url)",
    "CREATE INDEX IF NOT EXISTS documents_date ON documents(date)",
    "CREATE INDEX IF NOT EXISTS documents_period ON documents(period_start, period_end)",
]
_FTS = [
    """CREATE VIRTUAL TABLE documents_fts USING fts5(title_terms, content_terms,
        content='documents', content_rowid='pk', tokenize='porter unicode61')""",
    """CREATE TRIGGER documents_ai AFTER INSERT ON documents BEGIN
        INSERT INTO documents_fts(rowid, title_terms, content_terms)
        VALUES (new.pk, new.title_terms, new.content_terms); END""",
    """CREATE TRIGGER documents_ad AFTER DELETE ON documents BEGIN
        INSERT INTO documents_fts(documents_fts, rowid, title_terms, content_terms)
        VALUES ('delete', old.pk, old.title_terms, old.content_terms); END""",
    """CREATE TRIGGER documents_au AFTER UPDATE ON documents BEGIN
        INSERT INTO documents_fts(documents_fts, rowid, title_terms, content_terms)
        VALUES ('delete', old.pk, old.title_terms, old.content_terms);
        INSERT INTO documents_fts(rowid, title_terms, content_terms)
        VALUES (new.pk, new.title_terms, new.content_terms); END""",
]
_V1_OBJECTS = ["DROP TRIGGER IF EXISTS documents_ai", "DROP TRIGGER IF EXISTS documents_ad",
               "DROP TRIGGER IF EXISTS documents_au", "DROP TABLE IF EXISTS documents_fts"]
_STORED = (*FIELDS, "period_start", "period_end", "title_terms", "content_terms")
_COLUMNS = ", ".join(f"d.{f}" for f in FIELDS)
_UPSERT = (
    f"INSERT INTO documents ({', '.join(_STORED)}) VALUES ({', '.join('?' * len(_STORED))}) "
    "ON CONFLICT(id) DO UPDATE SET "
    + ", ".join(f"{f} = excluded.{f}" for f in _STORED[1:])
)
_WINDOW = ("((d.period_start IS NOT NULL AND d.period_start <= ? AND d.period_end >= ?) OR "
           "(d.period_start IS NULL AND d.date BETWEEN ? AND ?))")


def _window(window: Window | None) -> tuple[str, list[str]]:
    """The SQL condition (with its parameters) `Window.fits` stands for."""
    if window is None:
        return "1", []
    return _WINDOW, [window.last.isoformat(), window.first.isoformat(),
                     window.first.isoformat(), window.published_until.isoformat()]


def _row(doc: Document) -> tuple:
    period = doc.period_range()
    return (*(getattr(doc, f) for f in FIELDS),
            period[0].isoformat() if period else None, period[1].isoformat() if period else None,
            index_text(doc.title), index_text(doc.content))


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
        """Create the schema, or upgrade a version-1 store to it, in one transaction."""
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
                have = {row[1] for row in conn.execute("PRAGMA table_info(documents)")}
                for column in _COLUMNS_V2:
                    if column.split()[0] not in have:
                        conn.execute(f"ALTER TABLE documents ADD COLUMN {column}")
                for statement in [*_INDEXES, *_V1_OBJECTS]:
                    conn.execute(statement)
                rows = conn.execute(f"SELECT {', '.join(FIELDS)} FROM documents").fetchall()
                for row in rows:  # read each period from its title, as `add` does
                    doc = Document.model_validate(
                        {k: v for k, v in zip(FIELDS, row) if v is not None})
                    conn.execute(_UPSERT, _row(doc))
                for statement in _FTS:
                    conn.execute(statement)
                conn.execute("INSERT INTO documents_fts(documents_fts) VALUES ('rebuild')")
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

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
                    conn.execute(_UPSERT, _row(doc))
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
        sql = (
            f"SELECT {_COLUMNS}, bm25(documents_fts, {TITLE_WEIGHT}, 1.0) AS rank "
            "FROM documents_fts JOIN documents d ON d.pk = documents_fts.rowid "
            f"WHERE documents_fts MATCH ? AND {where} ORDER BY rank, d.id LIMIT ?"
        )
        with self._db("searching") as conn:
            rows = conn.execute(sql, [match, *params, limit]).fetchall()
        return [Hit(doc, -row[-1], snippet(doc.content, query))
                for doc, row in ((_document(row), row) for row in rows)]

    def candidates(self, text: str, window: Window | None, limit: int) -> list[Document]:
        found = {d.id: d for d in self._exact(text, window, limit)}
        for hit in self.search(text, limit, window):
            found.setdefault(hit.document.id, hit.document)
        return list(found.values())[:limit]

    def best(self, source: str, scope: DateRange | None = None) -> Match:
        return find(self.candidates, source, scope, self.lag_days, exact=self._exact)

    def _exact(self, source: str, window: Window | None, limit: int) -> list[Document]:
        """Documents whose title (any case) or URL is exactly `source`, latest first."""
        text = source.strip()
        where, params = _window(window)
        sql = (f"SELECT {_COLUMNS} FROM documents d WHERE (d.title = ? COLLATE NOCASE OR "
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
