"""Search: documents, the backend protocol (backend.py) and its implementations (SQLite
FTS5 here, Elasticsearch in `shared.search.elastic`, loaded only when used), opened by
open.py, the matching rules
every GET follows (`shared.search.matching`), the shared GET cache
(`shared.search.cache`), periods and date scopes, and corpus loading."""

from .backend import PARTIAL_TITLE, TITLE_MATCH, URL_MATCH, Hit, Match, SearchBackend, Window
from .dates import ACCEPTED_FORMS, format_scope, parse_scope
from .periods import year_in
from .document import Document, document_id
from .open import BACKENDS, default_backend, open_backend
from .sqlite import SqliteSearch

__all__ = [
    "ACCEPTED_FORMS", "BACKENDS", "Document", "Hit", "Match", "PARTIAL_TITLE",
    "SearchBackend", "SqliteSearch", "TITLE_MATCH", "URL_MATCH", "Window",
    "default_backend", "document_id", "format_scope", "open_backend",
    "parse_scope", "year_in",
]
