"""The heuristic planner, used when no LLM is configured: consumes a question and a
search backend, produces a two-step Plan (GET the document → EXTRACT the value that
answers the question), or raises NoAnswer saying what was not found and which
documents came closest. It never plans a value it cannot support.

1. The question is read (shared/planners/question.py): its period, its names (the entity),
   what it asks about, and the kind of value its wording asks for.
2. Candidate documents come from the search store within the question's period window;
   a document is eligible when its title holds the question's names and it is about
   exactly the period asked (the GET rules of shared/search/matching.py: Q3 2024 is not
   2024; a document without a period counts by publication date).
3. Each eligible document is read (shared/planners/reading.py): a sentence holding the words
   asked about, and in it the reported figure — not an expectation, a baseline, a
   change or another period's figure.
4. Of the documents that gave a reading, official sources beat news and news beats
   summaries (drafts, previews, analysts' notes and plans never answer: they are listed
   among the nearest), then the title with the fewest words beyond the question's
   ("Port of Kallby" before "Port of Kallby North"), then the stronger reading. The plan's GET names that document by title (checked to fetch exactly it)
   and its EXTRACT pattern is checked to capture exactly that value.
The answer states the value, the document, its period and publication date, and how
sure the reading is (`high` or `medium`, and why).
"""

from __future__ import annotations

from collections.abc import Iterable

import regex

from shared.errors import InputError, NoAnswer
from shared.models import Answer, ExtractStep, GetStep, Plan
from shared.models.table import Table
from shared.search import Document, SearchBackend, format_scope
from shared.search.fit import period_fits, window_for
from shared.search.matching import CANDIDATES, REVISION, REVISION_WORDS
from shared.search.terms import all_words, name_words, stem
from shared.search.periods import without_periods
from shared.tables.periods import columns_for as table_columns

from .anchor import sentence_pattern, value_pattern
from .metric import Refusal, read_metric
from .question import Question
from .reading import GROWTH_WORDS, Ask, Reading, read_sentence, read_value
from .sources import NOTE, PROVISIONAL_RANK, cited, get_step, period_and_date, source_rank
from .table_plan import table_plan

NEAREST = 4
"""Documents an abstention lists."""


def heuristic_plan(question: str, backend: SearchBackend, columns_for=None) -> Plan:
    """A plan answering `question` from the documents that support it: by table cells
    when the documents it names have tables (GET → EXTRACT by row → COMPUTE), else by a
    sentence (GET → EXTRACT by pattern); NoAnswer when none does, InputError when the
    question has nothing to search. `columns_for(table, period, kind)` finds a period's
    columns (default: the table reader's, shared/tables/periods.py)."""
    q = Question.read(question)
    if not q.content:
        raise InputError(f"question {question!r} has no words to search for; ask about a "
                         "named thing")
    text = without_periods(question)
    named = _named(q, backend.candidates(text, None, CANDIDATES))
    tables = {d.id: backend.tables(d.id) for d in named}
    with_tables = [d for d in named if tables[d.id]]
    if q.relative and not _row_says(q.relative, tables.values()):
        raise NoAnswer(f"not answered: the question names its period relative to another "
                       f"({q.relative!r}); ask about the period itself (\"in Q2 2023\")")
    if not with_tables:
        return _sentence_plan(q, text, backend)
    nearest = [f"{d.title!r} ({period_and_date(d)})" for d in with_tables[:NEAREST]]
    if q.not_figure or q.kind == "date":
        asks = q.not_figure or "when"
        raise NoAnswer(f"not answered: the question asks {asks!r}: its answer is not a figure, "
                       "and in documents with tables (filings, reports) the heuristic planner "
                       "reads only figures from their tables; plan the question with an LLM",
                       nearest)
    metric = read_metric(question)
    if isinstance(metric, Refusal):
        raise NoAnswer(f"not answered: the heuristic planner reads figures from tables for "
                       f"questions it can read as line items and arithmetic, and {metric.why}",
                       nearest)
    return table_plan(metric, named, backend, columns_for or table_columns)


def _row_says(words: str, tables: Iterable[list[Table]]) -> bool:
    """Whether a row of `tables` (each document's) is labelled with `words` ("Additions
    based on tax positions taken during a prior period"): there they name a line item,
    not a period relative to another."""
    said = " ".join(words.lower().split())
    return any(said in " ".join(row.label.lower().split())
               for found in tables for table in found for row in table.rows)


def _named(q: Question, docs: list[Document]) -> list[Document]:
    """The documents among `docs` that are about the question's names."""
    titled = set().union(*(all_words(d.title) for d in docs))
    return [d for d in docs if q.names_in(d.title, d.content, titled)]


