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
"""

from __future__ import annotations

import asyncio
import math
import signal
import time
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from shared.errors import InputError
from shared.llm.forms import field, form_of
from shared.llm.replay_script import Entry, Script, Server

MODEL = "replay"


def approx_tokens(text: str) -> int:
    """About one token per four characters; 0 for empty text."""
    return math.ceil(len(text) / 4)


def message_text(message: object) -> str:
    """The text of one chat message (string content, or the text parts of a list)."""
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""


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


def _completion(n: int, model: str, prompt_tokens: int, content: str,
                finish_reason: str = "stop") -> dict:
    completion_tokens = approx_tokens(content)
    return {
        "id": f"chatcmpl-replay-{n}", "object": "chat.completion", "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                     "finish_reason": finish_reason, "logprobs": None}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    }


def _retry_headers(entry: Entry) -> dict:
    if entry.retry_after is None:
        return {}
    return {"Retry-After": str(math.ceil(entry.retry_after)),
            "retry-after-ms": str(round(entry.retry_after * 1000))}


def create_app(script: Script, latency: float = 0.0) -> FastAPI:
    """The replay app serving `script`; state lives on `app.state` (script, log)."""
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
        if body.get("stream"):
            return _error(400, "the replay server does not stream; send stream=false",
                          "invalid_request_error")
        texts = [message_text(m) for m in body["messages"]]
        current: Script = app.state.script
        form = form_of(body)
        accepted = form == "none" or form in current.server.accepts
        entry = current.take("\n".join(texts)) if accepted else None
        record = {"n": len(app.state.log) + 1, "at": time.time(), "model": body.get("model"),
                  "messages": body["messages"], "response_format": body.get("response_format"),
                  "form": form, "temperature": body.get("temperature"),
                  "max_tokens": body.get("max_tokens"), "stop": body.get("stop"),
                  "entry": entry.line if entry else None, "fault": entry.fault if entry else None}
        app.state.log.append(record)
        await asyncio.sleep(latency + (entry.delay if entry and entry.fault == "slow" else 0))
        response = (_respond(entry, current, body, texts, record["n"]) if accepted
                    else _refusal(current.server, form))
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


def _respond(entry: Entry | None, script: Script, body: dict, texts: list[str],
             n: int) -> JSONResponse:
    if entry is None:
        return _error(500, f"replay script {script.name}: no entry left for this request "
                      f"({len(script.entries)} entries, {script.left()} unused, none with a "
                      "matching regex or match null); add entries or PUT /_script",
                      "script_exhausted", {"x-should-retry": "false"})
    if entry.fault == "429":
        return _error(429, f"rate limited (replay fault, line {entry.line})",
                      "rate_limit_exceeded", _retry_headers(entry))
    if entry.fault == "500":
        return _error(500, f"internal error (replay fault, line {entry.line})", "server_error",
                      _retry_headers(entry))
    model = body.get("model") or MODEL
    text, finish_reason = bounded(entry.text, body.get("stop"), body.get("max_tokens"))
    return JSONResponse(_completion(n, model, sum(map(approx_tokens, texts)), text,
                                    finish_reason))


def serve(script_path: Path, host: str = "127.0.0.1", port: int = 8765,
          latency: float = 0.0) -> None:
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
    uvicorn.run(create_app(script, latency), host=host, port=port, log_level="warning",
                timeout_graceful_shutdown=2)
    print("fake-llm: stopped", flush=True)
