"""The Document: consumes one record of a corpus (a JSON object), produces the validated
unit every search backend stores and GET returns, and the `Evidence` footnotes cite.

A document with pages (a PDF) has them in `content`, each after the first following a
form feed (`PAGE_BREAK`, as pdftotext writes them); `page_at` tells the page of an
offset. Its `tables` are stored beside it and read by EXTRACT by row
(`SearchBackend.tables`); documents a search returns carry none.

`date` is when the document was published; `period` is the span it is about. A record
may give `period` (`2024`, `FY2024`, `2024-Q3`, `2024-H1`, `2024-07`, a date range);
without one it is inferred from the title ("Q3 2024", "third quarter of 2024",
"2024年第三季度", "Annual Report 2024", …) and `period_origin` says which.
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import date as Date
from typing import Any

from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

from shared.errors import InputError, quoted
from shared.models import Evidence
from shared.models.fields import Text
from shared.models.table import Table

from .dates import ACCEPTED_FORMS, format_scope, parse_scope
from .periods import named_period

FIELDS = ("id", "title", "content", "date", "url", "source_type", "period", "period_origin")
"""The fields a search store keeps for every document (`period_origin` is filled in when
absent); a record may also carry `tables`."""
PAGE_BREAK = "\f"
"""What separates a document's pages in its content."""


def page_spans(text: str) -> list[tuple[int | None, int, int]]:
    """(page, start, end) of each page of `text`, pages numbered from 1; one span with
    page None for text without pages."""
    if PAGE_BREAK not in text:
        return [(None, 0, len(text))]
    spans, start = [], 0
    for number, page in enumerate(text.split(PAGE_BREAK), start=1):
        spans.append((number, start, start + len(page)))
        start += len(page) + len(PAGE_BREAK)
    return spans


def page_at(text: str, offset: int) -> int | None:
    """The page (1-based) of `text` that `offset` falls on; None for text without pages."""
    if PAGE_BREAK not in text:
        return None
    return text.count(PAGE_BREAK, 0, max(0, offset)) + 1


def document_id(title: str, date: str | None, url: str | None) -> str:
    """A stable id for a document that has none, so re-indexing a file replaces
    its documents instead of adding copies."""
    key = "\x1f".join((title.strip(), date or "", url or ""))
    # surrogatepass: a title that is not UTF-8 gets an id, and its field is reported
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:16]


class Document(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: Text
    """Unique key; upserting a document with a known id replaces it. Derived from
    title, date and url when the record has none."""
    title: Text
    """Name of the document; GET steps name documents by it."""
    content: Text
    """Full text; GET binds it to the step's variable, EXTRACT searches it."""
    date: str | None = None
    """ISO date `YYYY-MM-DD` the document was published (a Q3 report: in October or
    November). A document with neither `date` nor `period` never fits a period."""
    url: Text | None = None
    """Where a reader can find the document; printed in footnotes."""
    source_type: Text | None = None
    """Kind of source: `official_report`, `news`, `regulation`, …"""
    period: str | None = None
    """The span the document is about, as a scope (`2024`, `2024-Q3`, `2024-H1`,
    `2024-07`, `2024-07-01..2024-09-30`); given, else inferred from the title."""
    period_origin: Literal["given", "inferred"] | None = None
    """Whether `period` came with the record or was read from the title."""
    tables: list[Table] = []
    """The document's tables, read as it was indexed (a PDF's, an HTML page's, a
    record's, or text laid out in columns)."""

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

    @field_validator("period", mode="before")
    @classmethod
    def _scope(cls, value: Any) -> Any:
        if value is None or (isinstance(value, str) and not value.strip()):
            return None
        try:
            return format_scope(parse_scope(str(value)))
        except InputError:
            raise ValueError(f"{value!r} is not a period; write it as one of {ACCEPTED_FORMS}, "
                             "or leave it out to have it read from the title") from None

    @model_validator(mode="after")
    def _infer_period(self) -> "Document":
        if self.period is not None:
            if self.period_origin is None:
                self.period_origin = "given"
        elif (found := named_period(self.title)) is not None:
            self.period, self.period_origin = format_scope(found), "inferred"
        else:
            self.period_origin = None
        return self

    def period_range(self):
        """`period` as an inclusive (first, last) date pair, or None."""
        return parse_scope(self.period) if self.period else None

    def evidence(self, match: str | None = None, page: int | None = None) -> Evidence:
        """This document as a footnote cites it; `match` says how a GET chose it, `page`
        which page the value is on."""
        return Evidence(
            doc_id=self.id, title=self.title, url=self.url, date=self.date,
            source_type=self.source_type, period=self.period, match=match, page=page,
        )


def describe(error: ValueError) -> list[str]:
    """One sentence per problem, naming the field and what to do."""
    if isinstance(error, json.JSONDecodeError):
        return [f"not valid JSON ({error.msg} at column {error.colno}); write one object per line"]
    if not isinstance(error, ValidationError):
        return [str(error)]
    sentences = []
    for e in error.errors():
        field = ".".join(str(part) for part in e["loc"])
        if not field:  # about the whole object: a key that is not UTF-8 is the one case
            sentences.append("a field name holds a lone surrogate, which UTF-8 cannot carry; "
                             "write field names and text as UTF-8" if e["type"] == "string_unicode"
                             else e["msg"].removeprefix("Value error, "))
        elif e["type"] == "missing":
            sentences.append(f"field '{field}' is required")
        elif e["type"] == "extra_forbidden":
            sentences.append(f"field {quoted(field)} is not allowed; use only "
                             f"{', '.join((*FIELDS, 'pages', 'tables'))}")
        elif e["type"] == "string_type":
            sentences.append(f"field '{field}' must be a string, got {quoted(e['input'])}")
        else:
            sentences.append(f"field '{field}': {e['msg'].removeprefix('Value error, ')}")
    return sentences
