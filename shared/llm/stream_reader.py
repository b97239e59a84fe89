"""Reading a streamed chat completion: consumes openai-python's `Stream` of
`ChatCompletionChunk`s and a callback; produces the reply (`Streamed`: its text, finish
reason, token counts and when its first and last pieces came), calling the callback
with each piece of text as it arrives, in order.

- Token counts come from the usage chunk that `stream_options.include_usage` asks for.
  A server that sends none (or a stream cut by the reader) gets estimates, flagged `estimated`: completion tokens are
  the pieces of text it sent (exact on llama.cpp-based servers, which send one token a
  piece), prompt tokens the messages' characters / 4 (a lower bound: the server's chat
  template adds more; the client then asks the server to count them, client.py).
  llama-cpp-python 0.3 is such a server: it accepts `stream_options`, ignores it, and
  no chunk carries `usage`.
- A server that ignores `stream: true` answers with one JSON body. openai-python's SSE
  decoder finds no `data:` line in it and yields no chunk at all, silently; `whole_body`
  reads such a body by its content type instead, before the stream is read.
- A stream that breaks off raises `BrokeOff` with the text so far and why: the
  connection closed mid-body (openai-python's `APIConnectionError`, from the HTTP
  client's "incomplete chunked read"), the server sent an error event, no chunk came
  within the timeout (`APITimeoutError`), a chunk was not JSON, or the stream ended
  without a finish reason.
- The reader stops a stream itself, and closes it: past `max_pieces` pieces of text or
  past its body's byte bound (bounds.py), both more than the `max_tokens` asked for,
  the reply is cut there and ends as `length` with `cut_by_client` saying why; past
  its time (bounds.py), or when `on_text` raises `StopReading`, it raises `Stopped`
  (a `BrokeOff`) with the text so far.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import openai
from openai.types.chat import ChatCompletion
from pydantic import ValidationError

from shared.llm.bounds import OutOfBounds
from shared.broker.log_lines import clip_line


class StopReading(Exception):
    """Raised by an `on_text` callback to stop the stream; `why` says why (`its query is
    failed`)."""

    def __init__(self, why: str):
        super().__init__(why)
        self.why = why


class BrokeOff(Exception):
    """Raised when a stream ends before its finish reason; `why` says how, `partial` is the
    text received, `first_token_at` when its first piece came (perf_counter) or None."""

    def __init__(self, why: str, partial: str, first_token_at: float | None):
        super().__init__(why, partial, first_token_at)
        self.why = why
        self.partial = partial
        self.first_token_at = first_token_at


class Stopped(BrokeOff):
    """Raised when the reader stopped a stream before its end: past its time, or its
    `on_text` raised StopReading."""


@dataclass(frozen=True)
class Streamed:
    content: str
    finish_reason: str
    prompt_tokens: int
    completion_tokens: int
    estimated: bool
    """The server sent no usage: the token counts are estimates (see the module)."""
    first_token_at: float | None
    """`time.perf_counter()` when the first piece of text came; None without text."""
    ended_at: float
    """Unix time the last piece of text (or, without text, the end of the stream) came."""
    cut_by_client: str | None = None
    """Why the reader cut the reply (it went past `max_tokens`); None when the server
    ended it."""


def whole_body(stream: openai.Stream) -> ChatCompletion | None:
    """The whole reply a server sent instead of the stream it was asked for (a JSON body);
    None when the reply is a stream. BrokeOff when the body cannot be read as a reply."""
    kind = stream.response.headers.get("content-type", "")
    if "json" not in kind:
        return None
    try:
        return ChatCompletion.model_validate(json.loads(stream.response.read()))
    except OutOfBounds:
        raise
    except (ValueError, ValidationError) as exc:
        raise BrokeOff(f"a stream was asked for and the {kind} body that came instead is "
                       f"not a chat completion ({clip(str(exc))})", "", None) from None
    except Exception as exc:  # the HTTP client's read errors; it differs across openai versions
        raise BrokeOff(f"reading the whole reply sent instead of a stream failed "
                       f"({type(exc).__name__}: {clip(str(exc))})", "", None) from None


def read_stream(stream: openai.Stream, on_text: Callable[[str], None],
                messages: list[dict], timeout_s: float, max_pieces: int) -> Streamed:
    """Read `stream` to its end, or to `max_pieces` pieces of text (see the module),
    calling `on_text` with each piece; BrokeOff when it breaks off, Stopped when it is
    stopped. Any other exception raised by `on_text` propagates. The stream is closed."""
    pieces: list[str] = []
    first_at = last_at = None
    finish_reason = usage = cut = None
    try:
        for chunk in _chunks(stream, timeout_s):
            usage = chunk.usage or usage
            if not chunk.choices:
                continue
            choice = chunk.choices[0]
            finish_reason = choice.finish_reason or finish_reason
            text = choice.delta.content if choice.delta else None
            if not text:
                continue
            if len(pieces) == max_pieces:
                cut = (f"the server sent more than {max_pieces} pieces of text for "
                       f"max_tokens={max_pieces}: it ignores max_tokens")
                break
            last_at = time.time()
            first_at = first_at or time.perf_counter()
            pieces.append(text)
            on_text(text)
    except BrokeOff as exc:  # from _chunks, which knows nothing of the text so far
        raise BrokeOff(exc.why, "".join(pieces), first_at) from None
    except OutOfBounds as exc:
        if exc.kind == "time":
            raise Stopped(exc.why, "".join(pieces), first_at) from None
        cut = exc.why
    except StopReading as exc:
        raise Stopped(exc.why, "".join(pieces), first_at) from None
    finally:
        stream.close()
    if cut is not None:
        finish_reason = "length"
    elif finish_reason is None:
        raise BrokeOff("the stream ended without a finish reason", "".join(pieces), first_at)
    content = "".join(pieces)
    if usage is not None and cut is None:
        prompt, completion = usage.prompt_tokens, usage.completion_tokens
    else:
        prompt, completion = estimated_prompt_tokens(messages), len(pieces)
    return Streamed(content, finish_reason, prompt, completion, usage is None or cut is not None,
                    first_at, last_at or time.time(), cut)


def _chunks(stream: openai.Stream, timeout_s: float) -> Iterator:
    """The chunks of `stream`; its failures as BrokeOff without the text so far (the
    callback is not inside)."""
    iterator = iter(stream)
    while True:
        try:
            chunk = next(iterator)
        except StopIteration:
            return
        except openai.APITimeoutError:
            why = (f"no chunk came within {timeout_s:g}s (CHORDAL_LLM_TIMEOUT_S); raise it "
                   "or check the server's load")
        except openai.APIConnectionError as exc:
            cause = exc.__cause__
            why = "the connection closed mid-reply" + (f" ({clip(str(cause))})" if cause else "")
        except openai.APIError as exc:
            why = f"the server sent an error mid-reply: {clip(exc.message)}"
        except ValueError as exc:
            why = f"a chunk is not JSON ({clip(str(exc))})"
        else:
            yield chunk
            continue
        raise BrokeOff(why, "", None)


def estimated_prompt_tokens(messages: list[dict]) -> int:
    """About one token per four characters of the messages' text."""
    return approx_tokens("".join(map(message_text, messages)))


def approx_tokens(text: str) -> int:
    """About one token per four characters; 0 for empty text."""
    return math.ceil(len(text) / 4)


def message_text(message: object) -> str:
    """The text of one chat message (string content, or the text parts of a list)."""
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""


def clip(text: str) -> str:
    """`text` on one line, cut to 200 characters."""
    return clip_line(" ".join(text.split()), 200)
