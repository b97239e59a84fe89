"""GET's matching rules, written once for every backend: consumes a GET source, its
`temporal_scope` and the candidate documents a backend ranked by text; produces a
`Match`: the documents that fit (best first), every candidate with the reason it was
chosen or refused, and, when none fits, the nearest ones.

The rules
1. Words. Source and title are compared as sets of words: lower-cased, punctuation and
   possessives gone (`Halvorsen Marine's` = `halvorsen marine`), plurals folded, filler
   words dropped (`the`, `of`, `for`, …, and "report of" before a name), periods taken
   out (`Q3 2024`, `third quarter of 2024` and `2024年第三季度` are one period, not
   words). Word order, case and punctuation never change the choice.
2. Title. A document fits by title (`title_match`) when its title holds every word of
   the source; by URL (`url_match`) when the source is its URL. It fits partly
   (`partial_title`) only when the source has at least three words, the title lacks at
   most a third of them, the document's text holds each missing word, and no other
   candidate's title holds a missing word: a missing word that other titles carry
   names another document (another company, another kind of report), so one common
   word never lets a document in.
3. Period named in the source. The document must be about exactly that period — Q3
   2024 is neither 2024 nor Q3 2023: a title that names periods must name that one
   (then the title settles it, so "FY2024" in a source finds "FY2024" in a title even
   when the corpus gives that fiscal year as 2023-07-01..2024-06-30); a title that names
   none needs a `period` equal to it. A document with no period at all fits when it was
   published inside the period or within the publication lag after it
   (CHORDAL_PUBLICATION_LAG_DAYS, default 180: an annual report comes out in the
   following spring).
4. temporal_scope. A window: the document's period must lie inside it (an annual report
   is not an answer for a Q3 scope: its figures are for the year); a document with no
   period must have been published inside it or within the lag after it. When the
   source also names a period, both rules hold. (Backends filter on overlap, a superset;
   the rule is checked here.)
5. Choice. Among documents that fit: URL or the whole title first, then the title with
   the fewest words beyond the source's, then the closest period (equal, inside the
   target, containing it, overlapping, then undated-period documents by publication),
   then the most recent period, then official reports, then the latest publication; a
   later version of the chosen title ("… (revised)", "Product Recall Update: …") replaces
   it.
   The winner's extra title words must be among every close rival's (a rival of the
   same match kind and period distance): "Acme Annual Report 2024" beats "Draft: Acme
   Annual Report 2024", but "Q3 2024 Production Report" fits "Acme …" and "Bolt Motors
   …" alike and is ambiguous: nothing is chosen and both are named. So are documents of
   different periods that fit alike when none is the period asked ("Acme Production
   Report" with Q1 and Q3 reports in the store, or with temporal_scope 2024).
6. Nothing fits: NOT_FOUND names the nearest candidates with their periods and
   publication dates and why each was refused; nothing is substituted.

`find(candidates, source, scope, lag_days)` applies the rules through a backend's
`candidates(text, window, limit)`. Rules 3 and 4 (and the window backends filter on)
are `shared.search.fit`, which SEARCH applies to its hits too; the words of rule 1 are
`shared.search.terms.name_words`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Literal

from pydantic import BaseModel, ConfigDict

import regex

from shared.config import PUBLICATION_LAG_DAYS
from shared.models import Candidate

from .dates import DateRange, format_scope
from .document import Document
from .fit import Window, period_fits, period_rank, published_on, recency, window_for
from .periods import named_period
from .terms import SURFACE, all_words, holds_all, name_words, stem

TITLE_MATCH = "title_match"
"""Confidence of a GET: every word of the source is in the document's title."""
URL_MATCH = "url_match"
"""Confidence of a GET: the source is the document's URL."""
PARTIAL_TITLE = "partial_title"
"""Confidence of a GET: the title lacks a few of the source's words, which its text holds."""

CANDIDATES = 50
"""How many text-ranked documents a backend gives the rules to judge."""
NEAREST = 3
"""How many refused documents a NOT_FOUND message names."""
PARTIAL_MIN_WORDS = 3
"""A source needs this many words before a title may lack any of them."""

PROVISIONAL = regex.compile(r"\b(?:draft|preliminary|preview|flash|provisional|unaudited|"
                            r"forecast|outlook|what\s+to\s+expect|what\s+analysts\s+expect|"
                            r"expectations?)\b|草案|初稿|预告|展望|预测|计划|点评", regex.I)
