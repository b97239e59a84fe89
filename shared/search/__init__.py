"""Search: documents, the backend protocol and its SQLite FTS5 implementation, date
scopes, and corpus loading."""

from .backend import FULL_TEXT, TITLE_MATCH, URL_MATCH, Hit, SearchBackend, open_backend
from .corpus import load_jsonl
from .dates import ACCEPTED_FORMS, format_scope, parse_scope, year_in
from .document import Document, document_id
from .sqlite import SqliteSearch

__all__ = [
    "ACCEPTED_FORMS", "Document", "FULL_TEXT", "Hit", "SearchBackend", "SqliteSearch",
    "TITLE_MATCH", "URL_MATCH", "document_id", "format_scope", "load_jsonl",
    "open_backend", "parse_scope", "year_in",
]
