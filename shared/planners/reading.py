"""Reading a value from a document for the heuristic planner: consumes a document's
text, the words a question asks about (its measure), the kind of value asked for and
the period asked about; produces a `Reading` — the value, where it sits and how sure
the reading is — or None when no sentence clears the threshold.

The threshold: a sentence must hold every measure word (at least two thirds of them
when there are more than two). In that sentence the value is the first one after the
tightest run of measure words (else the nearest before it), skipping values that are
not the figure itself:
- hedged: an expectation, forecast, target or guidance ("analysts expect 18.1%",
  "the 92% target"), within a few words of the value;
- a baseline: what the figure is compared with ("up from 16.3%", "9.8% a year
  earlier", "上年同期为21.4%");
- about another period: the clause around the value names a period other than the
  question's ("9.8% in 2023" for a 2024 question);
- about a part of it or a neighbour named without its year ("first-quarter growth was
  0.2%" for a Q2 question, "in the fourth quarter" for a full-year one);
- about another entity: the clause names a sibling of the question's entity ("acute bed
  occupancy at Ashgrove Valley Hospitals Trust" in a report of Ashgrove Community
  Health Trust), or the sentence opens "By comparison";
- a change, when a level is there too ("rose 12% to $3.47 billion" reads $3.47 billion,
  unless the question asks for growth).
A how-many question's counted noun written right after a figure ("1.42 million TEU")
makes that sentence a reading whatever its verb. These are words about how sentences
state figures, not a list of measures.
"""

from __future__ import annotations

from dataclasses import dataclass

import regex

from shared.search.dates import DateRange
from shared.search.periods import find_partial_periods, find_periods, part_of, without_periods
from shared.search.terms import STOPWORDS, stem
from shared.tools.figures import not_alone
from shared.tools.patterns import DATE_FORMS, LIBRARY

_NUM = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
_SCALE = r"(?:\s?(?:thousand|million|billion|trillion|bn|mn)\b)"
VALUE_PATTERNS = {
    "date": f"(?i:{DATE_FORMS})",  # month names in any case, as EXTRACT reads them
    "percent": rf"[-−]?{_NUM}\s?(?:%|per\s?cent\b|percent\b)",
    "money": rf"[-−]?[$€£¥₹]\s?{_NUM}{_SCALE}?|(?:人民币|RMB\s?)?{_NUM}\s?(?:亿元|万元|元)",
    "number": rf"{_NUM}{_SCALE}?(?:\s?(?:亿|万))?(?:千瓦时|吨|人|辆|艘|家|台|件|个|户)?",
    "time": r"\d{1,2}:\d{2}(?::\d{2})?(?:\.\d+)?",
}
"""One capture-free pattern per kind of value (what a heuristic EXTRACT captures)."""

_VALUE = regex.compile(
    rf"(?<![\p{{Latin}}\d.,/:-]|人民币|RMB\s?)(?P<v>(?:{VALUE_PATTERNS['time']})|(?:{VALUE_PATTERNS['money']})"
    rf"|(?:{VALUE_PATTERNS['percent']})|(?:{VALUE_PATTERNS['number']}))(?![\d\p{{Latin}}:]|[.,]\d)",
    regex.I)
_TOTAL = regex.compile(r"\b(?:total|overall|group|consolidated|combined|in\s+total|all)\b[\w\s-]{0,20}$"
                       r"|总|合计|整体", regex.I)
"""A word that marks a figure as the whole rather than a segment ("total revenue")."""
_DATE = LIBRARY["date"]
_TOKEN = regex.compile(r"[\p{Han}]|(?:(?!\p{Han})[^\W_])+")
_SENTENCE = regex.compile(r"(?<=[.!?;])\s+|(?<=[。！？；])\s*|\n+")
_CLAUSE_BREAK = regex.compile(r"[,;:()，；：（）]|\b(?:compared|versus|vs|against|from|than|while"
                              r"|whereas|but)\b|\band\b(?=\s+(?:the\s|[A-Z]|\d|[$€£¥₹]))", regex.I)
_COMPARISON_OPENER = regex.compile(r"^\W*(?:by|in|for)\s+comparison\b|^\W*compared\s+(?:with|to)\b"
                                   r"|^\W*(?:meanwhile|elsewhere)\b", regex.I)
_NAME_RUN = regex.compile(r"(?<![\w'’])[A-Z][\w'’&-]*(?:\s+(?:of|and|&|de|for)\s+[A-Z][\w'’&-]*"
                          r"|\s+[A-Z][\w'’&-]*)*")

