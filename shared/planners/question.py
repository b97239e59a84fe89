"""Reading a plain question for the heuristic planner: consumes the question text,
produces a `Question` — the period it names, the names it gives (the entity: a
company, an agency, a county), its content words, and the kind of value it asks for.

Nothing here knows any measure: what the question asks about is whatever content words
remain once the names, the period and the question's own scaffolding ("what was",
"how many", "report", "did") are gone; `Question.measure(title)` also drops the words
the chosen document's title already holds (its company and kind).

Names are the capitalized words of the question (a question is a sentence, so a
capital inside it marks a name), in runs ("&" continues one: `Johnson & Johnson`):
"When does Ingrid Solberg's appointment as Halvorsen Marine's CFO take effect?" names
`ingrid solberg` and `halvorsen marine`. A run that titles in the store use (a company,
an agency) must be whole in the document's title; one they do not (a person) must be in
its text. Companies written otherwise (`3M`, `AT&T`, `eBay`, `IBM`) are `marks`: each
is a name only where some title in the store uses it, so an acronym like CFO or EBITDA
never has to be in a title. Chinese questions have no capitals; the document's title
tells their names apart instead (see `Question.names_in`).

Periods are each period the question names, in order (`FY2021 and FY2022` is two
periods, which the table path reads one by one; `period` is their span, which only one
document about both would fit). A period is never an identifier: `FY2018` is the year,
not a code the document must hold.

`not_figure` holds the words that make the answer something other than a figure (which,
why, describe, "what are the types of", "how is … calculated", a yes/no question): such
a question is never answered with a figure.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import regex

from shared.search.dates import DateRange
from shared.search.periods import find_dates, find_periods, without_periods
from shared.search.terms import STOPWORDS, all_words, stem, words
from shared.tables.periods import MONTH
from shared.tools.line_items import line_items

SCAFFOLDING = frozenset(stem(w) for w in """
what which who whom whose when where why how much many did does do was were is are be has
have had report reported reports record recorded post posted announce announced state
stated say said give gave disclose disclosed reach reached end ended according show tell
list please company company's its per set sets make made get got take took achieve achieved
多 少 什 么 哪 几 是 的 为 了 吗 呢 请 问
""".split())
"""Words that shape a question without saying what it asks about."""

ASKS = (
    ("date", regex.compile(r"\b(?:when|what\s+date|which\s+date|what\s+day|by\s+when|deadline)\b"
                           r"|何时|什么时候|哪天|截止", regex.I)),
    ("percent", regex.compile(r"\b(?:percent|percentage)\b|%|百分之|百分比", regex.I)),
    ("money", regex.compile(r"\bhow\s+much\b|多少钱", regex.I)),
    ("number", regex.compile(r"\bhow\s+many\b|\bnumber\s+of\b|多少(?:人|个|家|辆|艘|台|次)|几", regex.I)),
)
"""The kind of value a question asks for when its wording says so; else any kind
(`money` admits plain numbers too: "how much revenue" may be stated without a symbol)."""

PERSON_RE = regex.compile(r"^\s*(?:who|whom|whose)\b|谁", regex.I)
"""Questions whose answer is a sentence (a person), not a value."""

_RELATIVE = regex.compile(r"\b(?:originally|initially|first)\s+(?:report|publish|state|announc)\w*|"
                          r"\bbefore\s+the\s+(?:restatement|revision|correction|update)\b|"
                          r"\b(?:a\s+)?(?:year|quarter|month|season)s?\s+(?:earlier|before|"
                          r"ago|later|after)\b|\b(?:previous|prior|preceding|following|next|last)\s+"
                          r"(?:year|quarter|month|season|period)\b(?!\s+of\s+(?:the\s+)?"
                          r"(?:fiscal(?:\s+year)?\s+|FY\s*)?\d)|上年|去年|上一年|上季度", regex.I)
_PER_PERIOD = regex.compile(r"[YQMH]o[YQMH]")
"""`YoY`, `QoQ`, `MoM`: a change over the period before, no company's name."""
_IDENTIFIER = regex.compile(r"\b[A-Za-z]+-\d+[A-Za-z]?\b|\b[A-Z]{2,}\d+[A-Z]?\b")
_MARK = regex.compile(r"(?<![\w&])(?:[A-Z]{1,6}(?:&[A-Z]{1,6})+|\d+[A-Z][A-Za-z]*|[a-z]+[A-Z][A-Za-z]*"
                      r"|[A-Z]{2,6})(?![\w&])")
