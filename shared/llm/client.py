"""The LLM client: chat messages in, an `LLMReply` (the text and its `LLMCall` audit
record) out, over any OpenAI-compatible endpoint through the official `openai` package.

- JSON output: with `json_schema`, the request asks for `response_format` type
  `json_schema`; a server that rejects that (HTTP 400/422) is asked again with
  `json_object`, and one that rejects that too without `response_format` (the prompt
  still asks for JSON). The first format that works is remembered for the client's life.
- Retries are openai-python's own (`max_retries=settings.llm_max_retries`): on timeouts,
  connection errors, 408, 409, 429 and 5xx, with exponential backoff (0.5 s doubling to
  8 s, minus up to 25 % jitter), honouring `Retry-After`/`retry-after-ms` up to 120 s and
  `x-should-retry`. An httpx request hook counts the HTTP attempts, so `LLMCall.retries`
  is the number of extra attempts those retries made.
- Concurrency: with a Redis client, each call holds a slot of the cluster-wide
  `ConcurrencyLimit` (limit.py) for its whole duration, retries included.
- Failure after the retries raises `LLMError` whose `call` is the `LLMCall` (status
  `error`), so callers can record it.
"""

from __future__ import annotations

import contextlib
import logging
import re
import threading
import time
from dataclasses import dataclass

import openai
import redis

from shared.config import Settings
from shared.errors import ConfigError, LLMError
from shared.llm.limit import ConcurrencyLimit
from shared.models import LLMCall
from shared.urls import mask_url

log = logging.getLogger("chordal.llm")
FORMATS = ("json_schema", "json_object", "none")
"""`response_format` types tried in order when a JSON schema is given."""


@dataclass(frozen=True)
class LLMReply:
    content: str
    """The assistant message's text ("" when the model sent none)."""
    call: LLMCall