"""Title words that mark a provisional version: a draft, a preview, a flash estimate."""
REVISION = regex.compile(r"\b(?:revised|restated|corrected|amended|updated?|reissued)\b|修订|更正",
                         regex.I)
"""Title words that mark a later version replacing an earlier one of the same title."""
REVISION_WORDS = frozenset(stem(w) for w in "revised restated corrected amended updated update "
                            "reissued".split())
PROVISIONAL_TYPES = frozenset({"draft", "preview", "analyst_note", "forecast"})
"""`source_type`s of provisional documents."""


def is_provisional(doc: Document) -> bool:
    """A draft, a preview, an analysts' note or a forecast, by its type or its title."""
    return (doc.source_type or "") in PROVISIONAL_TYPES or bool(PROVISIONAL.search(doc.title))
_FILLER_RE = regex.compile(r"\b(?:report|document|filing)s?\s+(?:of|on|for|from|by)\b", regex.I)
_KIND_RANK = {URL_MATCH: 0, TITLE_MATCH: 1, PARTIAL_TITLE: 2}
_OFFICIAL = {"official_report", "press_release", "regulation", "filing"}


class Found(BaseModel):
    """One document that fits, with how it fits."""

    model_config = ConfigDict(extra="forbid")

    document: Document
    confidence: str


class Match(BaseModel):
    """What the rules made of one GET source."""

    model_config = ConfigDict(extra="forbid")

    found: list[Found] = []
    """Documents that fit, best first; when `outcome` is "ambiguous" the first is not
    chosen over the next (a GET of one document refuses; a top_k GET takes them all)."""
    candidates: list[Candidate] = []
    """Chosen first, then the others that fit, then the refused, nearest first."""
    reason: str = ""
    """Why the first document won, or why none was chosen."""
    outcome: Literal["found", "not_found", "ambiguous"] = "not_found"
    target: str | None = None
    """The period the source names or the scope, as a scope (`2024-Q3`), if any."""


@dataclass(frozen=True)
class Source:
    """A GET source as the rules read it."""

    text: str
    names: frozenset[str]
    """Stemmed words that name the document (no periods, no filler)."""
    period: DateRange | None
    """The period the source names."""
    surface: tuple[tuple[str, str], ...] = ()
    """(stem, word as written) of the source's words, for messages."""

    @classmethod
    def parse(cls, text: str) -> Source:
        period = named_period(text)
        surface = tuple((stem(w.lower()), w) for w in SURFACE.findall(text))
        return cls(text, frozenset(name_words(_FILLER_RE.sub(" ", text))), period, surface)

    def shown(self, stems: frozenset[str] | set[str]) -> str:
        """`stems` quoted as the source writes them: 'battery', 'rate'."""
        written = {}
        for s, word in self.surface:
            written.setdefault(s, word)
        return ", ".join(f"'{w}'" for w in sorted(written.get(s, s) for s in stems))


@dataclass
class _Judged:
    doc: Document
    kind: str | None
    reason: str
    key: tuple = ()
    missing: frozenset[str] = frozenset()
    overlap: float = 0.0


Holds = Callable[[str, frozenset[str]], bool]
"""`holds(doc_id, stems)`: whether the stored document's text has a word of each stem."""


class Texts:
    """Documents' texts as rule 2 reads them: whether a text holds the words its title
    lacks, asked once per document and words within one `find`. Backends that rank
    candidates without their contents (a filing is long, and most candidates are
    refused on their titles) answer it themselves (`holds`)."""

    def __init__(self, holds: Holds | None = None):
        self._holds = holds
        self._held: dict[tuple[str, frozenset[str]], bool] = {}

    def hold(self, doc: Document, words: frozenset[str]) -> bool:
        key = (doc.id, words)
        if key not in self._held:
            self._held[key] = (self._holds(doc.id, words) if self._holds is not None
                               else holds_all(doc.content, words))
        return self._held[key]


