"""The LLM client: chat messages in, an `LLMReply` (the text and its `LLMCall` audit
record) out, over any OpenAI-compatible endpoint through the official `openai` package.

- JSON output: with `json_schema`, the request asks for it in a structured-output form
  (forms.py) the endpoint accepts, found by `FormChoice` (form_choice.py: once per
  endpoint and model, cached in Redis for every worker, or forced by
  CHORDAL_LLM_JSON_FORM). A refusal of a form moves on to the next one (`none` last: the
  prompt still asks for JSON); `LLMCall.json_form` records the form used.
- Retries are openai-python's own (`max_retries=settings.llm_max_retries`): on timeouts,
  connection errors, 408, 409, 429 and 5xx, with exponential backoff (0.5 s doubling to
  8 s, minus up to 25 % jitter), honouring `Retry-After`/`retry-after-ms` up to 120 s and
  `x-should-retry`. An httpx request hook counts the HTTP attempts, so `LLMCall.retries`
  is the number of extra attempts those retries made; a response hook marks a refusal
  of the form tried `x-should-retry: false`, so a server that refuses with HTTP 500
  (llama-cpp-python) is not asked the same thing again.
- Bounded replies: every request asks for at most `settings.llm_max_tokens`
  (CHORDAL_LLM_MAX_TOKENS) tokens, so a small model that rambles under a grammar stops;
  a reply cut there says so in `LLMCall.finish_reason` (`length`). `stop` sequences end
  a reply where the caller's format does (ReAct: before a model-written Observation).
  The client holds every server to that (bounds.py): a body is read to at most
  `bounds.max_body_bytes` and a stream to `max_tokens` pieces of text; a stream past
  either is cut there (`length`, and `LLMCall.cut_by_client` says why), a whole reply
  past it fails the call (its JSON cannot be read in part). A call, retries included,
  ends at the first of CHORDAL_LLM_REPLY_S after it began and the caller's `deadline`
  (a query's): past it the connection is shut and `LLMReplyStopped` says so.
- Concurrency: with a Redis client, each call holds a slot of the cluster-wide
  `ConcurrencyLimit` (limit.py) for its whole duration, retries included.
- Failure after the retries raises `LLMError` whose `call` is the `LLMCall` (status
  `error`), so callers can record it.
- Streams: `chat_stream` asks the same with `stream: true` and hands each piece of text
  to a callback as it arrives (stream_reader.py). An endpoint that refuses streams (not
  retried) or sends a whole reply gets whole-reply requests from then on (stream_choice.py,
  in Redis like the form), as every endpoint does under CHORDAL_LLM_STREAM=false. A
  stream that breaks off raises `LLMStreamBroken` with the text so far, not retried here;
  `on_text` may raise `StopReading` to end the stream (`LLMReplyStopped`, the call
  recorded with the reason).
"""

from __future__ import annotations

import contextlib
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

import httpx2
import openai
import redis

