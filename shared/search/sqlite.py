"""The embedded search backend: SQLite FTS5 with BM25 ranking, in one file.

Consumes Documents (`add`) and search text, produces Documents and Hits. The file and
its parent directories are created on first use. WAL mode lets many readers (threads
or processes) search while one writer indexes; each thread gets its own connection.
"""

from __future__ import annotations

import socket
import sqlite3
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator

from shared.errors import StoreError

from .backend import TITLE_MATCH, URL_MATCH, DateRange, Hit, pick_best
from .document import FIELDS, Document
from .terms import fts_query

TITLE_WEIGHT = 10.0
"""BM25 weight of a word in the title relative to one in the content."""
CANDIDATES = 50
"""How many ranked documents `best` considers."""

_SCHEMA = """
BEGIN IMMEDIATE;
CREATE TABLE IF NOT EXISTS documents (
    pk INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, title TEXT NOT NULL,
    content TEXT NOT NULL, date TEXT, url TEXT, source_type TEXT);
CREATE INDEX IF NOT EXISTS documents_title ON documents(title COLLATE NOCASE);
CREATE INDEX IF NOT EXISTS documents_url ON documents(url);
CREATE INDEX IF NOT EXISTS documents_date ON documents(date);
CREATE VIRTUAL TABLE IF NOT EXISTS documents_fts USING fts5(
    title, content, content='documents', content_rowid='pk', tokenize='porter unicode61');
CREATE TRIGGER IF NOT EXISTS documents_ai AFTER INSERT ON documents BEGIN
    INSERT INTO documents_fts(rowid, title, content) VALUES (new.pk, new.title, new.content);
END;
CREATE TRIGGER IF NOT EXISTS documents_ad AFTER DELETE ON documents BEGIN
    INSERT INTO documents_fts(documents_fts, rowid, title, content)
    VALUES ('delete', old.pk, old.title, old.content);
END;
CREATE TRIGGER IF NOT EXISTS documents_au AFTER UPDATE ON documents BEGIN
    INSERT INTO documents_fts(documents_fts, rowid, title, content)
    VALUES ('delete', old.pk, old.title, old.content);
    INSERT INTO documents_fts(rowid, title, content) VALUES (new.pk, new.title, new.content);
END;
COMMIT;
"""
_HAS_SCHEMA = "SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND name = 'documents_au'"
_COLUMNS = ", ".join(f"d.{f}" for f in FIELDS)
_UPSERT = (
    f"INSERT INTO documents ({', '.join(FIELDS)}) VALUES ({', '.join('?' * len(FIELDS))}) "
    "ON CONFLICT(id) DO UPDATE SET "
    + ", ".join(f"{f} = excluded.{f}" for f in FIELDS[1:])
)


class SqliteSearch:
    """A `SearchBackend` on one SQLite file; safe to share between threads."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        """The SQLite database file."""
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
            # only a new store takes the write lock: readers must not wait for an indexer
            if conn.execute(_HAS_SCHEMA).fetchone() is None:
                conn.executescript(_SCHEMA)
            self._connections.append(conn)
        self._local.conn = conn
        return conn

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
                    conn.execute(_UPSERT, tuple(getattr(doc, f) for f in FIELDS))
                    n += 1
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            return n

    def count(self) -> int:
        with self._db("counting documents") as conn:
            return conn.execute("SELECT count(*) FROM documents").fetchone()[0]

    def search(self, query: str, limit: int = 5, date_range: DateRange | None = None) -> list[Hit]:
        match = fts_query(query)
        if match is None or limit < 1:
            return []
        sql = (
            f"SELECT {_COLUMNS}, bm25(documents_fts, {TITLE_WEIGHT}, 1.0) AS rank, "
            "snippet(documents_fts, 1, '**', '**', '…', 16) "
            "FROM documents_fts JOIN documents d ON d.pk = documents_fts.rowid "
            "WHERE documents_fts MATCH ?"
        )
        params: list = [match]
        if date_range is not None:
            sql += " AND d.date BETWEEN ? AND ?"
            params += [date_range[0].isoformat(), date_range[1].isoformat()]
        sql += " ORDER BY rank, d.id LIMIT ?"
        with self._db("searching") as conn:
            rows = conn.execute(sql, [*params, limit]).fetchall()
        return [Hit(_document(row), -row[-2], row[-1]) for row in rows]

    def best(self, source: str, date_range: DateRange | None = None) -> tuple[Document, str] | None:
        exact = self._exact(source, date_range)
        if exact is not None:
            return exact
        ranked = self.search(source, CANDIDATES, date_range)
        return pick_best(source, (hit.document for hit in ranked))

    def _exact(self, source: str, date_range: DateRange | None) -> tuple[Document, str] | None:
        """The document whose title (or URL) is exactly `source`, latest first."""
        text = source.strip()
        for column, label in (("title", TITLE_MATCH), ("url", URL_MATCH)):
            sql = f"SELECT {_COLUMNS} FROM documents d WHERE d.{column} = ?"
            sql += " COLLATE NOCASE" if column == "title" else ""
            params = [text]
            if date_range is not None:
                sql += " AND d.date BETWEEN ? AND ?"
                params += [date_range[0].isoformat(), date_range[1].isoformat()]
            sql += " ORDER BY d.date IS NULL, d.date DESC, d.id LIMIT 1"
            with self._db("looking up a title") as conn:
                row = conn.execute(sql, params).fetchone()
            if row is not None:
                return _document(row), label
        return None

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