def _judge(doc: Document, src: Source, scope: DateRange | None, lag_days: int,
           texts: Texts) -> _Judged:
    title_all = all_words(doc.title)
    title_names = set(name_words(doc.title))
    overlap = len(src.names & title_all) / len(src.names) if src.names else 0.0
    if doc.url and src.text.strip() == doc.url:
        kind, missing, extra = URL_MATCH, frozenset(), 0
    elif not src.names:
        return _Judged(doc, None, "the source names no document, only a period", overlap=overlap)
    else:
        missing = frozenset(src.names - title_all)
        extra = len(title_names - src.names)
        if not missing:
            kind = TITLE_MATCH
        elif (len(src.names) >= PARTIAL_MIN_WORDS and 3 * len(missing) <= len(src.names)
              and texts.hold(doc, missing)):
            kind = PARTIAL_TITLE
        else:
            return _Judged(doc, None, f"title lacks {src.shown(missing)}", overlap=overlap)
    marked = PROVISIONAL.search(doc.title)
    if kind != URL_MATCH and marked and not PROVISIONAL.search(src.text):
        return _Judged(doc, None, f"title marks a provisional version ({marked.group()!r}) "
                                  "that the source does not ask for", missing=missing,
                       overlap=overlap)
    named = None if kind == URL_MATCH else src.period
    refused = period_fits(doc, named, scope, lag_days)
    if refused:
        return _Judged(doc, None, refused, missing=missing, overlap=overlap)
    target = named or scope
    official = 0 if (doc.source_type or "") in _OFFICIAL else 1
    published = published_on(doc)
    key = (_KIND_RANK[kind], extra, period_rank(doc, target), recency(doc), official,
           -(published.toordinal() if published else 0), doc.id)
    why = {URL_MATCH: "the source is its URL", TITLE_MATCH: "its title holds every word of the "
           "source", PARTIAL_TITLE: f"its title holds all but {src.shown(missing)}, which its text has"}
    return _Judged(doc, kind, why[kind] + (f" ({extra} more title words)" if extra else ""),
                   key, missing, overlap)


def _candidate(j: _Judged, verdict: str, reason: str | None = None) -> Candidate:
    return Candidate(**j.doc.evidence(j.kind).model_dump(), verdict=verdict,
                     reason=reason or j.reason)


def choose(source: str, scope: DateRange | None, ranked: list[Document],
           neighbours: list[Document] | None = None,
           lag_days: int = PUBLICATION_LAG_DAYS,
           texts: Texts | None = None) -> Match:
    """The rules applied to `ranked` (the backend's candidates within the period window)
    and `neighbours` (its candidates for the same text without a window, used to refuse
    partial titles whose missing words other titles carry, and to name the nearest)."""
    texts = Texts() if texts is None else texts
    src = Source.parse(source)
    target = src.period or scope
    label = format_scope(target) if target else None
    seen: dict[str, _Judged] = {}
    for doc in [*ranked, *(neighbours or [])]:
        if doc.id not in seen:
            seen[doc.id] = _judge(doc, src, scope, lag_days, texts)
    others = {d.id: all_words(d.title) for d in [*ranked, *(neighbours or [])]}
    for j in seen.values():
        if j.kind == PARTIAL_TITLE:  # rivals: titles that share the words this one has too
            held = src.names - j.missing
            carriers = [seen[i].doc.title for i, t in others.items()
                        if i != j.doc.id and j.missing & t and held & t]
            if carriers:
                j.kind, j.reason = None, (f"title lacks {src.shown(j.missing)}, which other "
                                          f"titles carry ({carriers[0]!r}): another document")
    fitting = sorted((j for j in seen.values() if j.kind), key=lambda j: j.key)
    refused = sorted((j for j in seen.values() if not j.kind),
                     key=lambda j: (-j.overlap, period_rank(j.doc, target), recency(j.doc),
                                    j.doc.id))
    if not fitting:
        reason = _nothing(src, label, refused)
        if src.period and scope and (src.period[1] < scope[0] or src.period[0] > scope[1]):
            reason = (f"the source names {format_scope(src.period)}, outside its "
                      f"temporal_scope {format_scope(scope)}, and no document's title names "
                      f"the one with a period inside the other; {reason}")
        return Match(candidates=[_candidate(j, "rejected") for j in refused],
                     reason=reason, target=label)
    best, superseded = _latest_version(fitting[0], fitting[1:], src), None
    if best is not fitting[0]:
        superseded = fitting[0]
        fitting.remove(best)
        fitting.insert(0, best)
        best.reason += f"; it supersedes {superseded.doc.title!r}"
    core = _extra(best, src)
    tied = [j for j in fitting[1:] if j is not superseded
            and (j.key[0], j.key[2]) == (best.key[0], best.key[2])
            and (not core <= _extra(j, src)  # another company's, another kind of report
                 or (j.key[1] == best.key[1] and j.doc.period != best.doc.period
                     and (target is None or best.key[2] != 0)))]  # Q1 and Q3 for "2024"
    if tied:
        names = " and ".join(repr(j.doc.title) for j in [best, *tied[:2]])
        reason = (f"ambiguous: {names} fit equally well; name one of them by its full title "
                  "or URL")
        return Match(found=[Found(document=j.doc, confidence=j.kind) for j in fitting],
                     candidates=[_candidate(j, "fits") for j in fitting]
                     + [_candidate(j, "rejected") for j in refused],
                     reason=reason, outcome="ambiguous", target=label)
    reason = best.reason
    if len(fitting) > 1:
        reason += f"; {len(fitting) - 1} other document{'s' * (len(fitting) > 2)} fit less well"
    candidates = ([_candidate(best, "chosen", reason)]
                  + [_candidate(j, "fits", _behind(j, best)) for j in fitting[1:]]
                  + [_candidate(j, "rejected") for j in refused])
    return Match(found=[Found(document=j.doc, confidence=j.kind) for j in fitting],
                 candidates=candidates, reason=reason, outcome="found", target=label)


