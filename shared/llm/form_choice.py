"""Which structured-output form one LLM endpoint and model take: consumes the settings
(CHORDAL_LLM_JSON_FORM: a form forced, or `auto`) and the run store's Redis; produces
the forms a call tries, in order, and keeps the one the endpoint accepted.

With `auto`, a call that asks for JSON while no form is known tries `FORMS` in order
(forms.py) until one is not refused, and stores it with the reason under
`naming.llm_form_key` for CHORDAL_LLM_JSON_FORM_TTL_S: every worker's later calls go
straight to it. A call whose known form is refused (the server changed) tries the
others again. Each client (one per worker process) logs once which form its endpoint
takes and why. Without Redis the form is kept in this object only.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading

import redis

from shared import naming
from shared.config import FORMS, Settings

log = logging.getLogger("chordal.llm")


class FormChoice:
    """The form choice of one endpoint and model; thread-safe."""

    def __init__(self, settings: Settings, redis_client: redis.Redis | None, endpoint: str):
        self.forced = None if settings.llm_json_form == "auto" else settings.llm_json_form
        """The form CHORDAL_LLM_JSON_FORM forces, or None (`auto`)."""
        self.ttl_s = settings.llm_json_form_ttl_s
        self.what = f"{endpoint} (model {settings.llm_model})"
        """The endpoint as logs name it (a password in its URL masked)."""
        digest = hashlib.sha256(f"{settings.llm_base_url}\n{settings.llm_model}".encode())
        self.key = naming.llm_form_key(digest.hexdigest()[:16])
        self.r = redis_client
        self._kept: str | None = None  # the stored choice, without Redis
        self._logged: str | None = None
        self._lock = threading.Lock()

    def known(self) -> str | None:
        """The form to try first: the forced one, else the one stored, else None."""
        if self.forced:
            self._log_once(self.forced, "forced by CHORDAL_LLM_JSON_FORM")
            return self.forced
        raw = self.r.get(self.key) if self.r is not None else self._kept
        if raw is None:
            return None
        choice = json.loads(raw)
        self._log_once(choice["form"], choice["reason"])
        return choice["form"]

    def candidates(self, known: str | None) -> list[str]:
        """The forms to try, in order, when `known()` said `known`."""
        if self.forced:
            return [self.forced]
        return [known, *(f for f in FORMS if f != known)] if known else list(FORMS)

    def remember(self, form: str, refusals: list[str]) -> None:
        """Store `form` as the one the endpoint accepts, after the `refusals` of the forms
        tried before it."""
        reason = "; ".join([*refusals, f"{form} accepted"])
        raw = json.dumps({"form": form, "reason": reason})
        if self.r is None:
            self._kept = raw
        else:
            self.r.set(self.key, raw, ex=self.ttl_s)
        self._log_once(form, reason)

    def _log_once(self, form: str, reason: str) -> None:
        with self._lock:
            if self._logged == form:
                return
            self._logged = form
        log.info("%s takes structured output as %s: %s", self.what, form, reason)