"""A company as written without an initial capital word: `AT&T`, `PG&E`, `3M`, `eBay`, `IBM`."""
_FUNCTION_WORDS = ("of|for|in|on|at|to|by|with|from|under|within|between|over|into|per|as|"
                   "across|among|after|before|during|and|or|but|that|which|who|whose|where|"
                   "when|why|how|the|a|an|is|are|was|were|be|been|does|do|did|has|have|had|"
                   "it|its|this|these|those|we|they|our|their|you|your|i|there|here|each|"
                   "all|both|any|some|such|than|then|so|not|no|sold|made|paid|held|built|"
                   "bought|kept|won|lost|given|taken|done|known|grown|shown|spent|sent|"
                   "brought|found|led|met|run|set|put|cut")
"""Words after a list word that leave it the head of the phrase ("the products of", "the
services the company sells", "the products sold"); a noun there makes it a line item's
first word ("the equity method investments", "the stock basis in subsidiary")."""
NOT_FIGURE = regex.compile(
    r"^\s*(?:(?:in|for|at|from|of|during|to|by|on)\s+)?(?:which|why|who|whom|whose|where)\b"
    r"|\bwhich\s+(?:years?|quarters?|months?|periods?|segments?|regions?|countries|country|"
    r"categor(?:y|ies)|ones?)\b"
    r"|^\s*(?:is|are|was|were|does|do|did|has|have|had|can|could|will|would|should)\b"
    r"|\b(?:describe|explain|list|name|identify|summari[sz]e|elaborate)\b"
    r"|\b(?:what\s+(?P<verb>is|are|was|were)|(?:give|tell|show|find|provide|state|report|get)"
    r"(?:\s+(?:me|us))?)\s+(?:the\s+)?(?:(?!of\b|in\b|"
    r"(?:average|mean|change|increase|decrease|total|sum|difference|growth)\b)"
    r"\w+(?:'s|’s)?\s+){0,2}?(?P<listed>reasons?|"
    r"purposes?|nature|types?|kinds?|sorts?|methods?|basis|bases|polic(?:y|ies)|components|"
    r"factors|regions|segments|countries|markets|items|elements|categories|definition|meaning|"
    r"names?|titles?|drivers|causes|risks|assumptions|approach|objectives?|strateg(?:y|ies)|"
    r"products|services|brands|locations|sources|conditions|criteria|principles|treatment|"
    r"role|status)\b(?![-\w])(?!\s+(?:gross|net|operating|total|revenues?|sales|margins?|"
    r"income|profits?|costs?|expenses?|cash)\b)(?!\s+(?!(?:" + _FUNCTION_WORDS + r")\b)"
    r"(?-i:[a-z]+)(?<!ed|ing)\b(?![-'’]))(?!\s+(?:as\s+(?:of|at)|at|in|for|during)\s+"
    r"(?:(?:the\s+)?(?:fiscal\s+)?(?:year|quarter)s?\s+(?:ended|ending|(?:19|20)\d\d)\b|"
    r"FY\s?\d|(?:fiscal\s+(?:year\s+)?)?(?:19|20)\d\d\b|"
    rf"{MONTH}\.?\s+\d|\d{{1,2}}\s+{MONTH}\b))"
    r"|\bwhat\s+(?:does|do|did)\b.*\b(?:mean|represent|comprise|include|consist|relate|refer|"
    r"involve|cover|contain|do|offer|provide|sell|make|reflect|indicate|show)\b"
    r"|\bwhat\s+(?:happened|caused|led|drove|resulted|contributed|accounted)\b"
    r"|\b(?:due|attribut(?:ed|able)|owing|contribut(?:ed|ing))\s+to\s*(?=[,?？]|$)"
    r"|\b(?:caused|driven|offset|explained|affected|impacted|used)\s+(?:by|for)\s*(?=[,?？]|$)"
    r"|\bhow\s+(?:did|does|do|has|have)\b.*\b(?:change|changed|perform|compare|trend|move|"
    r"evolve)\b"
    r"|\b(?:as|to|by|for|under|within|into|with|in|on)\s*(?=[,?？]\s*(?:according\b|$)|$)"
    r"|\bhow\s+(?:is|are|was|were|does|do|did)\b.*\b(?:derived|calculated|computed|determined|"
    r"measured|defined|recogni[sz]ed|accounted|estimated|classified|presented|allocated|"
    r"assessed|valued|funded|treated|managed|organi[sz]ed|made\s+up)\b"
    r"|(?<!\b(?:percent(?:age)?|proportion|share|fraction|ratio|much|many)\b.*)"
    r"\b(?:comprised|composed|made\s+up)\s+of\b"
    r"|\bhow\s+(?:long|often)\b"
    r"|\bwhat\s+(?:is|are|was|were)\s+(?:the\s+)?(?:(?!of\b)\w+\s+){0,2}?(?:fiscal\s+)?"
    r"(?:year|date)s?\s+(?:of|when|in\s+which|on\s+which)\b"
    r"|\bwhat\s+(?:fiscal\s+)?year\b(?![-\w])(?!\s+(?:end|ended|ending|to)\b)", regex.I)
