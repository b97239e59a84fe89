"""The Document: consumes one record of a corpus (a JSON object), produces the validated
unit every search backend stores and GET returns, and the `Evidence` footnotes cite.
"""

from __future__ import annotations

import hashlib
import re
from datetime import date as Date
from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator, model_validator

from shared.models import Evidence

FIELDS = ("id", "title", "content", "date", "url", "source_type")
"""The fields a corpus record may carry."""


def document_id(title: str, date: str | None, url: str | None) -> str:
    """A stable id for a document that has none, so re-indexing a file replaces
    its documents instead of adding copies."""
    key = "\x1f".join((title.strip(), date or "", url or ""))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


class Document(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    """Unique key; upserting a document with a known id replaces it. Derived from
    title, date and url when the record has none."""
    title: str
    """Name of the document; GET steps name documents by it."""
    content: str
    """Full text; GET binds it to the step's variable, EXTRACT searches it."""
    date: str | None = None
    """ISO date `YYYY-MM-DD` the document speaks for (a report: the last day of its period);
    undated documents never pass a date filter."""
    url: str | None = None
    """Where a reader can find the document; printed in footnotes."""
    source_type: str | None = None
    """Kind of source: `official_report`, `news`, `regulation`, …"""

    @model_validator(mode="before")
    @classmethod
    def _derive_id(cls, data: Any) -> Any:
        if isinstance(data, dict) and not data.get("id"):
            def text(key: str) -> str | None:
                value = data.get(key)
                return None if value is None else str(value)

            data = {**data, "id": document_id(text("title") or "", text("date"), text("url"))}
        return data

    @field_validator("title", "content")
    @classmethod
    def _not_blank(cls, value: str, info) -> str:
        if not value.strip():
            raise ValueError(f"must not be blank; give the document's {info.field_name}")
        return value.strip() if info.field_name == "title" else value

    @field_validator("date", mode="before")
    @classmethod
    def _iso_date(cls, value: Any) -> Any:
        if isinstance(value, Date):
            return value.isoformat()
        if value is None or value == "":
            return None
        if isinstance(value, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
            try:
                Date.fromisoformat(value)
                return value
            except ValueError:
                raise ValueError(f"{value!r} is not a calendar date; check month and day") from None
        hint = ""
        if re.fullmatch(r"\d{4}(-\d{2})?", str(value)):
            hint = "; for a whole month or year give the day it ends, e.g. 2023-09-30"
        raise ValueError(f"{value!r} is not an ISO date; write it as YYYY-MM-DD{hint}")

    def evidence(self) -> Evidence:
        """This document as a footnote cites it."""
        return Evidence(
            doc_id=self.id, title=self.title, url=self.url,
            date=self.date, source_type=self.source_type,
        )