HEDGES = frozenset(stem(w) for w in """
expect expects expected expecting expectation expectations forecast forecasts forecasted
estimate estimates estimated anticipate anticipates anticipated project projects projected
projection predict predicts predicted consensus guidance target targets targeted aim aims
could would might may likely outlook preview potential potentially hope plan plans
planned ambition standard standards threshold benchmark limit cap ceiling floor minimum
maximum
""".split())
"""Words that make a nearby figure an expectation or a reference level, not a result."""
HEDGES_CJK = regex.compile(r"预计|预期|目标|有望|计划|预测|指引")
BASELINE_BEFORE = frozenset(stem(w) for w in "from compared versus vs against than".split())
BASELINE_AFTER = frozenset(stem(w) for w in "earlier ago prior previous last".split())
BASELINE_CJK = regex.compile(r"(?:上年|去年|上期|同期|此前|前一年)[^，。；,;]{0,6}$")
CHANGE_BEFORE = frozenset(stem(w) for w in """up down rose fell grew gained climbed dropped
increased decreased declined jumped slipped by 增 长 降 加 减""".split())
CHANGE_AFTER = frozenset(stem(w) for w in """increase increases decrease growth rise rises
decline declines higher lower yoy""".split())
GROWTH_WORDS = frozenset(stem(w) for w in """growth grow grew change changed increase rise
rose decline drop fell fall cut reduce reduced reduction lower raise raised improve gain
增 长 降 减 加""".split())
"""Measure words that ask for a change itself ("revenue growth")."""
NEAR = 4
"""Words either side of a value searched for hedges and baselines."""
UNANCHORED = 100
"""Added to the distance of a figure that no name asked about leads to."""
LABELS = frozenset(stem(w) for w in """week day page no number lot item article section
chapter rule notice phase stage tier level grade version model line gate route wave unit
plant""".split())
"""Words whose following number names a thing ("week 47", "line 3"), not a figure."""


@dataclass(frozen=True)
class Reading:
    value: str
    kind: str
    start: int
    """Offsets of the value in the document's text."""
    end: int
    sentence: tuple[int, int]
    coverage: float
    """Share of the measure words the sentence holds."""
    after_measure: bool
    """The value follows the measure words (the usual "margin was 17.9%")."""
    level: bool
    """The value is a level, not a change."""

    @property
    def strong(self) -> bool:
        return self.coverage == 1.0 and self.after_measure and self.level


def sentences(text: str) -> list[tuple[int, int]]:
    """Spans of the sentences of `text`, stripped."""
    spans, start = [], 0
    for m in [*_SENTENCE.finditer(text), None]:
        stop = m.start() if m else len(text)
        chunk = text[start:stop]
        if chunk.strip():
            lead = len(chunk) - len(chunk.lstrip())
            spans.append((start + lead, start + len(chunk.rstrip())))
        start = m.end() if m else stop
        if m is not None and m.end() == m.start():  # a zero-width split: move on
            start = m.end()
    return spans


def _tokens(text: str) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end(), stem(m.group().lower())) for m in _TOKEN.finditer(text)]


def _window(tokens: list[tuple[int, int, str]], wanted: set[str]) -> tuple[int, int] | None:
    """(start, end) offsets of the shortest run of tokens holding every wanted word."""
    best = None
    for i, (s, _, w) in enumerate(tokens):
        if w not in wanted:
            continue
        seen: set[str] = set()
        for s2, e2, w2 in tokens[i:]:
            if w2 in wanted:
                seen.add(w2)
            if seen == wanted:
                if best is None or e2 - s < best[1] - best[0]:
                    best = (s, e2)
                break
    return best


def _kind(value: str) -> str:
    if regex.fullmatch(VALUE_PATTERNS["time"], value):
        return "time"
    if regex.search(r"%|per\s?cent|percent", value, regex.I):
        return "percent"
    if regex.search(r"[$€£¥₹]|元", value):
        return "money"
    return "number"