"""Wordings whose answer is not a figure: which/why/who/where (or "…, which year had"
anywhere), a yes/no question, what
a thing's types, regions, reasons or components are, how a figure is calculated, what a
change is due to or driven by, how a figure changed, a question that ends on a
preposition ("… recognized as?": the answer completes the sentence), what year or date
something is ("the last fiscal year of expiration")."""
_DEFINITION = regex.compile(r"^\s*(?i:what\s+(?:is|are)\s+(?!the\b|a\b|an\b|its\b|their\b|our\b))"
                            r"(?=[A-Z])[\w\s&'’-]+?(?:,|\?|$)")
"""What a named thing is ("What is Trade receivables?", "What are OEM?"), asked for no
period: a definition, not a figure."""
_COUNTED = regex.compile(r"\bhow\s+many\s+((?:[^\W\d_]+\s*){1,4})", regex.I)
_TOKEN = regex.compile(r"[\p{Han}\p{Hiragana}\p{Katakana}]|(?:(?![\p{Han}\p{Hiragana}\p{Katakana}])[^\W_])+")
_CJK = regex.compile(r"[\p{Han}\p{Hiragana}\p{Katakana}]+")


def _a_line_item(m: regex.Match, dated: bool) -> bool:
    """Whether a list word `m` found ("products", "items") is a line item's in a question
    of a period: asked with "is" or "was" of a plural, as a table's label is copied ("What
    was the products and licensing costs in 2018", "the other items(1) in 2019"), where a
    question for the list says "were" ("What were the products offered in 2018")."""
    listed = (m["listed"] or "").lower()
    return dated and listed.endswith("s") and listed not in ("basis", "status") and \
        (m["verb"] or "").lower() in ("is", "was")