def _sentence_plan(q: Question, text: str, backend: SearchBackend) -> Plan:
    """GET → EXTRACT by pattern: the value (or, for a question whose answer is not a
    figure, the sentence) one document states."""
    if q.content & EXPECTATIONS:
        raise NoAnswer("not answered: the question asks for an expectation or a forecast; the "
                       "heuristic planner answers only with figures documents report (plan the "
                       "question with an LLM, or give a plan that reads the preview)")
    lag = backend.lag_days
    docs = backend.candidates(text, window_for(q.period, lag), CANDIDATES)
    # the words titles use tell a company (in titles) from a person (only in text); a
    # company whose titles all lie outside the window is then required whole in the title
    titled = set().union(*(all_words(d.title) for d in docs))
    readings, refused = _readings(q, docs, lag, titled)
    if not readings:
        others = backend.candidates(text, None, CANDIDATES) if q.period is not None else []
        if not docs and not others and backend.count() == 0:
            raise InputError("no document matches the question: the search store is empty; "
                             "index documents with `chordal index FILE.jsonl` or configure an "
                             "LLM planner")
        seen = {d.id for d, _ in refused}  # documents of other periods come closest too
        refused += [r for r in _readings(q, others, lag, titled)[1] if r[0].id not in seen]
        raise _abstain(q, refused, titled)
    ranked = sorted(readings, key=lambda r: _rank(q, *r))
    doc, reading = ranked[0]
    if (rival := _disagreeing(q, ranked)) is not None:
        other, theirs = rival
        raise NoAnswer(
            f"not answered: the documents disagree: {doc.title!r} states {reading.value} and "
            f"{other.title!r} states {theirs.value} for what was asked; name the company or "
            "the document more exactly", [f"{d.title!r} ({period_and_date(d)}): states "
                                         f"{r.value}" for d, r in (ranked[0], rival)])
    get, content = get_step(doc, backend)
    return _plan(q, doc, get, content, reading)


def _readings(q: Question, docs: list[Document], lag: int, titled: set[str]):
    """(doc, Reading or sentence span) for each document that answers; (doc, why) for
    each that does not. `titled`: the words of the candidates' titles."""
    found, refused = [], []
    for doc in docs:
        if not q.names_in(doc.title, doc.content, titled):
            refused.append((doc, f"not about {q.shown(q.names) or 'the names asked about'}"))
            continue
        if q.period is not None and (why := period_fits(doc, q.period, None, lag)):
            refused.append((doc, why.replace("the source names", "the question asks about")))
            continue
        if source_rank(doc) == PROVISIONAL_RANK:
            refused.append((doc, f"provisional ({doc.source_type or 'marked so in its title'}): "
                                 "a draft, preview, plan or forecast does not answer for the "
                                 "final figure"))
            continue
        measure = q.measure(doc.title)
        if q.wants_sentence or q.not_figure:
            reading = read_sentence(doc.content, measure)
        else:
            title = frozenset(all_words(doc.title))
            kind = None if q.kind == "money" and GROWTH_WORDS & measure else q.kind  # "how much did it rise"
            ask = Ask(measure, kind, q.period, q.text, q.groups, title, q.counted,
                      anchors=tuple(g for g in q.groups if not g <= title),
                      period_in_sentence=q.period is not None and doc.period is None)
            reading = read_value(doc.content, ask)
            if reading is None and q.kind is None:  # nothing numeric: the sentence itself
                reading = (read_sentence(doc.content, measure, without_values=True)
                           if _describes(q, doc) else None)
        if reading is None:
            refused.append((doc, f"no sentence states {q.shown(measure) or 'it'}"
                                 + (f" as a {q.kind}" if q.kind else "")))
        else:
            found.append((doc, reading))
    return found, refused


def _describes(q: Question, doc: Document) -> bool:
    """A sentence answers only what-questions about something beyond the title's words
    (otherwise the best sentence is the title again)."""
    return bool(q.content - q.names - all_words(doc.title))


def _rank(q: Question, doc: Document, reading) -> tuple:
    strong = isinstance(reading, Reading) and reading.strong
    coverage = reading.coverage if isinstance(reading, Reading) else 1.0
    overlap = len(q.content & all_words(doc.title))
    # "Port of Kallby North" vs "… Kallby"; "(revised)" marks a later version, not an entity
    extra = len(set(name_words(doc.title)) - q.content - REVISION_WORDS)
    revised = bool(REVISION.search(doc.title))
    published = int(doc.date.replace("-", "")) if doc.date else 0
    return (source_rank(doc), extra, not revised, not strong, -coverage, -overlap, -published,
            doc.id)


EXPECTATIONS = frozenset(stem(w) for w in """expect expected expectation expectations forecast
forecasts forecasted predict predicted prediction consensus guidance projected projection
anticipate anticipated 预计 预期 预测""".split())
"""Question words that ask for an expectation rather than a reported figure."""
REVISED = regex.compile(r"\b(?:revis|restat|correct|amend|updat|expand|supersed)\w*", regex.I)
"""Words that mark a figure as replacing an earlier one."""