def _latest_version(best: _Judged, others: list[_Judged], src: Source) -> _Judged:
    """The document that supersedes `best`: the same title plus a word marking a revision
    ("(revised)", "Update", "Restated"), published later, fitting as well."""
    core = _extra(best, src)
    for j in others:
        added = _extra(j, src) - core
        if (j.key[0], j.key[2]) == (best.key[0], best.key[2]) and core <= _extra(j, src) \
                and added and added <= REVISION_WORDS \
                and (j.doc.date or "") > (best.doc.date or ""):
            return j
    return best


def _extra(j: _Judged, src: Source) -> set[str]:
    return set(name_words(j.doc.title)) - src.names


def _behind(j: _Judged, best: _Judged) -> str:
    fields = ("match kind", "extra title words", "period distance", "period recency",
              "source type", "publication date", "id")
    for name, a, b in zip(fields, j.key, best.key):
        if a != b:
            return f"{j.reason}; ranked below the chosen document on {name}"
    return j.reason


def _nothing(src: Source, label: str | None, refused: list[_Judged]) -> str:
    period = f" (period {label})" if label else ""
    if not refused:
        return f"no document in the store shares a word with {src.text!r}{period}"
    closest = "; ".join(
        f"{j.doc.title!r} (period {j.doc.period or 'none'}, published {j.doc.date or 'undated'})"
        f": {j.reason}" for j in refused[:NEAREST])
    return f"no document fits {src.text!r}{period}; closest: {closest}"


def with_documents(match: Match, read: Callable[[list[str]], dict[str, Document]]) -> Match:
    """`match` with its found documents whole, as `read(ids)` gives them, for a backend
    whose candidates came without their contents (one gone meanwhile is left out)."""
    if not match.found:
        return match
    whole = read([f.document.id for f in match.found])
    return match.model_copy(update={"found": [
        Found(document=whole[f.document.id], confidence=f.confidence)
        for f in match.found if f.document.id in whole]})


Candidates = Callable[[str, Window | None, int], list[Document]]
"""`candidates(text, window, limit)`: a backend's documents for a GET text, best first."""


def find(candidates: Candidates, source: str, scope: DateRange | None = None,
         lag_days: int = PUBLICATION_LAG_DAYS, exact: Candidates | None = None,
         holds: Holds | None = None) -> Match:
    """The rules applied to a backend's candidates for `source` (within the period the
    source names, or `scope`), and, when the choice needs them, its unwindowed ones.

    `exact(text, window, limit)`, when a backend has a cheap one, gives the documents
    whose title or URL is exactly the source: when one of them fits, nothing can beat
    it (the whole title, no extra word) but another of the same title, so the ranked
    search is skipped. `holds(doc_id, stems)`, for candidates given without their
    contents, tells whether a document's text holds the words its title lacks."""
    src = Source.parse(source)
    # the backend filters on one window (a period the source names is the narrower
    # constraint: the document must be about exactly it); the rules then check both
    window = window_for(src.period, lag_days) or window_for(scope, lag_days)
    texts = Texts(holds)
    if exact is not None and (same := exact(source, window, CANDIDATES)):
        match = choose(source, scope, same, None, lag_days, texts)
        if match.outcome == "found" and match.found[0].confidence != PARTIAL_TITLE:
            return match
    ranked = candidates(source, window, CANDIDATES)
    match = choose(source, scope, ranked, None, lag_days, texts)
    if match.outcome == "found" and match.found[0].confidence != PARTIAL_TITLE:
        return match
    neighbours = candidates(source, None, CANDIDATES)
    return choose(source, scope, ranked, neighbours, lag_days, texts)
