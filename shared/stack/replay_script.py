"""The script of the replay server (`chordal fake-llm`): JSON Lines in, `Script` (its
entries and the server it emulates) out.

Each line is one entry, a JSON object:

    {"match": REGEX or null, "content": TEXT}           a reply (content may also be a
                                                         JSON object or list: it is sent
                                                         as its JSON text)
    {"match": …, "fault": "429", "retry_after": 1}      HTTP 429 with Retry-After
    {"match": …, "fault": "500", "retry_after": 0.2}    HTTP 500 (retry_after optional)
    {"match": …, "fault": "slow", "delay": 5, "content": TEXT}
                                                         waits `delay` s, then replies
                                                         with `content` ("" if none);
                                                         a client whose timeout is
                                                         shorter gives up and retries
    {"match": …, "fault": "malformed"}                  a reply that is not JSON (or
                                                         `content`, if given)
    {"match": …, "fault": "cut", "after": 40, "content": TEXT}
                                                         a stream request gets the first
                                                         `after` characters of `content`,
                                                         then the connection drops (no
                                                         finish chunk, no [DONE]), as when
                                                         a server crashes; a whole-reply
                                                         request gets HTTP 500
    {"match": …, "fault": "flood", "chars": 200000000, "content": TEXT, "pad": " "}
                                                         ignores max_tokens: `content`, then
                                                         `pad` repeated until the reply has
                                                         `chars` characters, streamed in
                                                         pieces of `piece` characters (4,
                                                         one token, unless given) or sent
                                                         as one JSON body; the log records
                                                         the body bytes it got out

Any entry may carry `"token_delay": S`: its reply takes S seconds per token (see below).

One line may describe the emulated server instead of an entry:

    {"server": {"accepts": ["json_object_schema", "json_object"],
                "refuses_with": "llama_cpp_python", "streams": "refuse",
                "token_delay": 0.05}}

`accepts` lists the structured-output forms it answers (shared/llm/forms.py; default:
all); a request asking for another form is refused the way `refuses_with` says
(`openai`: HTTP 400 naming the field; `llama_cpp_python`: HTTP 500 carrying the
validation error that names it; `vllm`: HTTP 400 with vLLM's flat error body), and
takes no entry. A request that asks for no form is always answered.

`streams` says what a request with `"stream": true` gets: `true` (default) an SSE
stream (replay.py); `"refuse"` HTTP 400 naming `stream`, taking no entry, as from a
server that cannot stream; `"ignore"` the whole reply as JSON, as some servers send.

`token_delay` (seconds per token, default: the command's `--token-delay`, else 0) is the
generation speed: a streamed reply sends each token that long after the one before, a
whole reply comes tokens × token_delay later, so both take the same time. An entry's own
`token_delay` wins over the server line's.

`match` may be left out (same as null). Blank lines and lines starting with `#` are
skipped. `retry_after` (seconds, may be fractional) is sent as both `Retry-After`
(whole seconds, rounded up) and `retry-after-ms`.

Matching rule: a request's text is the text of all its messages, in order, joined by
newlines. The request takes the first unused entry (in file order) whose `match`
regex is found in that text (`re.search`; use inline flags like `(?i)` or `(?s)`);
when no regex entry matches, it takes the first unused entry whose `match` is null.
Every entry, fault or reply, is used at most once. When no entry is left for a
request the server answers HTTP 500 naming the script (see replay.py).
"""

from __future__ import annotations

import json
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from shared.config import FORMS, Form
from shared.errors import InputError

Fault = Literal["429", "500", "slow", "malformed", "cut", "flood"]
Refusal = Literal["openai", "llama_cpp_python", "vllm"]
Streams = Literal[True, "refuse", "ignore"]
MALFORMED = 'Sure! Here is the plan: {"steps": [{"id": "E1", "operation": "GET", "source": '
"""The reply of a `malformed` fault without content: prose, then JSON cut short."""


