"""What one executor step produces: a StepResult, with the Evidence behind its value."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, model_validator

from .quantity import Quantity


class Evidence(BaseModel):
    """A document a value came from; rendered as a footnote."""

    model_config = ConfigDict(extra="forbid")

    doc_id: str
    title: str
    url: str | None = None
    date: str | None = None
    """When the document was published."""
    source_type: str | None = None
    period: str | None = None
    """The span the document is about (`2024-Q3`), given or read from its title."""
    match: str | None = None
    """How GET chose the document: `title_match`, `url_match`, `partial_title`."""
    page: int | None = None
    """The page of the document the value came from (1-based), when it has pages."""

    def cite(self) -> str:
        """The footnote text: title, period, publication date, URL, how it was matched."""
        parts = [self.title]
        if self.period:
            parts.append(f"period {self.period}")
        parts.append(f"published {self.date}" if self.date else "publication date unknown")
        if self.page is not None:
            parts.append(f"page {self.page}")
        if self.url:
            parts.append(self.url)
        text = ", ".join(parts)
        return f"{text} (matched by {self.match.replace('_', ' ')})" if self.match else text


class Candidate(Evidence):
    """A document a GET considered, and what the matching rules made of it."""

    verdict: Literal["chosen", "fits", "rejected"]
    reason: str
    """Why it was chosen, passed over, or refused ("title names 2024-Q2")."""


class TextRef(BaseModel):
    """A document text a step read, by reference: which document, which version of its
    content, and the passage the value came from. The run store keeps these, never the
    text itself (shared/stores/texts.py reads the text back)."""

    model_config = ConfigDict(extra="forbid")

    doc_id: str
    version: str
    """sha256 of the document's content (16 hex digits): a re-indexed document with other
    content is another version."""
    chars: int
    """Characters in the document's text."""
    pages: int = 0
    """How many pages the text spans (pages 1 to `pages`); 0 when the document has none."""
    item: int | None = None
    """The index of this text in a list value (GET with top_k), None for a single text."""
    quote: str = ""
    """The start of the text (at most 300 characters): what show and the pages print."""


class TextPage(BaseModel):
    """One page of the text a step read (`chordal show --text`, the API's text route)."""

    model_config = ConfigDict(extra="forbid")

    query_id: str
    step_id: str
    item: int
    """Which text of the step's value (0 for a single one; a top_k GET has several)."""
    texts: int
    """How many texts the step read."""
    doc_id: str
    version: str
    chars: int
    """Characters in the whole text."""
    offset: int
    text: str
    """Characters `offset` to `offset + limit` of the text."""
    next_offset: int | None = None
    """Where the next page starts; None after the last."""


class StepResult(BaseModel):
    """The full record of one step, stored in the run store under its action_id."""

    model_config = ConfigDict(extra="forbid")

    action_id: str
    """`{query_id}:{step_id}`."""
    step_id: str
    operation: str
    status: Literal["ok", "error"]
    value: Any = None
    """The bound value: document text (GET), extracted string (EXTRACT), number (COMPUTE)."""
    confidence: str | None = None
    """Which layer produced the value: `title_match`, `pattern`, `fallback`, `computed`…"""
    document: Evidence | None = None
    """The document the value came from (GET, EXTRACT)."""
    documents: list[Evidence] = []
    """Every document behind a list value (GET with top_k, SEARCH, MERGE, FILTER)."""
    note: str | None = None
    """Why the step decided as it did (GET's choice, VALIDATE, ARBITRATE, MERGE, EXTRACT
    layers)."""
    quote: str | None = None
    """The sentence of `document` the value was read from, as the document writes it
    (EXTRACT; cut to about 300 characters around the value), or the table row."""
    quantity: Quantity | None = None
    """The value typed (EXTRACT, COMPUTE): kind, amount, unit and scale; None for text."""
    quantities: list[Quantity] = []
    """A list value's figures typed, one per item: a row read in every period (EXTRACT
    with `period: "all"`), earliest first."""
    texts: list[TextRef] = []
    """The document texts of `value`, by reference (GET, FILTER and MERGE over GETs): the
    stored `value` holds each text's quote in its place, never the text."""
    candidates: list[Candidate] = []
    """The documents a GET considered, chosen first (see shared/search/matching.py)."""
    inputs: list[str] = []
    """action_ids of the steps whose values this one used."""
    duration_ms: float = 0.0
    result_length: int = 0
    """Characters in `value` as text."""
    error_code: str | None = None
    error_message: str | None = None
    attempt: int = 1
    """How many deliveries this step took."""
    started_at: float = 0.0
    """Unix time the tool started (wall clock of the executor's machine)."""
    finished_at: float = 0.0
    worker: str | None = None
    """The Celery node name of the worker that ran the step (`executor-1a2b3c4d@host`)."""
    task_id: str | None = None
    """The Celery task id of the step's task (Flower's `/task/<id>`)."""

    @model_validator(mode="before")
    @classmethod
    def _candidates(cls, data: Any) -> Any:
        # The run store keeps a candidate that is `document` as its verdict (and its
        # reason, when it is not `note`) alone (shared/stores/texts.py `stored_json`).
        if not isinstance(data, dict) or not isinstance(data.get("document"), dict):
            return data
        short = [c for c in data.get("candidates") or [] if isinstance(c, dict)
                 and "doc_id" not in c]
        if not short:
            return data
        full = {"reason": data.get("note") or "", **data["document"]}
        return {**data, "candidates": [{**full, **c} if isinstance(c, dict) and "doc_id" not in c
                                       else c for c in data["candidates"]]}

    @model_validator(mode="after")
    def _quotes(self) -> StepResult:
        # The run store keeps a text's quote once, in `value` (shared/stores/texts.py `stored`).
        for ref in self.texts:
            if not ref.quote:
                quoted = self.value if ref.item is None else (
                    self.value[ref.item] if isinstance(self.value, list)
                    and ref.item < len(self.value) else None)
                ref.quote = quoted if isinstance(quoted, str) else ""
        return self

    def reference(self) -> dict:
        """The small deterministic value a step task returns (Flower shows it)."""
        return {"action_id": self.action_id, "status": self.status}