@dataclass(frozen=True)
class Question:
    text: str
    period: DateRange | None
    """The one period the question names (several: their span; none: None)."""
    names: frozenset[str]
    """Stemmed capitalized words: the entity, which the document's title must hold."""
    groups: tuple[frozenset[str], ...]
    """The names in runs of adjacent capitalized words ("Halvorsen Marine")."""
    content: frozenset[str]
    """Stemmed words that are neither period, stopword nor scaffolding."""
    kind: str | None
    """`date`, `percent`, `money`, `number` when the wording asks for one; else None."""
    wants_sentence: bool
    """A who-question: the answer is the sentence that names the person."""
    surface: tuple[tuple[str, str], ...] = ()
    """(stem, word as written) for every word of the question, in order, for messages."""
    relative: str | None = None
    """The words that name the period, or the version, relative to another ("a year
    earlier than", "originally reported"), which the planner does not resolve."""
    identifiers: frozenset[str] = frozenset()
    """Codes the question names ("KESTREL-2", "KX-200"), which the document must hold."""
    counted: frozenset[str] = frozenset()
    """What a how-many question counts ("How many TEU did …" -> `teu`, "how many housing
    starts were …" -> `housing`, `starts`): a figure written right before one of these
    words ("1.42 million TEU") states the answer whatever the verb."""
    periods: tuple[DateRange, ...] = ()
    """Every period the question names, in order of first mention."""
    marks: frozenset[str] = frozenset()
    """Companies written without an initial capital word (`3m`, `at&t`, `ebay`, `ibm`),
    lower-cased: names where the words of some title in the store hold them."""
    not_figure: str | None = None
    """The words that make the answer something other than a figure, if any."""

    def shown(self, stems: frozenset[str] | set[str]) -> str:
        """`stems` as the question writes them, in its order ("operating margin")."""
        out = dict.fromkeys(word for s, word in self.surface if s in stems)
        return " ".join(out) or " ".join(sorted(stems))

    @classmethod
    def read(cls, text: str) -> Question:
        text = asked_part(text)
        periods = list(dict.fromkeys(m.period for m in find_periods(text)
                                     if not falls_due(text, m.start)))
        period = (min(p[0] for p in periods), max(p[1] for p in periods)) if periods else None
        rest = _without_dates(without_periods(text))
        groups: list[set[str]] = []
        run_end = -1
        tokens = list(_TOKEN.finditer(rest))
        for i, m in enumerate(tokens):
            token, low = m.group(), m.group().lower()
            if not token[0].isupper() or token.isupper() and len(token) > 1 or len(token) == 1 \
                    or _PER_PERIOD.fullmatch(token):
                continue  # lower case, an acronym (CFO, EV, YoY) or a letter (A&E): not a name
            if low in STOPWORDS or stem(low) in SCAFFOLDING:
                continue
            if _SENTENCE_START.search(rest[:m.start()]) and not _named_start(rest, tokens, i):
                continue  # "Thanks.", "Please tell me:": capitalized as a sentence's first word
            if groups and rest[run_end:m.start()].strip() in ("", "&"):
                groups[-1].add(stem(low))
            else:
                groups.append({stem(low)})
            run_end = m.end()
        names = set().union(*groups) if groups else set()
        content = {stem(w) for w in words(rest)
                   if w not in STOPWORDS and stem(w) not in SCAFFOLDING
                   and not (len(w) == 1 and w.isascii() and not w.isdigit())}
        kind = next((k for k, pattern in ASKS if pattern.search(text)), None)
        surface = tuple((stem(m.group().lower()), m.group()) for m in _TOKEN.finditer(rest))
        counted = set()
        if m := _COUNTED.search(rest):
            for word in regex.findall(r"[^\W\d_]+", m.group(1)):
                if word.lower() in STOPWORDS or stem(word.lower()) in SCAFFOLDING:
                    break
                counted.add(stem(word.lower()))
        relative = _RELATIVE.search(text)
        identifiers = {m.group().lower() for m in _IDENTIFIER.finditer(rest)}
        marks = {m.group().lower() for m in _MARK.finditer(rest)}
        dated = bool(periods or find_dates(text))
        not_figure = next((m for m in NOT_FIGURE.finditer(text) if not _a_line_item(m, dated)),
                          None) or (None if dated else _DEFINITION.search(text))
        return cls(text, period, frozenset(names), tuple(frozenset(g) for g in groups),
                   frozenset(content), kind, bool(PERSON_RE.search(text)), surface,
                   relative.group() if relative else None, frozenset(identifiers),
                   frozenset(counted), tuple(periods), frozenset(marks),
                   not_figure.group().strip() if not_figure else None)

    def names_in(self, title: str, content: str, titled: set[str]) -> bool:
        """Whether a document of `title` and `content` is about the question's names:
        each run of names that some title in the store uses (`titled`: their words) is
        whole in `title`, the others are in `content`. A question without capitals (or
        in Chinese) needs the title's first two name characters, or two of its words, or
        the title's first word where no line item uses it ("what was acme's revenue" of
        "ACME Corp. Annual Report 2023": written in lower case, the company is still the
        word its titles begin with)."""
        if self.identifiers and not all(i in f"{title} {content}".lower()
                                        for i in self.identifiers):
            return False  # "KESTREL-2" is not "Phase 2"
        title_words = all_words(title)
        known = [m for m in self.marks if all_words(m) <= titled]  # stemmed, as `titled`
        if any(not _holds_mark(title, m) for m in known):
            return False  # "3M" names a company the store's titles know: this is not it
        head = _CJK.match(without_periods(title).strip())
        if head and len(head.group()) >= 2 and head.group()[:2] in self.text:
            return True
        if not self.groups:
            return (bool(known) or len(self.content & title_words) >= 2
                    or _lead_name(title) in self.content)
        # no run of names the titles use: those runs name the document, unless a company
        # written as a mark does ("NVIDIA's Data Center revenue": Data Center is in its text)
        in_titles = [g for g in self.groups if g & titled] or ([] if known else list(self.groups))
        if not all(g <= title_words for g in in_titles):
            return False
        others = [g - title_words for g in self.groups if g not in in_titles]
        if not any(others):
            return True
        text_words = all_words(content)
        return all(g <= text_words for g in others)

    def measure(self, title: str) -> frozenset[str]:
        """The words the question asks about, given the document `title`: its content
        words without the names and without what the title says (its company, its
        kind), unless that would leave nothing."""
        core = self.content - self.names
        beyond = core - all_words(title)
        return frozenset(beyond or core)