class Entry(BaseModel):
    """One scripted reply or fault."""

    model_config = ConfigDict(extra="forbid")

    match: str | None = None
    content: str | dict | list | None = None
    fault: Fault | None = None
    retry_after: float | None = Field(None, gt=0)
    delay: float = Field(0.0, ge=0)
    after: int | None = Field(None, ge=0)
    """Characters a `cut` fault streams before the connection drops."""
    chars: int | None = Field(None, ge=0)
    """Characters of a `flood` fault's reply, whatever `max_tokens` asks."""
    pad: str = Field(" ", min_length=1)
    """What a `flood` fault repeats after its content."""
    piece: int = Field(4, ge=1)
    """Characters per piece of a streamed `flood`."""
    token_delay: float | None = Field(None, ge=0)
    """Seconds per token of this reply; None: the server's."""
    line: int = 0
    """Line number in the script (1-based); set by `parse_script`."""
    used: bool = False

    @field_validator("match")
    @classmethod
    def _regex(cls, v: str | None) -> str | None:
        if v is not None:
            try:
                re.compile(v)
            except re.error as e:
                raise ValueError(f"is not a valid regex ({e}); escape special characters "
                                 "or use null to match any request") from None
        return v

    @property
    def text(self) -> str:
        """The reply text of this entry."""
        if self.content is None:
            return MALFORMED if self.fault == "malformed" else ""
        return self.content if isinstance(self.content, str) else json.dumps(self.content)

    def matches(self, text: str) -> bool:
        return self.match is not None and re.search(self.match, text) is not None


class Server(BaseModel):
    """What the emulated server does with structured-output forms and streams."""

    model_config = ConfigDict(extra="forbid")

    accepts: list[Form] = list(FORMS)
    """The forms it answers; it refuses the others."""
    refuses_with: Refusal = "openai"
    """Whose way of refusing a form it copies (replay.py)."""
    streams: Streams = True
    """What a `stream: true` request gets: a stream, a refusal, or the whole reply."""
    token_delay: float | None = Field(None, ge=0)
    """Seconds per token of every reply; None: the command's `--token-delay`."""


def parse_script(text: str, name: str = "script") -> tuple[list[Entry], Server]:
    """The entries of a JSONL script and its server line (the default server without
    one); InputError naming the line and the fix."""
    entries, servers = [], []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as e:
            raise InputError(f"{name} line {number}: not JSON ({e.msg}, column {e.colno}); "
                             'write one object per line like {"match": null, "content": '
                             '"…"}') from None
        if not isinstance(raw, dict) or "line" in raw or "used" in raw:
            raise InputError(f"{name} line {number}: write one JSON object with match and "
                             "content (or fault) per line")
        if "server" in raw:
            servers.append(_server(raw, f"{name} line {number}", servers))
            continue
        entry = _validated(Entry, {**raw, "line": number}, f"{name} line {number}")
        if entry.fault is None and entry.content is None:
            raise InputError(f"{name} line {number}: the entry has neither content nor "
                             'fault; add "content": "…" (the reply) or a "fault"')
        if (entry.fault == "cut") != (entry.after is not None):
            raise InputError(f"{name} line {number}: " + (
                'a cut fault needs "after": N, the characters streamed before the '
                "connection drops" if entry.after is None else
                '"after" belongs to a cut fault only; add "fault": "cut" or remove it'))
        if (entry.fault == "flood") != (entry.chars is not None):
            raise InputError(f"{name} line {number}: " + (
                'a flood fault needs "chars": N, the characters it sends whatever '
                "max_tokens asks" if entry.chars is None else
                '"chars" belongs to a flood fault only; add "fault": "flood" or remove it'))
        entries.append(entry)
    return entries, (servers[0] if servers else Server())


def _server(raw: dict, where: str, earlier: list[Server]) -> Server:
    if earlier or set(raw) != {"server"}:
        raise InputError(f'{where}: a script has one line {{"server": {{…}}}} and nothing '
                         "else on it; merge the server lines")
    return _validated(Server, raw["server"], where)


def _validated(model: type[BaseModel], raw: object, where: str) -> BaseModel:
    try:
        return model.model_validate(raw)
    except ValidationError as e:
        wrong = "; ".join(f"field {'.'.join(map(str, err['loc'])) or 'entry'!r}: "
                          f"{err['msg'].removeprefix('Value error, ')}" for err in e.errors())
        raise InputError(f"{where}: {wrong}") from None


class Script:
    """The entries being served and which of them are used."""

    def __init__(self, entries: list[Entry], name: str = "script", server: Server | None = None):
        self.entries = entries
        self.name = name
        self.server = server or Server()

    @classmethod
    def from_text(cls, text: str, name: str = "script") -> Script:
        entries, server = parse_script(text, name)
        return cls(entries, name, server)

    def take(self, text: str) -> Entry | None:
        """The entry for a request whose messages read `text` (marked used), or None."""
        unused = [e for e in self.entries if not e.used]
        entry = next((e for e in unused if e.matches(text)), None) or next(
            (e for e in unused if e.match is None), None)
        if entry is not None:
            entry.used = True
        return entry

    def left(self) -> int:
        return sum(not e.used for e in self.entries)
