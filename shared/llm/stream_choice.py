"""Whether one LLM endpoint and model stream: consumes the settings (CHORDAL_LLM_STREAM),
the run store's Redis and the endpoint's refusals; produces the way a call asks for its
reply (a `Mode`) and keeps the one the endpoint took.

| mode | request |
|---|---|
| `usage` | `stream: true, stream_options: {"include_usage": true}` (token counts in a last chunk) |
| `plain` | `stream: true` (a server that refuses `stream_options`) |
| `whole` | neither: the whole reply at once |

A call starts with the known mode, else `usage`. An HTTP 4xx (but 401, 403, 408, 409,
429) or 5xx whose message names `stream_options` moves it on to `plain`, one naming
`stream` to `whole`; a server that answers a stream request with one whole JSON reply
is `whole` too. The mode taken is stored with the reason beside the endpoint's
structured-output form (form_choice.py's key with `:stream` appended, for the same
CHORDAL_LLM_JSON_FORM_TTL_S), so every worker's later calls go straight to it; without
Redis it is kept in this object. With CHORDAL_LLM_STREAM=false every call is `whole`.
"""

from __future__ import annotations

import json
import logging
from typing import Literal

from shared.config import Settings
from shared.llm.form_choice import FormChoice
from shared.llm.forms import names_in_refusal

Mode = Literal["usage", "plain", "whole"]

log = logging.getLogger("chordal.llm")


def request_fields(mode: Mode) -> dict:
    """Keyword arguments of `chat.completions.create` that ask for `mode`."""
    if mode == "whole":
        return {}
    return {"stream": True, **({"stream_options": {"include_usage": True}}
                               if mode == "usage" else {})}


def refused(mode: Mode, status: int, message: str) -> Mode | None:
    """The mode to try next when an HTTP `status` reply saying `message` refuses `mode`;
    None when it is no refusal of streaming."""
    if mode == "whole":
        return None
    if mode == "usage" and names_in_refusal(status, message, "stream_options"):
        return "plain"
    return "whole" if names_in_refusal(status, message, "stream") else None


class StreamChoice:
    """The stream mode of the endpoint and model of `forms`, stored beside its form (same
    Redis, TTL and log name); thread-safe (Redis or one assignment)."""

    def __init__(self, settings: Settings, forms: FormChoice):
        self.on = settings.llm_stream
        """CHORDAL_LLM_STREAM: off, every call asks for the whole reply."""
        self.key = f"{forms.key}:stream"
        self.forms = forms
        self._kept: str | None = None  # the stored mode, without Redis

    def known(self) -> Mode | None:
        """The mode stored for the endpoint, or None."""
        r = self.forms.r
        raw = r.get(self.key) if r is not None else self._kept
        return json.loads(raw)["mode"] if raw is not None else None

    def remember(self, mode: Mode, refusals: list[str]) -> None:
        """Store `mode` as the one the endpoint takes, after the `refusals` of the modes
        tried before it."""
        reason = "; ".join([*refusals, f"{mode} accepted"])
        raw = json.dumps({"mode": mode, "reason": reason})
        if self.forms.r is None:
            self._kept = raw
        else:
            self.forms.r.set(self.key, raw, ex=self.forms.ttl_s)
        log.info("%s answers %s: %s", self.forms.what,
                 "whole replies only" if mode == "whole" else f"streams ({mode})", reason)
