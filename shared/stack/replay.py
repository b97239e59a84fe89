"""The replay server (`chordal fake-llm`): an OpenAI-compatible endpoint that answers
from a script (replay_script.py describes its format and the matching rule), so tests
and demos run LLM planning without a model.

Consumes chat completion requests; produces replies in the OpenAI wire format:

    POST /v1/chat/completions   the next scripted entry for the request's messages
    GET  /v1/models             one model, `replay`
    PUT  /_script               replace the script (JSONL body) and reset the log
    GET  /_log                  every request received since, in order (JSON list)

A request for a structured-output form the script's server line does not accept is
refused as that server would refuse it (replay_script.py), taking no entry; the log
records each request's `form` (shared/llm/forms.py).

Usage is counted approximately: a text of n characters is ceil(n / 4) tokens (the rule of
thumb for English with OpenAI's tokenizers), prompt tokens summed over the messages'
texts, so `total_tokens` = prompt + completion. With no entry left for a request the
server answers HTTP 500 naming the script, with `x-should-retry: false` so clients fail
at once instead of retrying. Like a real server, a reply ends before the first of the
request's `stop` strings and is cut at its `max_tokens` (at four characters a token,
`finish_reason: length`); the log records both. `--latency S` delays every reply by S seconds.

A request with `"stream": true` gets an OpenAI-style SSE stream (`text/event-stream`):
`data: {chat.completion.chunk}` events, the first with `delta.role` `assistant`, then the
(bounded) content in pieces of four characters, one token each, each `token_delay`
seconds after the one before (`--token-delay S`, the script's server line, or the
entry's own; a whole reply waits tokens × token_delay instead), then a chunk with the
`finish_reason`; with `stream_options: {"include_usage": true}` a last chunk with
`choices: []` and `usage`; then `data: [DONE]`. The latency (and a `slow` fault's
delay) comes before the first token. A `cut` fault streams its first `after`
characters and then drops the connection mid-body (uvicorn logs the raised
`StreamCut`); the client sees an incomplete chunked body. The server line may refuse
streams or ignore them (replay_script.py); the log records each request's `stream`
and `stream_options`.

A `flood` fault is a server that ignores `max_tokens`: its reply (`chars` characters,
however few tokens were asked for) streams in pieces of `piece` characters, or comes as
one JSON body generated a megabyte at a time, so the server never holds it whole; it
ends with `finish_reason: stop`. Its log record's `sent` is the body bytes handed to
the connection so far: a client that stops reading stops it (past the socket buffers).
"""

from __future__ import annotations

import asyncio
import json
import math
import signal
import time
from collections.abc import AsyncIterator, Iterable, Iterator
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, StreamingResponse

from shared.errors import InputError
from shared.llm.forms import field, form_of
from shared.stack.replay_script import Entry, Script, Server
from shared.llm.stream_reader import approx_tokens, message_text

MODEL = "replay"
FLOOD_PART = 1 << 20
"""Characters of a whole `flood` body generated at once."""


class StreamCut(Exception):
    """Raised inside a `cut` fault's stream, so the server drops the connection mid-body
    as a crashing server would (never seen by clients as an HTTP reply)."""


def _error(status: int, message: str, kind: str, headers: dict | None = None,
           param: str | None = None) -> JSONResponse:
    body = {"error": {"message": message, "type": kind, "param": param, "code": str(status)}}
    return JSONResponse(body, status_code=status, headers=headers)


def _refusal(server: Server, form: str) -> JSONResponse:
    """How `server.refuses_with` answers a request for `form`, one it does not accept."""
    name = field(form)
    if server.refuses_with == "llama_cpp_python":  # FastAPI's validation error, as HTTP 500
        return _error(500, f"1 validation error:\n  {{'type': 'literal_error', 'loc': ('body', "
                      f"'{name}', 'type'), 'msg': \"Input should be 'text' or 'json_object'\", "
                      f"'input': '{form}'}}", "internal_server_error")
    if server.refuses_with == "vllm":  # vLLM's ErrorResponse is not wrapped in "error"
        return JSONResponse({"object": "error", "message": f"{name}: {form} is not supported "
                             "by this server", "type": "BadRequestError", "param": None,
                             "code": 400}, status_code=400)
    message = (f"Invalid parameter: '{name}' of type '{form}' is not supported with this "
               "model." if name == "response_format" else
               f"Unrecognized request argument supplied: {name}")
    return _error(400, message, "invalid_request_error", param=name)


def bounded(content: str, stop: object, max_tokens: object) -> tuple[str, str]:
    """`content` ended before its first `stop` string and cut at `max_tokens`, and the
    finish reason: `length` when it was cut there, else `stop`."""
    stops = [stop] if isinstance(stop, str) else stop if isinstance(stop, list) else []
    cuts = [content.find(s) for s in stops if isinstance(s, str) and s and s in content]
    content = content[:min(cuts)] if cuts else content
    if isinstance(max_tokens, int) and approx_tokens(content) > max_tokens:
        return content[:max_tokens * 4], "length"
    return content, "stop"