def _candidates(sentence: str, kind: str | None) -> list[tuple[int, int, str, str]]:
    """(start, end, value, kind) of the values a sentence states, outside periods."""
    taken = [(m.start, m.end) for m in find_periods(sentence)]
    dates = [(m.start(1), m.end(1), m.group(1), "date") for m in _DATE.finditer(sentence)]
    if kind == "date":
        return dates
    taken += [(a, b) for a, b, _, _ in dates]
    found = []
    for m in _VALUE.finditer(sentence):
        a, b = m.span("v")
        value = m.group("v").strip()
        b = a + len(value)
        if any(a < y and x < b for x, y in taken):
            continue
        if not_alone(sentence, a, b):
            continue  # a day of a month, one end of a range, a negative in words
        found.append((a, b, value, _kind(value)))
    if kind == "percent":
        return [c for c in found if c[3] == "percent"]
    if kind == "money":
        return [c for c in found if c[3] != "percent"]
    if kind == "number":
        return [c for c in found if c[3] == "number"]
    return [c for c in found if c[3] != "time"] if kind else found


def _spans_after(tokens, end: int) -> list[tuple[int, int]]:
    return [(s, e) for s, e, w in tokens if s >= end][:NEAR]


def _near(tokens, at: int, end: int) -> tuple[list[str], list[str]]:
    before = [w for s, e, w in tokens if e <= at][-NEAR:]
    after = [w for s, e, w in tokens if s >= end][:NEAR]
    return before, after


def _clause(sentence: str, a: int, b: int) -> tuple[int, int]:
    left = max((m.end() for m in _CLAUSE_BREAK.finditer(sentence, 0, a)), default=0)
    right = next((m.start() for m in _CLAUSE_BREAK.finditer(sentence, b)), len(sentence))
    return left, right


@dataclass(frozen=True)
class Ask:
    """What a reading looks for: from the question and the document's title."""

    measure: frozenset[str]
    kind: str | None = None
    period: DateRange | None = None
    question: str = ""
    groups: tuple[frozenset[str], ...] = ()
    """The question's runs of names (stems): a clause naming a sibling is not about it."""
    title_words: frozenset[str] = frozenset()
    counted: frozenset[str] = frozenset()
    """What a how-many question counts: a figure right before one of these words."""
    anchors: tuple[frozenset[str], ...] = ()
    """Names the question gives that the document's title does not (a party, a country,
    a trial arm): the figure must follow one of them in its clause, before another name."""
    period_in_sentence: bool = False
    """The document has no period of its own: the sentence must name the one asked about."""


def _sibling(text: str, ask: Ask) -> bool:
    """Whether `text` names an entity that shares a name with the question's but is
    another one: a run of capitalized words that shares a word with one of the question's
    names, lacks another of its words and adds one of its own ("Ashgrove Valley Hospitals
    Trust" for Ashgrove Community Health Trust, "Skarfjell Air" for Skarfjell Regional;
    not "Statistics Norvania" for Norvania)."""
    for m in _NAME_RUN.finditer(text):
        run = {stem(w.lower()) for w in regex.findall(r"[^\W\d_]{2,}", m.group())
               if w.lower() not in STOPWORDS and w.lower() not in _MONTH_WORDS}
        for group in ask.groups:
            if run & group and group - run and run - group - ask.title_words:
                return True
    return False


_MONTH_WORDS = ("january february march april may june july august september october "
                "november december").split()


def _other_part(text: str, period: DateRange | None) -> bool:
    """Whether `text` names, without a year, a period other than the question's: another
    quarter, half or month, a part of the year asked about whole, the whole year or the
    year to date when a part is asked, or a relative one ("last season", "a year
    earlier")."""
    if period is None:
        return False
    asked = part_of(period)
    for part in find_partial_periods(text):
        if part.kind == "prior":
            return True
        if asked is None:
            continue
        kind, number = asked
        if part.kind != kind or (kind != "year" and part.number != number):
            return True
    return False


