"""How Elasticsearch failures reach a GET: the client's own exception classes mapped to
Chordal errors, and real sockets (a closed port, a server that never answers) driven
through the real client."""

from __future__ import annotations

import http.server
import socket
import threading
import time

import pytest
from elastic_transport import ApiResponseMeta, HttpHeaders, NodeConfig
from elasticsearch import (ApiError, AuthenticationException, BadRequestError,
                           ConnectionError, ConnectionTimeout, NotFoundError, SSLError)

from shared.config import Settings
from shared.errors import ConfigError, SearchUnavailable, StoreError, ToolError, TransientToolError
from shared.models import GetStep, SearchStep
from shared.search import open_backend
from shared.search.elastic import MAX_RETRIES, ElasticSearch
from shared.search.elastic_errors import store_error
from shared.tools.get import run_get
from shared.tools.search import run_search

from ...conftest import free_port

URL = "https://reader:s3cret@es.example:9200"


def api_error(cls, status: int, error_type: str, reason: str) -> ApiError:
    meta = ApiResponseMeta(status=status, http_version="1.1", headers=HttpHeaders(),
                           duration=0.01, node=NodeConfig("https", "es.example", 9200))
    body = {"error": {"type": error_type, "reason": reason,
                      "root_cause": [{"type": error_type, "reason": reason}]}, "status": status}
    return cls(message=error_type, meta=meta, body=body)


def mapped(exc: Exception) -> StoreError:
    return store_error(exc, "searching", URL, "docs")


@pytest.mark.parametrize("exc", [
    ConnectionError("Connection refused"),
    ConnectionTimeout("Read timed out"),
    api_error(ApiError, 429, "es_rejected_execution_exception", "queue full"),
    api_error(ApiError, 503, "cluster_block_exception", "no master"),
], ids=["refused", "timeout", "429", "503"])
def test_outages_and_overload_are_transient_so_the_executor_retries_them(exc):
    error = mapped(exc)
    assert isinstance(error, SearchUnavailable)
    assert "index 'docs': searching failed" in str(error)


@pytest.mark.parametrize("exc, words", [
    (api_error(BadRequestError, 400, "parsing_exception", "unknown query [match_phrse]"),
     "unknown query [match_phrse]"),
    (api_error(AuthenticationException, 401, "security_exception", "unable to authenticate"),
     "credentials refused"),
    (api_error(NotFoundError, 404, "index_not_found_exception", "no such index [docs]"),
     "chordal index"),
    (api_error(BadRequestError, 400, "media_type_header_exception", "Accept version must be 8"),
     "major version"),
    (SSLError("certificate verify failed"), "TLS handshake failed"),
], ids=["bad-request", "auth", "no-index", "version-mismatch", "tls"])
def test_permanent_failures_say_what_to_fix_and_are_not_retried(exc, words):
    error = mapped(exc)
    assert type(error) is StoreError
    assert words in str(error)


def test_no_error_message_shows_the_password_in_the_url():
    message = str(mapped(ConnectionError("refused")))
    assert "s3cret" not in message and "https://reader:***@es.example:9200" in message
    assert "s3cret" not in ElasticSearch(URL, "docs").identity


def test_a_get_against_an_elasticsearch_that_is_down_is_a_transient_search_unavailable():
    backend = ElasticSearch(f"http://127.0.0.1:{free_port()}", "docs", timeout_s=1)
    with pytest.raises(TransientToolError) as caught:
        run_get(GetStep(id="E1", operation="GET", source="Tesla Q3 2023 Financial Report"), backend)
    assert caught.value.code == "SEARCH_UNAVAILABLE"
    assert "cannot connect" in caught.value.message and "step E1" in caught.value.message
    with pytest.raises(TransientToolError):
        run_search(SearchStep(id="S1", operation="SEARCH", query="battery yield"), {}, backend)


def test_a_server_that_never_answers_times_out_after_the_configured_seconds_and_one_retry():
    with socket.socket() as silent:  # accepts connections, never replies
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        backend = ElasticSearch(f"http://127.0.0.1:{silent.getsockname()[1]}", "docs",
                                timeout_s=0.3)
        started = time.monotonic()
        with pytest.raises(SearchUnavailable, match="no answer in time.*CHORDAL_ES_TIMEOUT_S"):
            backend.count()
        assert time.monotonic() - started >= 0.3 * (MAX_RETRIES + 1)


def test_a_url_that_names_another_http_service_fails_the_get_as_search_failed():
    class NotElasticsearch(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self._reply()

        def do_HEAD(self):
            self._reply()

        def _reply(self):
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(b'{"hello": "I am some other web service"}')

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), NotElasticsearch)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        backend = ElasticSearch(f"http://127.0.0.1:{server.server_address[1]}", "docs")
        with pytest.raises(ToolError) as caught:
            run_get(GetStep(id="E1", operation="GET", source="x"), backend)
    finally:
        server.shutdown()
        server.server_close()
    assert caught.value.code == "SEARCH_FAILED" and not isinstance(caught.value, TransientToolError)
    assert "server is not Elasticsearch" in caught.value.message
    assert "check that CHORDAL_ES_URL names an Elasticsearch server" in caught.value.message


def test_open_backend_picks_elasticsearch_when_its_url_is_set():
    backend = open_backend(Settings(es_url=URL, es_index="docs", es_timeout_s=3))
    assert isinstance(backend, ElasticSearch)
    assert (backend.index, backend.timeout_s) == ("docs", 3)


def test_asking_for_elasticsearch_without_a_url_names_the_variable_to_set():
    with pytest.raises(ConfigError, match="CHORDAL_ES_URL"):
        open_backend(Settings(es_url=None), "elasticsearch")


def test_a_url_without_a_port_is_refused_with_an_example():
    with pytest.raises(ConfigError, match="http://HOST:9200"):
        ElasticSearch("localhost", "docs")