def _usage(prompt_tokens: int, content: str) -> dict:
    completion_tokens = approx_tokens(content)
    return {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens}


def _completion(n: int, model: str, prompt_tokens: int, content: str,
                finish_reason: str = "stop") -> dict:
    return {
        "id": f"chatcmpl-replay-{n}", "object": "chat.completion", "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                     "finish_reason": finish_reason, "logprobs": None}],
        "usage": _usage(prompt_tokens, content),
    }


def pieces(text: str) -> list[str]:
    """`text` in the pieces a stream sends: four characters (one token) each."""
    return [text[i:i + 4] for i in range(0, len(text), 4)]


def flood_parts(entry: Entry, size: int) -> Iterator[str]:
    """A `flood` entry's reply in parts of at most `size` characters: its content, then
    its pad repeated, `entry.chars` characters in all."""
    head, pad, total, sent = entry.text, entry.pad, entry.chars or 0, 0
    block = pad * (size // len(pad) + 2)
    while sent < total:
        if sent < len(head):
            part = head[sent:sent + size]
        else:
            start = (sent - len(head)) % len(pad)
            part = block[start:start + size]
        part = part[:total - sent]
        sent += len(part)
        yield part


async def _flood_body(completion: dict, entry: Entry) -> AsyncIterator[bytes]:
    """The JSON text of `completion` with the flood's reply as its message's content."""
    mark = "@@flood@@"
    completion["choices"][0]["message"]["content"] = mark
    head, tail = json.dumps(completion).split(json.dumps(mark))
    yield (head + '"').encode()
    for part in flood_parts(entry, FLOOD_PART):
        yield json.dumps(part)[1:-1].encode()
        await asyncio.sleep(0)  # let the server notice a client that has gone
    yield ('"' + tail).encode()


async def _counted(body: AsyncIterator[bytes], record: dict) -> AsyncIterator[bytes]:
    """`body`, adding to `record["sent"]` the bytes of each part the server sent on."""
    record["sent"] = 0
    async for part in body:
        yield part
        record["sent"] += len(part)


async def _chunks(n: int, model: str, parts: Iterable[str], finish_reason: str,
                  token_delay: float, usage: dict | None,
                  cut_after: int | None) -> AsyncIterator[bytes]:
    """The SSE events of a streamed reply, a piece of text per event; with `cut_after`
    (the characters `parts` holds), `StreamCut` after them."""
    created = int(time.time())

    def event(choices: list, **extra) -> bytes:
        chunk = {"id": f"chatcmpl-replay-{n}", "object": "chat.completion.chunk",
                 "created": created, "model": model, "choices": choices, **extra}
        return f"data: {json.dumps(chunk)}\n\n".encode()

    def choice(delta: dict, finish: str | None = None) -> list:
        return [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}]

    nulls = {} if usage is None else {"usage": None}  # as OpenAI sends them
    yield event(choice({"role": "assistant", "content": ""}), **nulls)
    for piece in parts:
        await asyncio.sleep(token_delay)
        yield event(choice({"content": piece}), **nulls)
    if cut_after is not None:
        raise StreamCut(f"the replay fault cut drops the connection after {cut_after} "
                        "characters")
    yield event(choice({}, finish_reason), **nulls)
    if usage is not None:
        yield event([], usage=usage)
    yield b"data: [DONE]\n\n"


def _retry_headers(entry: Entry) -> dict:
    if entry.retry_after is None:
        return {}
    return {"Retry-After": str(math.ceil(entry.retry_after)),
            "retry-after-ms": str(round(entry.retry_after * 1000))}


