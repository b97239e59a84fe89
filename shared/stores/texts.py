"""Document texts by reference: consumes Documents (from a search backend) and the
TextRefs of stored StepResults, produces texts that carry their reference
(`DocumentText`), the stored form of a result (`by_reference`) and the result with its
texts read back (`TextReader.resolve`).

A GET's value is a `DocumentText`: a `str`, so every tool reads it as text, that knows
which document and version it is. The run store keeps only the reference and a quote
(shared/stores/runs.py calls `by_reference`); a step that reads the value (EXTRACT, FILTER, a
top_k GET item) gets the text back from the search store when it still holds that
version, else from the one shared cached copy of the version in Redis:

    chordal:text:{sha256(doc_id)[:16]}:{version}   string, SET NX EX CHORDAL_TEXT_CACHE_S

written the first time a step reads the version from the search store, and shared by
every query reading it; a process writes it again (or, when another process's copy is
there, renews its TTL) at most every half TTL while its steps read that version, so a
1 MB document read by every query of a batch is not sent to Redis once per step. A document re-indexed with other content whose old version has
no cached copy makes the step fail with DOCUMENT_CHANGED; no other text is ever read in
its place.
"""

from __future__ import annotations

import hashlib
import math
import time

import pydantic_core
import redis

from shared import naming
from shared.errors import InputError, ToolError
from shared.models import RunRecord, StepResult, TextPage, TextRef
from shared.search.document import PAGE_BREAK, Document

KEPT_KEYS = 4096
"""Cached copies this process remembers writing (`TextReader._keep`)."""
_KEPT: dict[str, float] = {}
"""key -> when this process last wrote that cached copy (monotonic seconds)."""
QUOTE_CHARS = 300
"""The longest quote a reference keeps."""
PAGE_CHARS = 20_000
"""Characters of a text page when the reader names no limit."""
MAX_PAGE_CHARS = 200_000
"""The most characters one text page may ask for."""


class DocumentText(str):
    """A document's text that knows its reference (`ref`), and whether the search store
    holds this version now (`current`: False for a cached copy of an older one)."""

    ref: TextRef
    current: bool

    def __new__(cls, text: str, ref: TextRef, current: bool = True) -> "DocumentText":
        made = super().__new__(cls, text)
        made.ref, made.current = ref, current
        return made


def version_of(text: str) -> str:
    """The version of a document's content: 16 hex digits of its sha256."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def quote_of(text: str) -> str:
    """The start of `text`, spaces collapsed, at most QUOTE_CHARS characters."""
    return " ".join(text[: QUOTE_CHARS * 4].split())[:QUOTE_CHARS]


def document_text(doc: Document, item: int | None = None) -> DocumentText:
    """`doc`'s content as a DocumentText (`item`: its index in a list value)."""
    text = doc.content
    pages = text.count(PAGE_BREAK) + 1 if PAGE_BREAK in text else 0
    return DocumentText(text, TextRef(doc_id=doc.id, version=version_of(text), chars=len(text),
                                      pages=pages, item=item, quote=quote_of(text)))


def changed(ref: TextRef, step_id: str, what: str) -> ToolError:
    """DOCUMENT_CHANGED: the version `ref` names is gone (`what` it was re-indexed as)."""
    where = f"step {step_id}: " if step_id else ""
    return ToolError("DOCUMENT_CHANGED", f"{where}document {ref.doc_id!r} {what} since version "
                     f"{ref.version} was read; ask the question again to read the current "
                     "version (CHORDAL_TEXT_CACHE_S sets how long a read version's text stays "
                     "cached)")


def stored_json(result: StepResult) -> str:
    """The JSON the run store keeps of `result`: its texts by reference, each quote once
    (in `value`; StepResult refills the reference's on reading), a candidate that is
    `document` as its verdict alone (and its reason, unless it is `note`; StepResult
    refills the rest), no field at its default."""
    kept = by_reference(result)
    if kept.texts:
        kept = kept.model_copy(update={"texts": [r.model_copy(update={"quote": ""})
                                                 for r in kept.texts]})
    data = kept.model_dump(mode="json", exclude_defaults=True)
    document = data.get("document")
    if document and data.get("candidates"):
        data["candidates"] = [_as_document(c, document, data.get("note"))
                              for c in data["candidates"]]
    return pydantic_core.to_json(data).decode()


def _as_document(candidate: dict, document: dict, note: str | None) -> dict:
    """`candidate` without what it repeats of `document` and `note`."""
    verdict, reason = candidate["verdict"], candidate["reason"]
    if {k: v for k, v in candidate.items() if k not in ("verdict", "reason")} != document:
        return candidate
    return {"verdict": verdict} if reason == note else {"verdict": verdict, "reason": reason}