def _disagreeing(q: Question, ranked: list) -> tuple | None:
    """A document as trusted as the chosen one that states another figure for the
    question, unless it is about a more specific entity (its title adds words to the
    chosen one's: "Port of Kallby North" beside "Port of Kallby") and does not say it
    revises the figure."""
    best, reading = ranked[0]
    if not isinstance(reading, Reading):
        return None
    extra = set(name_words(best.title)) - q.content - REVISION_WORDS
    for doc, theirs in ranked[1:]:
        if not isinstance(theirs, Reading) or source_rank(doc) != source_rank(best):
            continue
        if theirs.value == reading.value or theirs.kind != reading.kind:
            continue
        sentence = doc.content[theirs.sentence[0]:theirs.sentence[1]]
        revises = bool(REVISED.search(sentence) or REVISED.search(doc.title))
        theirs_extra = set(name_words(doc.title)) - q.content - REVISION_WORDS
        if REVISION.search(best.title) and theirs_extra == extra \
                and (best.date or "") > (doc.date or ""):
            continue  # the chosen document is the later version of this one
        if extra <= theirs_extra and not revises:
            continue
        return doc, theirs
    return None


def _plan(q: Question, doc: Document, get: GetStep, content: str, reading) -> Plan:
    source = f"according to {cited(doc.title)} ({period_and_date(doc)})"
    if isinstance(reading, Reading):
        pattern = value_pattern(content, reading.start, reading.end, reading.kind,
                                reading.sentence)
        if pattern is None:
            raise NoAnswer(f"{reading.value!r} answers the question but no pattern captures "
                           f"it alone in {doc.title!r}")
        extract = ExtractStep(id="E2", operation="EXTRACT", source="$DOC", pattern=pattern,
                              output_var="$VALUE")
        answer = f"{{{{ VALUE }}}}, {source}. {_confidence(q, doc, reading)} {NOTE}"
        return Plan(steps=[get, extract], answer=answer, planner="heuristic")
    start, end = reading
    extract = ExtractStep(id="E2", operation="EXTRACT", source="$DOC",
                          pattern=sentence_pattern(content, start, end), output_var="$SENTENCE")
    answer = (f"{cited(doc.title)} ({period_and_date(doc)}) says: {{{{ SENTENCE }}}} "
              f"Confidence: medium: the sentence holds the words asked about. {NOTE}")
    return Plan(steps=[get, extract], answer=answer, planner="heuristic")


def _confidence(q: Question, doc: Document, reading: Reading) -> str:
    """How sure the reading is, and why, as one sentence of the answer."""
    who = q.shown(q.names) if q.names else ""
    when = format_scope(q.period) if q.period else ""
    about = f"{who} in {when}" if who and when else who or when
    why = [f"the document is about {about}"] if about else []
    why.append("the sentence holds every word asked about" if reading.coverage == 1.0 else
               f"the sentence holds {reading.coverage:.0%} of the words asked about")
    if not reading.after_measure:
        why.append("the figure comes before those words, not after them")
    rank = source_rank(doc)
    if rank:
        why.append(f"the source is {'provisional' if rank == 3 else doc.source_type or 'of unknown kind'}, "
                   "not an official report")
    level = "high" if reading.strong and rank == 0 else "medium"
    return f"Confidence: {level}: " + "; ".join(why) + "."


def _abstain(q: Question, refused: list[tuple[Document, str]], titled: set[str]) -> NoAnswer:
    """The NoAnswer for a question no document supports: what is missing, and the
    nearest documents (the question's names first) with why each does not answer."""
    asked = q.shown(q.content - q.names) or "what was asked"
    who = q.shown(q.names)
    period = f" for {format_scope(q.period)}" if q.period else ""
    message = (f"not found: no indexed document{' about ' + who if who else ''}{period} "
               f"states {asked}; nothing is answered rather than a figure the documents "
               "do not support")
    if not refused:
        message += ("; no indexed document shares a word with the question: index the "
                    "documents that answer it with `chordal index FILE.jsonl`")
    ordered = sorted(refused, key=lambda r: not q.names_in(r[0].title, r[0].content, titled))
    nearest = [f"{d.title!r} ({period_and_date(d)}): {why}" for d, why in ordered[:NEAREST]]
    return NoAnswer(message, nearest)


def abstention(exc: NoAnswer) -> Answer:
    """The answer a query gets when the heuristic planner abstains: incomplete, saying
    what was not found and which documents came closest."""
    lines = [f"Not found. {exc.message[0].upper()}{exc.message[1:]}."]
    if exc.nearest:
        lines.append("Nearest documents:")
        lines += [f"- {n}" for n in exc.nearest]
    lines.append(NOTE)
    return Answer(text="\n".join(lines), missing=[exc.message], complete=False)