def create_app(script: Script, latency: float = 0.0, token_delay: float = 0.0) -> FastAPI:
    """The replay app serving `script`; state lives on `app.state` (script, log).
    `token_delay` is the seconds per token when neither the script's server line nor
    the entry sets one."""
    app = FastAPI(title="chordal fake-llm", docs_url=None, redoc_url=None)
    app.state.script = script
    app.state.log = []

    @app.get("/v1/models")
    async def models() -> dict:
        return {"object": "list", "data": [{"id": MODEL, "object": "model", "created": 0,
                                            "owned_by": "chordal"}]}

    @app.post("/v1/chat/completions")
    async def chat(request: Request):
        try:
            body = await request.json()
        except ValueError:
            return _error(400, "request body is not JSON", "invalid_request_error")
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return _error(400, "field 'messages' must be a list of {role, content}",
                          "invalid_request_error")
        texts = [message_text(m) for m in body["messages"]]
        current: Script = app.state.script
        form = form_of(body)
        stream = bool(body.get("stream"))
        accepted = form == "none" or form in current.server.accepts
        refused_stream = accepted and stream and current.server.streams == "refuse"
        entry = (current.take("\n".join(texts)) if accepted and not refused_stream
                 else None)
        record = {"n": len(app.state.log) + 1, "at": time.time(), "model": body.get("model"),
                  "messages": body["messages"], "response_format": body.get("response_format"),
                  "form": form, "temperature": body.get("temperature"),
                  "max_tokens": body.get("max_tokens"), "stop": body.get("stop"),
                  "stream": stream, "stream_options": body.get("stream_options"),
                  "entry": entry.line if entry else None, "fault": entry.fault if entry else None}
        app.state.log.append(record)
        await asyncio.sleep(latency + (entry.delay if entry and entry.fault == "slow" else 0))
        if not accepted:
            response = _refusal(current.server, form)
        elif refused_stream:
            response = _error(400, "Unrecognized request argument supplied: stream (this "
                              "server does not stream; send stream=false)",
                              "invalid_request_error", param="stream")
        else:
            delay = next((d for d in (entry.token_delay if entry else None,
                                      current.server.token_delay) if d is not None),
                         token_delay)
            as_stream = stream and current.server.streams is True
            response = await _respond(entry, current, body, texts, record, delay, as_stream)
        record["status"] = response.status_code
        return response

    @app.put("/_script")
    async def replace_script(request: Request):
        text = (await request.body()).decode("utf-8", errors="replace")
        try:
            app.state.script = Script.from_text(text, "PUT /_script body")
        except InputError as exc:
            return _error(400, str(exc), "invalid_script")
        app.state.log = []
        return {"entries": len(app.state.script.entries)}

    @app.get("/_log")
    async def request_log() -> list:
        return app.state.log

    return app


async def _respond(entry: Entry | None, script: Script, body: dict, texts: list[str],
                   record: dict, token_delay: float,
                   stream: bool) -> JSONResponse | StreamingResponse:
    if entry is None:
        return _error(500, f"replay script {script.name}: no entry left for this request "
                      f"({len(script.entries)} entries, {script.left()} unused, none with a "
                      "matching regex or match null); add entries or PUT /_script",
                      "script_exhausted", {"x-should-retry": "false"})
    if entry.fault == "429":
        return _error(429, f"rate limited (replay fault, line {entry.line})",
                      "rate_limit_exceeded", _retry_headers(entry))
    if entry.fault == "500" or (entry.fault == "cut" and not stream):
        what = "replay fault" if entry.fault == "500" else "replay fault cut, not streamed"
        return _error(500, f"internal error ({what}, line {entry.line})", "server_error",
                      _retry_headers(entry))
    n, model = record["n"], body.get("model") or MODEL
    flood = entry.fault == "flood"
    text, finish_reason = (("", "stop") if flood else
                           bounded(entry.text, body.get("stop"), body.get("max_tokens")))
    prompt_tokens = sum(map(approx_tokens, texts))
    usage = _usage(prompt_tokens, text)
    if flood:
        usage.update(completion_tokens=math.ceil(entry.chars / 4),
                     total_tokens=prompt_tokens + math.ceil(entry.chars / 4))
    if not stream and flood:
        completion = _completion(n, model, prompt_tokens, "", finish_reason)
        return StreamingResponse(_counted(_flood_body({**completion, "usage": usage}, entry),
                                          record), media_type="application/json")
    if not stream:  # as long as the stream of its tokens would take
        await asyncio.sleep(token_delay * approx_tokens(text))
        return JSONResponse(_completion(n, model, prompt_tokens, text, finish_reason))
    options = body.get("stream_options")
    asked = isinstance(options, dict) and options.get("include_usage")
    cut_after = entry.after if entry.fault == "cut" else None
    parts = (flood_parts(entry, entry.piece) if flood else
             pieces(text if cut_after is None else text[:cut_after]))
    events = _chunks(n, model, parts, finish_reason, token_delay, usage if asked else None,
                     cut_after)
    return StreamingResponse(_counted(events, record) if flood else events,
                             media_type="text/event-stream")


def serve(script_path: Path, host: str = "127.0.0.1", port: int = 8765,
          latency: float = 0.0, token_delay: float = 0.0) -> None:
    """Serve `script_path` until SIGTERM or SIGINT; InputError for a bad script."""
    import uvicorn

    path = Path(script_path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise InputError(f"--script {str(path)!r} cannot be read ({e.strerror}); pass a "
                         "JSON Lines file of {\"match\": …, \"content\": …} entries") from None
    script = Script.from_text(text, str(path))
    print(f"fake-llm: {len(script.entries)} entries from {path}, serving "
          f"http://{host}:{port}/v1 (Ctrl-C stops it)", flush=True)
    # uvicorn handles SIGTERM/SIGINT itself (stop accepting, finish in-flight replies),
    # then re-raises the signal to the handlers it found: these make that a normal exit.
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda signum, frame: None)
    uvicorn.run(create_app(script, latency, token_delay), host=host, port=port, log_level="warning",
                timeout_graceful_shutdown=2)
    print("fake-llm: stopped", flush=True)