def by_reference(result: StepResult) -> StepResult:
    """`result` as the run store keeps it: each DocumentText in its value replaced by its
    quote, its reference in `texts` (the item set to its place in a list value)."""
    value = result.value
    if isinstance(value, DocumentText):
        ref = value.ref.model_copy(update={"item": None})
        return result.model_copy(update={"value": ref.quote, "texts": [ref]})
    if isinstance(value, list) and any(isinstance(v, DocumentText) for v in value):
        refs = [v.ref.model_copy(update={"item": i}) for i, v in enumerate(value)
                if isinstance(v, DocumentText)]
        stored = [v.ref.quote if isinstance(v, DocumentText) else v for v in value]
        return result.model_copy(update={"value": stored, "texts": refs})
    return result


class TextReader:
    """Reads the texts of references back: from the search backend when it holds the
    version, else from the shared cached copy; `cache_s` 0 writes no copy."""

    def __init__(self, backend, client: redis.Redis | None, cache_s: int = 3600):
        self.backend = backend
        self.r = client
        self.cache_s = cache_s

    def text(self, ref: TextRef, step_id: str = "", keep: bool = True) -> DocumentText:
        """The text `ref` names; DOCUMENT_CHANGED when neither the search store nor the
        cache holds its version. `keep`: write the shared cached copy when it is read
        from the search store (a reader that only shows text passes False)."""
        doc = self.backend.documents([ref.doc_id]).get(ref.doc_id) if self.backend else None
        if doc is not None and version_of(doc.content) == ref.version:
            if keep and self.r is not None and self.cache_s > 0:
                self._keep(naming.text_key(ref.doc_id, ref.version), doc.content)
            return DocumentText(doc.content, ref)
        cached = self.r.get(naming.text_key(ref.doc_id, ref.version)) if self.r else None
        if cached is not None:
            return DocumentText(cached, ref, current=False)
        raise changed(ref, step_id, "was re-indexed with other content, and no cached copy "
                      "is left," if doc is not None else "is no longer indexed")

    def _keep(self, key: str, text: str) -> None:
        """Write the shared cached copy unless this process wrote it less than half its
        TTL ago: a document of 1 MB read by every query of a batch is sent to Redis once
        per process and half-TTL, not once per step."""
        now = time.monotonic()
        if now - _KEPT.get(key, -math.inf) < self.cache_s / 2:
            return
        if not self.r.set(key, text, nx=True, ex=self.cache_s):
            self.r.expire(key, self.cache_s)  # another's copy: it lives as long as ours would
        if len(_KEPT) >= KEPT_KEYS:
            _KEPT.clear()
        _KEPT[key] = now

    def resolve(self, result: StepResult, step_id: str = "") -> StepResult:
        """`result` with each referenced text read back into its value."""
        if not result.texts:
            return result
        if not isinstance(result.value, list):
            return result.model_copy(update={"value": self.text(result.texts[0], step_id)})
        value = list(result.value)
        for ref in result.texts:
            if ref.item is not None and ref.item < len(value):
                value[ref.item] = self.text(ref, step_id)
        return result.model_copy(update={"value": value})


def readable(record: RunRecord, reader: TextReader) -> RunRecord:
    """`record` with the texts its steps read put back into their values where their
    version can still be read (the others keep their quotes), for tools that search
    what a step read (`chordal debug`)."""
    steps = []
    for step in record.steps:
        try:
            steps.append(reader.resolve(step) if step.status == "ok" else step)
        except ToolError:
            steps.append(step)
    return record.model_copy(update={"steps": steps})


def text_page(store, backend, query_id: str, step_id: str, item: int = 0, offset: int = 0,
              limit: int = PAGE_CHARS) -> TextPage:
    """Characters `offset` to `offset + limit` of text `item` that step `step_id` of
    the query read. LookupError when the query, the step or that text does not exist;
    InputError for an offset or limit out of range; ToolError DOCUMENT_CHANGED when its
    version is gone. Reading never writes the shared cached copy."""
    if offset < 0 or not 1 <= limit <= MAX_PAGE_CHARS:
        raise InputError(f"offset must be 0 or more and limit 1 to {MAX_PAGE_CHARS:,} "
                         f"(got offset {offset}, limit {limit})")
    result = store.step(query_id, step_id)
    if result is None:
        if store.status(query_id) is None:
            raise LookupError(f"no query {query_id!r}")
        raise LookupError(f"query {query_id} has no result for step {step_id!r} (yet)")
    refs = [r for r in result.texts if (r.item or 0) == item]
    if not refs:
        held = (f"texts 0 to {len(result.texts) - 1}" if result.texts else "no document text "
                "(only GET, and FILTER or MERGE over GET, read whole texts)")
        raise LookupError(f"step {step_id} of query {query_id} has no text {item}: it holds "
                          f"{held}")
    text = TextReader(backend, store.r, 0).text(refs[0], step_id, keep=False)
    end = offset + limit
    return TextPage(query_id=query_id, step_id=step_id, item=item, texts=len(result.texts),
                    doc_id=refs[0].doc_id, version=refs[0].version, chars=len(text),
                    offset=offset, text=text[offset:end],
                    next_offset=end if end < len(text) else None)
