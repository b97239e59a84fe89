"""Opening a search backend: consumes the settings (and a backend's name, from
`chordal index --backend`), produces the `SearchBackend`: embedded SQLite FTS5 by
default, Elasticsearch when CHORDAL_ES_URL is set (its client loads only then).
"""

from __future__ import annotations

from shared.config import Settings
from shared.errors import ConfigError

from .backend import SearchBackend
from .sqlite import SqliteSearch

BACKENDS = ("sqlite", "elasticsearch")
"""The names `open_backend` (and `chordal index --backend`) accept."""


def default_backend(settings: Settings) -> str:
    """`elasticsearch` when CHORDAL_ES_URL is set, else `sqlite`."""
    return "elasticsearch" if settings.es_url else "sqlite"


def open_backend(settings: Settings, kind: str | None = None) -> SearchBackend:
    """The search backend `kind` (default: `default_backend(settings)`): Elasticsearch at
    `settings.es_url`, index `settings.es_index`, or SQLite FTS5 at `settings.search_path`."""
    kind = kind or default_backend(settings)
    if kind == "elasticsearch":
        if not settings.es_url:
            raise ConfigError("the Elasticsearch backend needs CHORDAL_ES_URL "
                              "(e.g. http://127.0.0.1:9200); set it or use the sqlite backend")
        from .elastic import ElasticSearch  # the client loads only when it is used

        return ElasticSearch(settings.es_url, settings.es_index, settings.es_timeout_s,
                             lag_days=settings.publication_lag_days)
    if kind != "sqlite":
        raise ConfigError(f"unknown search backend {kind!r}; use one of {', '.join(BACKENDS)}")
    return SqliteSearch(settings.search_path, lag_days=settings.publication_lag_days)