ABBREVIATED = (r"(?<!\b\p{Lu}\.)"
               r"(?<!\b(?:Inc|Co|Corp|Ltd|Bros|No|Nos|vs|approx|incl|excl|Jr|Sr|St)\.)")
"""Not after an abbreviation's stop: `U.S.`, `Co.`, `No.` end no sentence (`Free cash flow
(non-U.S. GAAP measure)`)."""
_SENTENCE_BREAK = regex.compile(rf"(?<=[.!?。！？]){ABBREVIATED}\s+|(?<=[。！？])")
_LEAD_IN = regex.compile(r"^(?![^:：]*\b(?:what|how|which|who|whom|whose|when|where|why)\b)"
                         r"[^:：]*[:：]\s*(?=\S)", regex.I)
"""What comes before the question ("Kindly answer: …"); not the question's own words up to
a colon in a row's name ("What was X as a percentage of less: valuation allowance")."""


_DUE = regex.compile(r"\b(?:due|(?:matur|expir)(?:es|ing)(?:\s+in)?)\s+$", regex.I)
"""What names a debt or a contract by when it falls due ("4.875% Senior Notes due December
2022", "Term Loan A Facility due July 2022", "notes maturing in 2025"): that date is the
item's name, not a period asked. Not "due in 2018" ("amounts not currently due in 2018"),
which asks for 2018."""


def falls_due(text: str, start: int) -> bool:
    """Whether the period or date at `start` in `text` is when an item falls due."""
    return bool(_DUE.search(text, 0, start))


def asked_part(text: str) -> str:
    """The question itself, without what surrounds it: the sentence that ends in "?"
    (not "Thanks." after it) and, in it, what follows a lead-in ("Kindly answer: …")."""
    sentences = [p.strip() for p in _SENTENCE_BREAK.split(text) if p.strip()]
    part = next((p for p in sentences if p.endswith(("?", "？"))), text.strip())
    return _LEAD_IN.sub("", part) or part


_SENTENCE_START = regex.compile(r"(?:^|[.?!:;。？！：；]\s*|\n\s*)$")


def _named_start(text: str, tokens: list, i: int) -> bool:
    """A sentence's first word is a name only when written as one: with a possessive
    ("Tesla's …") or followed by another capitalized word ("Halvorsen Marine …")."""
    m = tokens[i]
    if text[m.end():m.end() + 1] in ("'", "’"):
        return True
    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
    return bool(nxt and nxt.group()[0].isupper() and text[m.end():nxt.start()].strip() == "")



def _without_dates(text: str) -> str:
    """`text` without the days it names ("at September 30, 2019": a column, not a name)."""
    for _, start, end in reversed(find_dates(text)):
        text = text[:start] + " " + text[end:]
    return text


def _lead_name(title: str) -> str | None:
    """The stem of the word `title` begins with (after "The") when it is written as a
    name — capitalized, or a number run into letters (`3M`) — and is no word of the
    domain library's line items (a title "Revenue Holdings 10-K" names no company a
    question's "revenue" asks about) nor of a document's kind ("Annual report …");
    else None."""
    m = _TITLE_LEAD.match(title)
    word = m["word"].lower() if m else ""
    if not word or word in _DOCUMENT_WORDS or stem(word) in _item_words():
        return None
    return stem(word)


_TITLE_LEAD = regex.compile(r"\s*(?:(?i:the)\s+)?(?P<word>\p{Lu}[\w&]*|\d+\p{L}[\w&]*)")
_DOCUMENT_WORDS = frozenset("""annual quarterly interim form fiscal consolidated financial
report reports statement statements proxy prospectus""".split())


@functools.cache
def _item_words() -> frozenset[str]:
    """The stems of every word of every name the domain library gives a line item."""
    return frozenset().union(*(all_words(name) for item in line_items()
                               for name in item.names))


def _holds_mark(title: str, mark: str) -> bool:
    """Whether `title` writes the company `mark` (`at&t`, `3m`) as a word of its own."""
    return bool(regex.search(rf"(?<![\w&]){regex.escape(mark)}(?![\w&])", title, regex.I))