from shared.config import Settings
from shared.errors import ConfigError, LLMError, LLMReplyStopped, LLMStreamBroken
from shared.llm import bounds, stream_choice
from shared.llm.bounds import Budget, OutOfBounds
from shared.llm.form_choice import FormChoice
from shared.llm.forms import refuses, request_fields
from shared.llm.limit import ConcurrencyLimit
from shared.llm.stream_choice import Mode, StreamChoice
from shared.llm.stream_reader import BrokeOff, Stopped, Streamed, read_stream, whole_body
from shared.broker.log_lines import clip_line
from shared.models import LLMCall
from shared.access.urls import mask_url


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
        self.max_tokens = settings.llm_max_tokens
        self.reply_s = settings.llm_reply_s
        key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else ""
        self._attempts = threading.local()
        transport = bounds.BoundedTransport(
            httpx2.HTTPTransport(limits=openai.DEFAULT_CONNECTION_LIMITS), self._bounds)
        http = openai.DefaultHttpxClient(transport=transport, event_hooks={
            "request": [self._count_attempt], "response": [self._on_response]})
        self._openai = openai.OpenAI(base_url=self.base_url, api_key=key or "not-needed",
                                     timeout=settings.llm_timeout_s,
                                     max_retries=settings.llm_max_retries, http_client=http,
                                     default_headers=bounds.HEADERS)
        self.forms = FormChoice(settings, redis_client, self.endpoint)
        self.stream_choice = StreamChoice(settings, self.forms)
        self.limit = (ConcurrencyLimit(redis_client, settings.llm_max_concurrency)
                      if redis_client is not None else None)
        self.slot_timeout_s = slot_timeout_s or settings.llm_timeout_s * (settings.llm_max_retries + 1)

    @property
    def streams(self) -> bool | None:
        """Whether `chat_stream` streams: False under CHORDAL_LLM_STREAM=false or when the
        endpoint is known not to stream, True when it is known to, None until a call
        finds out."""
        if not self.stream_choice.on:
            return False
        known = self.stream_choice.known()
        return None if known is None else known != "whole"

    def chat(self, messages: list[dict], *, purpose: str, json_schema: dict | None = None,
             stop: list[str] | None = None, deadline: float | None = None) -> LLMReply:
        """The model's reply to `messages` (ending before any of the `stop` sequences);
        LLMError (with `.call`) once retries run out; LLMReplyStopped past CHORDAL_LLM_REPLY_S
        or `deadline` (a Unix time), whichever comes first."""
        return self._ask(messages, purpose, json_schema, stop, None, deadline)

    def chat_stream(self, messages: list[dict], *, purpose: str,
                    json_schema: dict | None = None, stop: list[str] | None = None,
                    on_text: Callable[[str], None], deadline: float | None = None) -> LLMReply:
        """Like `chat`, calling `on_text` with each piece of the reply's text as it arrives,
        in order (never with ""); a whole reply (an endpoint that does not stream) is not
        passed to it: `LLMReply.call.streamed` is then False and the text is only in the
        reply, so a caller checks it whole. `on_text` raising StopReading ends the stream
        with LLMReplyStopped; any other exception it raises propagates. LLMStreamBroken
        (with `.call` and `.partial`, the text so far) when the stream breaks off;
        LLMError and LLMReplyStopped as `chat`."""
        return self._ask(messages, purpose, json_schema, stop, on_text, deadline)

    def _ask(self, messages: list[dict], purpose: str, json_schema: dict | None,
             stop: list[str] | None, on_text: Callable[[str], None] | None,
             deadline: float | None) -> LLMReply:
        started = time.time()
        budget = self._attempts.budget = Budget.of(self.reply_s, deadline)
        if budget.left() <= 0:
            raise self._stopped(purpose, budget.spent().why, started, 0.0)
        slot = (self.limit.slot(min(self.slot_timeout_s, budget.left())) if self.limit
                else contextlib.nullcontext())
        self._attempts.extra = 0
        self._attempts.form = None
        self._attempts.max_tokens = self.max_tokens
        streaming = on_text is not None and self.stream_choice.on
        known = self.stream_choice.known() if streaming else None
        self._attempts.mode = (known or "usage") if streaming else "whole"
        self._attempts.stream_refusals = []
        try:
            with slot:
                t0 = time.perf_counter()
                try:
                    reply = self._complete(messages, json_schema, stop)
                except openai.OpenAIError as exc:
                    raise self._error(purpose, exc, started, t0) from None
                except OutOfBounds as exc:
                    raise self._out_of_bounds(purpose, exc, started, t0) from None
                if isinstance(reply, openai.Stream):
                    reply = self._read(reply, on_text, messages, purpose, started, t0)
                if isinstance(reply, Streamed) and reply.estimated:
                    reply = self._count_prompt(reply, messages)
        except LLMError as exc:
            if exc.call is None:  # no slot came free: nothing was sent
                exc.call = self._call(purpose, started, 0.0, status="error", error=exc.message)
            raise
        if streaming and self._attempts.mode != known:
            self.stream_choice.remember(self._attempts.mode, self._attempts.stream_refusals)
        if isinstance(reply, Streamed):
            return LLMReply(content=reply.content, call=self._call(
                purpose, started, t0, prompt_tokens=reply.prompt_tokens,
                completion_tokens=reply.completion_tokens, finish_reason=reply.finish_reason,
                streamed=True, first_token_ms=_ms(reply.first_token_at, t0),
                ended_at=reply.ended_at, tokens_estimated=reply.estimated,
                cut_by_client=reply.cut_by_client))
        usage = reply.usage
        call = self._call(purpose, started, t0, ended_at=time.time(),
                          prompt_tokens=usage.prompt_tokens if usage else 0,
                          completion_tokens=usage.completion_tokens if usage else 0,
                          finish_reason=(reply.choices[0].finish_reason
                                         if reply.choices else None))
        if not reply.choices:
            raise LLMError(f"LLM call ({purpose}) got a reply with no choices from "
                           f"{self.endpoint}", call.model_copy(update={
                               "status": "error", "error": "reply has no choices"}))
        return LLMReply(content=reply.choices[0].message.content or "", call=call)

    def _read(self, stream: openai.Stream, on_text: Callable[[str], None],
              messages: list[dict], purpose: str, started: float, t0: float):
        """The streamed reply, or the whole one a server sent instead (then remembered)."""
        try:
            whole = whole_body(stream)
            if whole is not None:
                self._attempts.stream_refusals.append(
                    f"{self._attempts.mode} answered with a whole reply")
                self._attempts.mode = "whole"
                return whole
            return read_stream(stream, on_text, messages, self.timeout_s, self.max_tokens)
        except OutOfBounds as exc:  # from the whole reply sent instead of a stream
            raise self._out_of_bounds(purpose, exc, started, t0) from None
        except Stopped as exc:
            raise self._stopped(purpose, exc.why, started, t0, exc.partial,
                                exc.first_token_at, streamed=True) from None
        except BrokeOff as exc:
            what = (f"the stream from {self.endpoint} broke off after {len(exc.partial)} "
                    f"characters: {exc.why}")
            call = self._call(purpose, started, t0, status="error", error=what, streamed=True,
                              first_token_ms=_ms(exc.first_token_at, t0))
            raise LLMStreamBroken(f"LLM call ({purpose}) failed: {what}", call,
                                  exc.partial) from None

    def _count_prompt(self, reply: Streamed, messages: list[dict]) -> Streamed:
        """`reply` with its prompt tokens counted by the server, for a stream that sent no
        usage: the usage of a one-token whole reply to the same messages (llama.cpp-based
        servers reuse the prompt they just evaluated, so it costs about one token), its
        body read to a one-token reply's bound at most. Left estimated when that request
        fails or the call's time is up."""
        self._attempts.max_tokens = 1
        try:
            counted = self._openai.chat.completions.create(
                model=self.model, messages=messages, temperature=0, max_tokens=1)
        except (openai.OpenAIError, OutOfBounds):
            return reply
        if counted.usage is None or not counted.usage.prompt_tokens:
            return reply
        return replace(reply, prompt_tokens=counted.usage.prompt_tokens, estimated=False)

    def _complete(self, messages: list[dict], json_schema: dict | None,
                  stop: list[str] | None):
        """A ChatCompletion, or a Stream of chunks when the stream mode asks for one."""
        bounds = {"max_tokens": self.max_tokens, **({"stop": stop} if stop else {})}
        if json_schema is None:
            return self._create(messages, None, bounds)
        known = self.forms.known()
        refusals: list[str] = []
        for form in self.forms.candidates(known):
            try:
                completion = self._create(messages, form,
                                          {**bounds, **request_fields(form, json_schema)})
            except openai.APIStatusError as exc:
                if self.forms.forced or not _refused(form, exc):
                    raise
                refusals.append(f"{form} refused ({_said(exc)})")
                continue
            if form != known:
                self.forms.remember(form, refusals)
            return completion
        raise AssertionError("the last form, none, is never refused")

    def _create(self, messages: list[dict], form: str | None, fields: dict):
        """The reply in the current stream mode, moving on to the next mode (for the rest
        of the call) when the server refuses one."""
        while True:
            mode: Mode = self._attempts.mode
            try:
                return self._send(messages, form,
                                  {**fields, **stream_choice.request_fields(mode)})
            except openai.APIStatusError as exc:
                after = (None if form is not None and _refused(form, exc)
                         else stream_choice.refused(mode, exc.status_code, exc.response.text))
                if after is None:
                    raise
                self._attempts.stream_refusals.append(f"{mode} refused ({_said(exc)})")
                self._attempts.mode = after

    def _send(self, messages: list[dict], form: str | None, fields: dict):
        self._attempts.n = 0
        self._attempts.form = form
        try:
            return self._openai.chat.completions.create(
                model=self.model, messages=messages, temperature=self.temperature, **fields)
        finally:
            self._attempts.extra += max(0, self._attempts.n - 1)

    def _bounds(self) -> tuple[Budget, int] | None:
        """The time and the reply tokens this thread's call has (BoundedTransport)."""
        budget = getattr(self._attempts, "budget", None)
        return None if budget is None else (budget, self._attempts.max_tokens)

    def _count_attempt(self, request) -> None:
        self._attempts.n = getattr(self._attempts, "n", 0) + 1

    def _on_response(self, response) -> None:
        bounds.no_retry_after(response, self._attempts.budget)
        self._mark_refusal(response)

    def _mark_refusal(self, response) -> None:
        # openai-python retries every 5xx unless the reply says `x-should-retry: false`;
        # a refusal of the form or of streaming is an answer, so say it on the server's
        # behalf.
        form = getattr(self._attempts, "form", None)
        mode = getattr(self._attempts, "mode", "whole")
        if (form is None and mode == "whole") or response.status_code < 400:
            return
        response.read()
        status, text = response.status_code, response.text
        if ((form is not None and refuses(form, status, text))
                or stream_choice.refused(mode, status, text)):
            response.headers["x-should-retry"] = "false"

    def _call(self, purpose: str, started: float, t0: float, **fields) -> LLMCall:
        latency = (time.perf_counter() - t0) * 1000 if t0 else 0.0
        return LLMCall(purpose=purpose, model=self.model, latency_ms=round(latency, 1),
                       retries=getattr(self._attempts, "extra", 0), started_at=started,
                       json_form=getattr(self._attempts, "form", None), **fields)

    def _stopped(self, purpose: str, why: str, started: float, t0: float, partial: str = "",
                 first_token_at: float | None = None, streamed: bool = False) -> LLMReplyStopped:
        """The error of a call the client ended: past its time, or its caller stopped it."""
        call = self._call(purpose, started, t0, status="error", error=f"stopped: {why}",
                          streamed=streamed, first_token_ms=_ms(first_token_at, t0))
        return LLMReplyStopped(f"LLM call ({purpose}) stopped after {len(partial)} characters "
                               f"of reply from {self.endpoint}: {why}", call, partial)

    def _out_of_bounds(self, purpose: str, exc: OutOfBounds, started: float,
                       t0: float) -> LLMError:
        if exc.kind == "time":
            return self._stopped(purpose, exc.why, started, t0)
        call = self._call(purpose, started, t0, status="error", error=exc.why)
        return LLMError(f"LLM call ({purpose}) failed: the reply from {self.endpoint} was not "
                        f"read: {exc.why}", call)

    def _error(self, purpose: str, exc: openai.OpenAIError, started: float,
               t0: float) -> LLMError:
        what = describe(exc, self.endpoint, self.timeout_s)
        form = getattr(self._attempts, "form", None)
        if self.forms.forced and form and _refused(form, exc):
            what += (f"; the server refuses the form CHORDAL_LLM_JSON_FORM={form} forces: set "
                     "it to auto (Chordal finds a form the server accepts) or another form")
        call = self._call(purpose, started, t0, status="error", error=what)
        tries = call.retries + 1
        return LLMError(f"LLM call ({purpose}) failed after {tries} HTTP attempt"
                        f"{'s' if tries > 1 else ''}: {what}", call)


def _ms(at: float | None, t0: float) -> float | None:
    return round((at - t0) * 1000, 1) if at is not None else None


def _refused(form: str, exc: openai.OpenAIError) -> bool:
    return (isinstance(exc, openai.APIStatusError)
            and refuses(form, exc.status_code, exc.response.text))


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


def _said(exc: openai.APIStatusError) -> str:
    """A refusal as the reason of a choice puts it: `HTTP 400: what the server said`."""
    return f"HTTP {exc.status_code}: {clip_line(' '.join(_server_message(exc).split()), 160)}"


def _server_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
    return re.sub(r"\s+", " ", exc.message or "")[:300]