class LLMClient:
    """One endpoint and model; thread-safe; build once per process and reuse."""

    def __init__(self, settings: Settings, redis_client: redis.Redis | None = None, *,
                 slot_timeout_s: float | None = None):
        if not settings.llm_enabled:
            raise ConfigError("LLM client needs CHORDAL_LLM_BASE_URL (e.g. "
                              "http://127.0.0.1:8765/v1) and CHORDAL_LLM_MODEL; set both")
        self.base_url = settings.llm_base_url
        self.endpoint = mask_url(self.base_url)
        """`base_url` as messages and logs name it (a password in it masked)."""
        self.model = settings.llm_model
        self.temperature = settings.llm_temperature
        self.timeout_s = settings.llm_timeout_s
        key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else ""
        self._attempts = threading.local()
        http = openai.DefaultHttpxClient(event_hooks={"request": [self._count_attempt]})
        self._openai = openai.OpenAI(base_url=self.base_url, api_key=key or "not-needed",
                                     timeout=settings.llm_timeout_s,
                                     max_retries=settings.llm_max_retries, http_client=http)
        self._format = 0  # index into FORMATS; only ever moves forward
        self._format_confirmed = False
        self.limit = (ConcurrencyLimit(redis_client, settings.llm_max_concurrency)
                      if redis_client is not None else None)
        self.slot_timeout_s = slot_timeout_s or settings.llm_timeout_s * (settings.llm_max_retries + 1)

    @property
    def json_format(self) -> str:
        """The `response_format` type used for JSON replies (`json_schema` until refused)."""
        return FORMATS[self._format]

    def chat(self, messages: list[dict], *, purpose: str,
             json_schema: dict | None = None) -> LLMReply:
        """The model's reply to `messages`; LLMError (with `.call`) once retries run out."""
        started = time.time()
        slot = self.limit.slot(self.slot_timeout_s) if self.limit else contextlib.nullcontext()
        self._attempts.extra = 0
        try:
            with slot:
                t0 = time.perf_counter()
                try:
                    completion = self._complete(messages, json_schema)
                except openai.OpenAIError as exc:
                    raise self._error(purpose, exc, started, t0) from None
        except LLMError as exc:
            if exc.call is None:  # no slot came free: nothing was sent
                exc.call = self._call(purpose, started, 0.0, status="error", error=exc.message)
            raise
        usage = completion.usage
        call = self._call(purpose, started, t0,
                          prompt_tokens=usage.prompt_tokens if usage else 0,
                          completion_tokens=usage.completion_tokens if usage else 0)
        if not completion.choices:
            raise LLMError(f"LLM call ({purpose}) got a reply with no choices from "
                           f"{self.endpoint}", call.model_copy(update={
                               "status": "error", "error": "reply has no choices"}))
        return LLMReply(content=completion.choices[0].message.content or "", call=call)

    def _complete(self, messages: list[dict], json_schema: dict | None):
        if json_schema is None:
            return self._create(messages, None)
        while True:
            fmt = self._format
            try:
                completion = self._create(messages, _response_format(FORMATS[fmt], json_schema))
            except (openai.BadRequestError, openai.UnprocessableEntityError) as exc:
                if self._format_confirmed or fmt == len(FORMATS) - 1:
                    raise
                log.info("%s refused response_format %s (%s); trying %s", self.endpoint,
                         FORMATS[fmt], exc.status_code, FORMATS[fmt + 1])
                self._format = max(self._format, fmt + 1)
                continue
            self._format_confirmed = True
            return completion

    def _create(self, messages: list[dict], response_format: dict | None):
        self._attempts.n = 0
        kwargs = {"response_format": response_format} if response_format else {}
        try:
            return self._openai.chat.completions.create(
                model=self.model, messages=messages, temperature=self.temperature, **kwargs)
        finally:
            self._attempts.extra += max(0, self._attempts.n - 1)

    def _count_attempt(self, request) -> None:
        self._attempts.n = getattr(self._attempts, "n", 0) + 1

    def _call(self, purpose: str, started: float, t0: float, **fields) -> LLMCall:
        latency = (time.perf_counter() - t0) * 1000 if t0 else 0.0
        return LLMCall(purpose=purpose, model=self.model, latency_ms=round(latency, 1),
                       retries=getattr(self._attempts, "extra", 0), started_at=started,
                       **fields)

    def _error(self, purpose: str, exc: openai.OpenAIError, started: float,
               t0: float) -> LLMError:
        what = describe(exc, self.endpoint, self.timeout_s)
        call = self._call(purpose, started, t0, status="error", error=what)
        tries = call.retries + 1
        return LLMError(f"LLM call ({purpose}) failed after {tries} HTTP attempt"
                        f"{'s' if tries > 1 else ''}: {what}", call)


def _response_format(kind: str, schema: dict) -> dict | None:
    if kind == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": "reply", "schema": schema}}
    return {"type": "json_object"} if kind == "json_object" else None


def describe(exc: openai.OpenAIError, base_url: str, timeout_s: float) -> str:
    """What went wrong with a request, and the setting that likely fixes it."""
    if isinstance(exc, openai.APITimeoutError):
        return (f"no reply from {base_url} within {timeout_s:g}s (CHORDAL_LLM_TIMEOUT_S); "
                "raise it or check the server's load")
    if isinstance(exc, openai.APIConnectionError):
        return f"cannot connect to {base_url}; is the server running (CHORDAL_LLM_BASE_URL)?"
    if isinstance(exc, openai.APIStatusError):
        message = _server_message(exc)
        hint = {401: "check OPENAI_API_KEY", 403: "check OPENAI_API_KEY",
                404: "check CHORDAL_LLM_MODEL and that CHORDAL_LLM_BASE_URL ends in /v1"}
        fix = f"; {hint[exc.status_code]}" if exc.status_code in hint else ""
        return f"HTTP {exc.status_code} from {base_url}: {message}{fix}"
    return f"{type(exc).__name__}: {exc}"


def _server_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
    return re.sub(r"\s+", " ", exc.message or "")[:300]