def _refused(sentence: str, tokens, a: int, b: int, ask: Ask) -> str | None:
    """Why the value at sentence[a:b] is not the reported figure, or None."""
    before, after = _near(tokens, a, b)
    left, right = _clause(sentence, a, b)
    clause_before = {w for s, e, w in tokens if left <= s and e <= a and sentence[s:e] != "May"}
    after = [w for w, (s, e) in zip(after, _spans_after(tokens, b)) if sentence[s:e] != "May"]
    # a hedge after the figure counts up to the next figure: "4.05 billion analysts had
    # expected" is hedged, "91.7% remained below the 92% target" is not (the 92% is)
    upto = next((m.start() for m in _VALUE.finditer(sentence, b)), right)
    clause_after = {w for s, e, w in tokens if b <= s and e <= min(upto, right)
                    and sentence[s:e] != "May"}
    if HEDGES & (clause_before | clause_after) or HEDGES_CJK.search(sentence[left:b + 4]):
        return "hedged"
    if before and before[-1] in LABELS:
        return "a label"
    opener = _CLAUSE_BREAK.search(sentence[max(0, left - 9):left]) if left else None
    if opener and stem(opener.group().lower()) in BASELINE_BEFORE:
        return "baseline"  # the clause opens with "from", "compared", "than", …
    if BASELINE_BEFORE & set(before[-3:]) or BASELINE_AFTER & set(after[:3]):
        return "baseline"
    if BASELINE_CJK.search(sentence[max(0, a - 12):a]):
        return "baseline"
    clause = sentence[left:right]
    # a period that opens the sentence governs it: "In Q4 2023, operating profit was $88 million"
    lead = max(sentence.rfind(";", 0, a), sentence.rfind("；", 0, a)) + 1
    named = ({m.period for m in find_periods(clause)}
             or {m.period for m in find_periods(sentence[lead:left])[:1]})
    if named and ask.period is not None and ask.period not in named:
        return "another period"
    if _other_part(clause, ask.period):
        return "another period"
    if _sibling(clause, ask):
        return "another entity"
    value_digits = regex.sub(r"\D", "", sentence[a:b])
    asked = regex.sub(r"[,\s]", "", without_periods(ask.question))  # "2023-24" is a period
    if value_digits and regex.search(rf"(?<!\d){value_digits}(?!\d)", asked):
        return "in the question"
    return None


def _is_change(tokens, a: int, b: int) -> bool:
    before, after = _near(tokens, a, b)
    if before and before[-1] == "to":
        return False
    return bool(CHANGE_BEFORE & set(before[-2:]) or CHANGE_AFTER & set(after[:3]))


def _names_period(sentence: str, period: DateRange | None) -> bool:
    """Whether `sentence` names `period`, in full ("Q3 2024") or by its part ("the third
    quarter") with nothing else."""
    if period is None:
        return False
    if period in {m.period for m in find_periods(sentence)}:
        return True
    asked = part_of(period)
    parts = find_partial_periods(sentence)
    return bool(asked and parts) and all(
        (p.kind, p.number if p.kind != "year" else 0) == asked for p in parts)


def _anchored(sentence: str, tokens, a: int, anchors) -> int | None:
    """Tokens between the nearest anchor name before the value and the value, when no
    other capitalized name comes between them; None when no anchor leads to it."""
    best = None
    for group in anchors:
        for i, (s, e, w) in enumerate(tokens):
            if e > a or w not in group:
                continue
            span_end = e
            run = {w}
            for s2, e2, w2 in tokens[i + 1:]:
                if w2 in group and sentence[span_end:s2].strip() in ("", "of", "and", "&"):
                    run.add(w2)
                    span_end = e2
                else:
                    break
            if run != group or span_end > a:
                continue
            between = sentence[span_end:a]
            if _NAME_RUN.search(between) or _CLAUSE_BREAK.search(between):
                continue  # another name, or another clause, comes first
            gap = sum(1 for s2, e2, w2 in tokens if span_end <= s2 and e2 <= a)
            best = gap if best is None else min(best, gap)
    return best


def _options(sentence: str, tokens, ask: Ask, held: set, window, wants_change: bool,
             need: int) -> list[tuple]:
    """(priority, start, end, value, kind, level, after) of each figure the sentence may
    state for the question; priority: higher is better, compared as a tuple."""
    marks = [(s, e) for s, e, w in tokens if w in held]
    out = []
    for a, b, value, vkind in _candidates(sentence, ask.kind):
        if any(a < e and s < b for s, e in marks):
            continue  # a measure word is not its own value
        if _refused(sentence, tokens, a, b, ask):
            continue
        following = [w for s, e, w in tokens if s >= b][:1]
        counted = bool(ask.counted & set(following))  # "1.42 million TEU"
        if not counted and (len(held) < need or window is None):
            continue
        if counted and not held:
            continue  # the counted noun alone: the sentence says nothing of what was asked
        gap = _anchored(sentence, tokens, a, ask.anchors) if ask.anchors else None
        after = window is None or a >= window[0]  # in the run ("delivered 14 vessels") or after
        if gap is not None:  # the figure follows the name asked about: "the Liberal Democrats 22"
            distance = gap
        elif window is None:
            distance = 0
        else:  # words between the figure and the nearest word asked about
            distance = min(sum(1 for s2, e2, w in tokens if (e <= s2 and e2 <= a) or
                               (b <= s2 and e2 <= s)) for s, e in marks) if marks else 0
        if ask.anchors and gap is None:
            distance += UNANCHORED  # a figure the name does not lead to comes last
        level = not _is_change(tokens, a, b)
        total = bool(_TOTAL.search(sentence[max(0, a - 40):a]))
        fits = (not level) if wants_change else level  # a change when one is asked, else a level
        out.append(((counted, fits, after), distance, total, a, b, value, vkind, level))
    return out


def _clear(options: list[tuple]) -> tuple | None:
    """The option that is plainly the figure asked for, or None when two figures of one
    kind are as close as each other to the words asked about (an "A 14, B 22" list, a
    drug arm and its placebo): then the sentence does not say which one is meant, unless
    one of them is marked as the total."""
    ranked = sorted(options, key=lambda o: (o[0], -o[1]), reverse=True)
    best = ranked[0]
    rivals = [o for o in ranked[1:] if o[0] == best[0] and o[6] == best[6]
              and o[5] != best[5] and o[1] <= best[1] + 1]
    if not rivals:
        return best
    totals = [o for o in [best, *rivals] if o[2]]
    return totals[0] if len(totals) == 1 else None


def read_value(text: str, ask: Ask) -> Reading | None:
    """The figure `text` states for `ask.measure` (see the module docstring), or None
    when no sentence states one plainly, or two sentences state different ones."""
    measure = ask.measure
    if not measure:
        return None
    need = len(measure) if len(measure) <= 2 else -(-2 * len(measure) // 3)
    wants_change = bool(GROWTH_WORDS & measure)
    found: list[tuple] = []
    for s0, s1 in sentences(text):
        sentence = text[s0:s1]
        if _COMPARISON_OPENER.search(sentence):
            continue
        if ask.period_in_sentence and not _names_period(sentence, ask.period):
            continue  # a document with no period says nothing of the period asked
        tokens = _tokens(sentence)
        held = measure & {w for _, _, w in tokens}
        window = _window(tokens, set(held)) if held else None
        words_here = {w for _, _, w in tokens}
        if ask.anchors and not any(g <= words_here for g in ask.anchors):
            continue  # the name asked about (a party, a country, a person) is not here
        options = _options(sentence, tokens, ask, held, window, wants_change, need)
        if not options:
            continue
        pick = _clear(options)
        if pick is None:  # this sentence states two figures as plainly as each other
            found.append(((len(held) / len(measure),), None, False))
            continue
        (counted, _, after), _, total, a, b, value, vkind, level = pick
        coverage = len(held) / len(measure)  # a counted noun lets a reading in, not up
        names_period = _names_period(sentence, ask.period)
        score = (coverage, counted, names_period, pick[0][1], after)
        found.append((score, Reading(value=value, kind=vkind, start=s0 + a, end=s0 + b,
                                     sentence=(s0, s1), coverage=coverage,
                                     after_measure=after, level=level or wants_change),
                      total))
    readings = sorted((f for f in found if f[1] is not None), key=lambda f: f[0], reverse=True)
    if not readings:
        return None
    best = readings[0]
    unclear = [f for f in found if f[1] is None and f[0][0] >= best[0][0]]
    if unclear and not best[2]:
        return None  # as good a sentence leaves the figure open, and this one is no total
    rivals = [f for f in readings[1:] if f[0][:2] == best[0][:2]
              and f[1].value != best[1].value and f[1].kind == best[1].kind]
    if rivals:  # two sentences state different figures for the same words
        totals = [f for f in [best, *rivals] if f[2]]
        if len(totals) != 1:
            return None
        best = totals[0]
    return best[1]


def read_sentence(text: str, measure: frozenset[str],
                  without_values: bool = False) -> tuple[int, int] | None:
    """The sentence holding the most measure words (all, or two thirds of more than
    two), for questions whose answer is a sentence; None when none does. With
    `without_values`, a sentence that states figures does not count (its figures were
    refused: the sentence would pass them on)."""
    if not measure:
        return None
    need = len(measure) if len(measure) <= 2 else -(-2 * len(measure) // 3)
    scored = []
    for s0, s1 in sentences(text):
        held = measure & {w for _, _, w in _tokens(text[s0:s1])}
        if len(held) >= need and not (without_values and regex.search(r"\d", text[s0:s1])):
            scored.append((len(held), -s0, (s0, s1)))
    return max(scored)[2] if scored else None
