"""Row names, word for word: consumes the row an EXTRACT asks for (a line item's words
or a name the domain library knows) and a table row's label and section, produces how
the label names it (`Fit`), or None when it does not.

Words are those of shared/search/terms.py, stemmed, without small words (`of`, `and`,
`the`, `was`, …), footnote marks (`(a)`, `(1)`, `*`), what a label says in parentheses
(`Net income (loss)`, `Net cash provided by (used in) operating activities`) and a
closing "of the year" (`Options granted in the year`, `Balance at the end of the fiscal
year`); `total` is no word either (`Total revenues` names revenues). A label names a row
- `exact`ly when its words are the name's (in any order: `Property and equipment, net`
  is `net property and equipment`);
- `under` its section when the label's words are all the name's and the heading above
  it holds the rest (`Basic` under `Earnings per share:`);
- `qualified` when it starts with the name's words and qualifies them after a comma or
  dash (`Interest expense, net`, `Accounts receivable, net of allowance of $1.2
  million`, `Long-term debt, less current portion`), a word of QUALIFIERS first: what
  follows a comma in `Sales, general and administrative` is more items, not a
  qualification; a balance at the end of a period qualifies without one
  (`Contributed equity at end of period`);
- in `context` when every word of the label is the name's and the row's context says
  the rest (its heading, its table's title, the header of the column read: `Americas`
  under the column `Fiscal Year 2018 Net Sales` is net sales in Americas; `Total`
  there is total net sales), FILLERS (`amount`) aside: the context supplies words, it
  never replaces one.
A label that states one figure for each of two words it joins (`Net loss per share,
basic and diluted`, `Basic and diluted net loss per share`) names each of them: a name
that says one (`net loss per share, basic`) is compared with the label without the
other. Only BOTH are such joins: `Deferred revenue, current and non-current` is the sum
of its parts and names neither.
Words before the name change what a row is (`Cost of sales` is not sales, `Other
current assets` not current assets), and so do words after it without a comma
(`Net income per share`): such labels fit no name, and are only ever named as the
nearest rows.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property, lru_cache

import regex

from shared.models.table import Cell, Row, Table
from shared.search.terms import closed_prefixes, stem, words
from shared.tables.units import without_exceptions

SMALL_WORDS = frozenset("a an the of and in on for to from by at as with within under its "
                        "their our s is are was were be been arising".split())
NEUTRAL = frozenset({"total"})
"""Words a label may have or lack: `Total revenues` is revenues."""
RANKS = {"exact": 0, "under": 1, "qualified": 2, "context": 3}
FILLERS = frozenset(stem(w) for w in "amount amounts value values figure number portion".split())
"""Words a request may add around a row's name that no row needs to say (`amount for
Land`)."""
QUALIFIERS = frozenset(stem(w) for w in """net less excluding excl including incl after
before at end beginning as current noncurrent non long short gross trade continuing
discontinued reported adjusted restated cost""".split())
"""Words that open a qualification after a comma: `, net`, `, at cost`, `, end of year`."""
BOTH = frozenset({(stem("basic"), stem("diluted"))})
"""Joins whose label states one figure for each word (a per-share figure or share count
that is basic's and diluted's alike), where other joins state their sum."""
_END = stem("end")
"""The one that does without a comma: a balance "at end of period" is the item's figure
for the period, as the year's column of "Goodwill, end of year" is."""

_ASIDE = regex.compile(r"\([^()]*\)|\[[^\[\]]*\]|[*†‡§¹²³⁴⁵⁶⁷⁸⁹⁰]+")
_JOINED = regex.compile(r"(?P<a>[^\W_]+)\s*(?:\band\b|\bor\b|&)\s*(?P<b>[^\W_]+)", regex.I)
_HYPHENED = regex.compile(r"(?P<a>[^\W_]+)-(?P<b>[^\W_]+)")
_BREAK = regex.compile(r"[,;:–—]|\s-|-\s")
_WORD = regex.compile(r"[^\W_]+")


@dataclass(frozen=True)
class Label:
    """A label's words in order, and whether a comma or dash comes before each."""

    words: tuple[str, ...]
    breaks: tuple[bool, ...]
    joins: tuple[tuple[str, str], ...] = ()
    """The words a conjunction joins ("accrued and other current liabilities": accrued,
    other)."""
    compounds: tuple[tuple[str, str], ...] = ()
    """The words a hyphen joins ("short-term investments": short, term): one thing, said
    in one place (a prefix's hyphen is closed first: "non-USD" is one word)."""

    def splits(self, label: "Label") -> bool:
        """Whether `label` says as one item words this name joins as two: both words of
        a join are the label's and the label joins nothing ("Accrued liabilities, other"
        is not "accrued and other current liabilities"; "Goodwill" under a column of
        "Software & Systems" is not split)."""
        return not label.joins and any(a in label.distinct and b in label.distinct
                                       for a, b in self.joins)

    @cached_property
    def counts(self) -> Counter:
        return Counter(self.words)

    @cached_property
    def distinct(self) -> frozenset[str]:
        return frozenset(self.words)


@dataclass(frozen=True)
class Fit:
    how: str
    """`exact`, `under` (with its section's words), `qualified` or `context`."""
    extra: int
    """Words the label has beyond the name (qualified), or its context gives it
    (context)."""

    @property
    def rank(self) -> int:
        return RANKS[self.how]


def hints(text: str) -> tuple[str, str]:
    """A requested row split into the line item and the heading words it gives: those in
    parentheses or before a colon (`investing activities: purchases of property`)."""
    head, colon, rest = text.rpartition(":")
    item, aside = (rest, head) if colon and rest.strip() else (text, "")
    asides = " ".join(m.group()[1:-1] for m in _ASIDE.finditer(item) if m.group()[0] in "([")
    return item, f"{aside} {asides}".strip()


@lru_cache(maxsize=65536)
def label_words(text: str) -> Label:
    """The words a row's label (or a name) is compared by."""
    core = _OPERATOR.sub("", closed_prefixes(_without_asides(text or "")), count=1)
    found: list[str] = []
    breaks: list[bool] = []
    at = 0
    pending = False
    for m in _WORD.finditer(core):
        pending = pending or bool(_BREAK.search(core[at:m.start()]))
        at = m.end()
        for word in words(m.group()):
            if word in SMALL_WORDS or word in NEUTRAL:
                continue
            found.append(stem(word))
            breaks.append(pending)
            pending = False
    joins = tuple((stem(m["a"].lower()), stem(m["b"].lower())) for m in _JOINED.finditer(core)
                  if m["a"].lower() not in SMALL_WORDS and m["b"].lower() not in SMALL_WORDS)
    compounds = tuple((stem(m["a"].lower()), stem(m["b"].lower()))
                      for m in _HYPHENED.finditer(core)
                      if m["a"].lower() not in SMALL_WORDS and m["b"].lower() not in SMALL_WORDS)
    return Label(tuple(found), tuple(breaks), joins, compounds)


def aside_words(text: str) -> frozenset[str]:
    """The words a label says in parentheses, footnote marks (`(1)`, `(a)`) aside: a
    label that fits alike but says more there is another row (`Free cash flow
    (pre-spectrum)` beside `Free cash flow`)."""
    found = set()
    text = text or ""
    while (asides := list(_ASIDE.finditer(text))):
        for m in asides:
            found |= {w for w in label_words(m.group()[1:-1]).words
                      if len(w) > 1 and not w.isdigit()}
        text = _ASIDE.sub(" ", text)
    return frozenset(found)


def _without_asides(text: str) -> str:
    """`text` without what it says in parentheses, nested ones too (`Carrying amount
    (non-current (liabilities)/assets)`), without footnote marks, a digit glued to
    its last word among them (`Order intake1`), and without a closing "of the year" that
    any row of a year's table could say (`Options granted in the year`, `Balance at the
    beginning of the fiscal year`); a join of BOTH in parentheses is the label's own
    (`Net loss per share (basic and diluted)`: `…, basic and diluted`)."""
    text = _BOTH_ASIDE.sub(r", \1", text)
    while (shorter := _ASIDE.sub(" ", text)) != text:
        text = shorter
    return _THE_YEAR.sub("", _GLUED_MARK.sub("", text))


_OPERATOR = regex.compile(
    r"^\W*(?:(?:less|add|plus|minus|deduct|including|includes|of\s+which|therein|thereof)"
    r"\s*:|less\b(?!\s+than\b))\s*", regex.I)
"""What a statement writes before a line to say how it adds into the lines around it, not
part of its name: `Less: Accumulated depreciation`, `Less current portion`, `Including:
Gasoline`, `Of which: services` (`Less than one year` is a maturity's name)."""
_BOTH_ASIDE = regex.compile(r"\s*\(\s*((?:basic|diluted)\s*(?:and|&)\s*(?:basic|diluted))\s*\)", regex.I)
"""A join of BOTH said in parentheses (`Net loss per share (basic and diluted)`): the
label's own words, as after a comma."""
_GLUED_MARK = regex.compile(r"(?<=\p{Ll}{3})\d(?=\s*$)")
_THE_YEAR = regex.compile(r"(?<=\w)\s*,?\s+(?:in|during|for|of|over)\s+the\s+(?:fiscal\s+)?"
                          r"(?:year|period)\s*$", regex.I)


_FOOTNOTE = regex.compile(r"\(\s*(?:\d{1,2}|[a-z])\s*\)|[*†‡§¹²³⁴⁵⁶⁷⁸⁹⁰]|(?<=\p{Ll}{3})\d\s*$")


def footnoted(row: Row) -> bool:
    """Whether `row`'s label bears a footnote mark ("Research and development expenses
    (1)", "Incentive schemes1"): a note qualifies what the row states ("(1) Excludes
    stock-based compensation expense"), so another row that names the item too is not
    outranked by it."""
    return row.marked or bool(_FOOTNOTE.search(row.label or ""))


CHANGES = regex.compile(
    r"^\W*(?:(?:net\s+)?changes?\s+in|\(?(?:increase|decrease)s?\)?(?:\s*[/(]?\s*(?:or|and)?\s*"
    r"\(?(?:increase|decrease)s?\)?)?\s+in)\b(?=[^:]*\b(?:assets|liabilities|working\s+capital)\b"
    r"|\s*:?\s*$)", regex.I)
"""A heading of changes in a cash flow statement, each row the change of the balance it
names: "Changes in operating assets and liabilities:", "(Increase) decrease in:",
"Increase/(decrease) in working capital". Not a rollforward's "Change in benefit
obligation:", whose rows (interest cost) are what changed it."""


ASKS_CHANGE = regex.compile(r"\b(?:change[sd]?|increase[sd]?|decrease[sd]?|movements?|"
                           r"(?:in|de)crease)\b", regex.I)
"""Words of an item asked that ask a change, which a row under a heading of changes
answers."""


def under_changes(row: Row) -> bool:
    """Whether a row is under a heading of changes (a cash flow statement's
    "Inventories" under "Changes in operating assets and liabilities:"): the year's
    change of the item, never its balance. The block's total under it ("Cash generated
    by operating activities", "Net cash provided by …") is not one of them."""
    return bool(row.section and CHANGES.match(row.section)) and not row.total \
        and not _CASH_FROM_ACTIVITIES.search(row.label)


_CASH_FROM_ACTIVITIES = regex.compile(
    r"\bnet\s+cash\b|\bcash\b.*\b(?:activities|operations)\b", regex.I)


_TOTAL_ASKED = regex.compile(r"\btotal\b(?!\s+(?:amounts?|value|sum)\s+of\b)", regex.I)
"""A total asked ("total deferred revenue"); "the total amount of inventories" asks
their amount."""
TERM_SAID = regex.compile(r"\b(?:current|non[\s-]?current|long[\s-]term|short[\s-]term)\b", regex.I)
"""Words of an item asked that say which part by term it means."""
_TERM_HEADING = regex.compile(r"^\W*(?P<non>non[\s-]?|long[\s-]term\b)?\s*current\b|"
                              r"^\W*(?P<long>long[\s-]term)\b", regex.I)
_TERM_LABEL = regex.compile(
    r"^(?P<base>.+?)\s*,\s*(?:(?P<non>non[\s-]?current|long[\s-]term|(?:net\s+of|less|excluding)\s+"
    r"(?:the\s+)?current(?:\s+(?:portion|maturities|installments|part))?)|(?P<cur>current))"
    r"(?:\s+portion)?\s*$"
    r"|^(?:(?P<non>non[\s-]?current)|(?P<cur>current)(?:\s+(?:portion|maturities|installments|part)"
    r"\s+of)?)\s+(?P<base>.+)$", regex.I)
"""A label that names its part by term: "Operating lease liabilities, net of current",
"Long-term borrowings, excluding current installments", "Deferred revenue, noncurrent",
"Non-current operating lease liabilities", "Current portion of long-term debt"."""


def term_part(row: Row) -> str | None:
    """Which part by term `row` states: `current` (under a "Current liabilities:"
    heading, or "Deferred revenue, current"), `non-current` ("Deferred revenue,
    noncurrent", under "Non-current liabilities:" or "Long-term liabilities"), or None."""
    if m := _TERM_LABEL.match(row.label or ""):
        return "current" if m["cur"] else "non-current"
    if m := _TERM_HEADING.match(row.section or ""):
        return "non-current" if m["non"] or m["long"] else "current"
    return None


def term_rivals(a: Row, b: Row) -> bool:
    """Whether `a` and `b` state the two parts by term of one item: "Deferred revenue"
    under "Current liabilities:" and "Deferred revenue, noncurrent" (or "Term debt" under
    both headings). A question that says neither part means neither of them."""
    parts = {term_part(a), term_part(b)}
    return parts == {"current", "non-current"} and _term_base(a) == _term_base(b)


def implied_rival(row: Row, other: Row) -> bool:
    """Whether `other`, under `row`'s heading in its table, names its part by term in its
    label and `row` is the same item saying none: "Operating lease liabilities" above
    "Operating lease liabilities, noncurrent" under a heading "Lease liabilities" is the
    current part."""
    return term_part(row) is None and other.section == row.section and not row.total \
        and _TERM_LABEL.match(other.label or "") is not None \
        and _term_base(row) == _term_base(other)


def _term_base(row: Row) -> tuple[str, ...]:
    m = _TERM_LABEL.match(row.label or "")
    return tuple(sorted(label_words(m["base"] if m else row.label).words))


def other_term_cells(row: Row, table: Table, column: int,
                     tables: list[Table]) -> Iterator[tuple[Table, Row, int, Cell]]:
    """The cells that state `row`'s other part by term ("Deferred revenue, noncurrent"
    beside "Deferred revenue" under "Current liabilities:"): in `table`'s `column`, or in
    another of `tables` (a lease note; a balance sheet broken over two pages), a column
    of the same period. A request that says neither part is as near to them."""
    period = table.columns[column].period if column < len(table.columns) else None
    for other_table in tables:
        columns = [column] if other_table is table else [
            i for i, c in enumerate(other_table.columns) if period and c.period == period]
        for other in other_table.rows:
            if other is row or not (term_rivals(row, other) or other_table is table
                                    and implied_rival(row, other)):
                continue
            for i in columns:
                cell = other.cells[i] if i < len(other.cells) else None
                if cell is not None and cell.quantity is not None:
                    yield other_table, other, i, cell


def other_than_asked(asked: str, row: Row) -> str | None:
    """Why `row` is not what `asked` (a question's item or a step's row) names though its
    words may fit: the year's change of the balance asked, or the current part of a total
    asked; None when neither."""
    if under_changes(row) and not ASKS_CHANGE.search(asked):
        return f"a change over a period, not {asked!r} itself"
    if current_part(asked, row):
        return f"the {term_part(row)} part of {asked!r}, not its total"
    return None


def current_part(asked: str, row: Row) -> bool:
    """Whether `row` is only the current or non-current part of what `asked` (a
    question's item or a step's row) asks as a total: "total deferred revenue" is not
    "Deferred revenue" under "Current liabilities:", whose non-current part a balance
    sheet states in another line (or inside "Other non-current liabilities"), nor
    "Deferred revenue, noncurrent"."""
    return bool(_TOTAL_ASKED.search(asked)) and not TERM_SAID.search(asked) \
        and not row.total and not _TOTAL_ASKED.search(row.label) \
        and term_part(row) is not None


def word_for_word(label: str, text: str) -> bool:
    """Whether one of `label` (its parenthetical words and marks aside) and `text` says
    the other's words in order, small words too: what tells apart rows whose words differ
    only in those ("Amounts owed by members" beside "Amounts owed to members")."""
    a, b = (tuple(w.lower() for w in _WORD.findall(_without_asides(t or ""))) for t in (label, text))
    short, long = sorted((a, b), key=len)
    return bool(short) and any(long[i:i + len(short)] == short
                               for i in range(len(long) - len(short) + 1))


def by_section(row: Row, table: Table) -> bool:
    """Whether `table` repeats `row`'s label under other headings, and under a heading
    each time ("Net sales" under "North America", "International" and "AWS"): each row
    is the part its heading names (a segment's), which a request that does not name the
    heading does not mean. A table that states the label under no heading too
    ("Continuing operations" over "Basic earnings per share: Continuing operations")
    says what the headings part, not the whole."""
    key = name_key(row.label)
    same = [other for other in table.rows if other is not row and name_key(other.label) == key]
    return bool(row.section) and all(other.section for other in same) and any(
        other.section != row.section for other in same)


_PART_ENTITY = regex.compile(r"\bVIEs?\b|\bvariable\s+interest\s+entit|\bnon-?guarantor|\bguarantor"
                            r"|\bparent\s+company\b|\bunconsolidated\b|\bjoint\s+ventures?\b"
                            r"|\bequity[\s-]method\s+investees?\b", regex.I)
"""Words of a table's title that say its figures are a part of the company's: its
variable interest entities', its guarantors', the parent company's alone."""


_EXPENSES = r"(?:stock|share|equity)[\s-]based\s+compensation|depreciation|amortization"
"""Expenses a filing allocates over its statement's line items."""
_COMPONENT = regex.compile(r"\binclud(?:es|ed|ing)\b[^:]{0,120}?\bas\s+follows\b", regex.I)
"""A lead-in that says its rows are a component of line items stated elsewhere ("(1)
Includes stock-based compensation expense as follows (in thousands):")."""


_ALLOCATED = regex.compile(
    rf"\b(?P<what>{_EXPENSES})\b[^:.]{{0,120}}?\b(?:recorded|included|recognized|allocated|"
    r"classified|presented)\s+(?:in|within|to|as)\b"
    rf"|\btotal\s+(?P<what>{_EXPENSES})(?:\s+expenses?)?\s+(?:was|were|is|are)\s+as\s+follows",
    regex.I)
"""A title or lead-in saying its rows are where an expense was recorded ("Amortization
expense recorded in the condensed consolidated statements of operations …", "Total
stock-based compensation expense was as follows"): its row "Research and development"
is the amortization or compensation within research and development, not the item."""


def of_a_part(table: Table, asked: str) -> bool:
    """Whether `table` states the figures of a part of the company ("The aggregate
    carrying values of the VIEs' assets and liabilities …") that `asked` (a question's
    item or a step's row) does not name, or a component of line items ("Includes
    stock-based compensation expense as follows:", an expense recorded in them) that it
    does not name."""
    said = " ".join(filter(None, (table.title, table.lead_in)))
    found = _PART_ENTITY.search(said)
    if found is not None and not regex.search(regex.escape(found.group()), asked, regex.I):
        return True
    return a_component(table, asked)


def a_component(table: Table, asked: str) -> bool:
    """Whether `table` states a component of line items stated elsewhere ("Includes
    stock-based compensation expense as follows:", "Depreciation expense recorded in the
    consolidated statements of operations …") that `asked` (a question's item or a step's
    row) does not name: its row "Research and development" is the depreciation within
    research and development, not the item."""
    said = " ".join(filter(None, (table.title, table.lead_in)))
    if (allocated := _ALLOCATED.search(said)) is not None and not regex.search(
            rf"\b{allocated['what'].split()[-1]}", asked, regex.I):  # "… compensation"
        return True
    return bool(table.lead_in and _COMPONENT.search(table.lead_in))


_STATEMENT = regex.compile(
    r"(?<!\b(?:the|in|on|our|to|of|with|from)\s+(?:condensed\s+)?(?:consolidated\s+)?)"
    r"\b(?:condensed\s+)?(?:consolidated\s+)?(?:statements?\s+of\s+(?:operations|income|"
    r"earnings|(?:comprehensive\s+)?(?:income|loss)|cash\s+flows?|financial\s+position)|"
    r"balance\s+sheets?)\b(?![^.:]{0,80}\b(?:during|consisted|were\s+as\s+follows)\b)",
    regex.I)
"""A primary financial statement's heading ("Palantir Technologies Inc. Consolidated
Statements of Operations", "CONSOLIDATED BALANCE SHEETS AS OF DECEMBER 31, 2023 AND
2022"), not a note's sentence that names one ("Depreciation expense recorded in the
consolidated statements of operations … consisted of the following")."""


def of_a_statement(table: Table) -> bool:
    """Whether `table` is a primary financial statement: the line items a filing defines,
    where notes, reconciliations and breakdowns restate parts of them."""
    return bool(table.title and _STATEMENT.search(table.title))


_PRICE_RANGE = frozenset({"high", "low"})
_PRICE_LINES = _PRICE_RANGE | {"close", "closing", "last"}
PRICE_SUBJECT = "sales price of the common stock per share, traded on the market"
"""What a table of a stock's price range is about, which its rows need not say."""


def rows_title(table: Table) -> str:
    """The words of `table`'s title that may name its rows: all of them, but for what
    "… included the following" says its rows are in ("The Transportation Solutions
    segment's operating income included the following:" lists charges within the
    operating income; its "Total" is theirs, not the operating income), and for the
    rows its scale leaves out ("(in thousands, except per share amounts)": which rows
    are in units, not what a row is; "Net loss" is no net loss per share)."""
    title = table.title or ""
    return without_exceptions(title[m.end():] if (m := _INCLUDED_IN.match(title)) else title)


_INCLUDED_IN = regex.compile(r"^.*?\b(?:included|includes|include)\s+the\s+following\b", regex.I)


def subject_of(table: Table) -> str | None:
    """What a table's figures are about when nothing in it says so: a table whose rows
    are only "High" and "Low" (and a close) of amounts per share, by quarter, is the
    range of a stock's price (a filing's market information, its lead-in cut off:
    "What was the high price of the common stock in the fourth quarter?"). None
    otherwise."""
    labels = set()
    for row in table.rows:  # most tables' first row is no price: asked of every row
        label = " ".join(_WORD.findall(row.label.lower())) if row.label else ""
        if label and label not in _PRICE_LINES:
            return None
        labels.add(label)
    if not _PRICE_RANGE <= labels:
        return None
    cells = [c.quantity for r in table.rows for c in r.cells if c and c.quantity]
    if cells and all(q.kind == "money" and not q.scale and q.amount is not None
                     and q.amount.as_tuple().exponent < 0 for q in cells):
        return PRICE_SUBJECT
    return None


def of_deferred_taxes(row: Row, table: Table, asked: str) -> bool:
    """Whether `row` states the deferred tax on an item ("Depreciation" under "Deferred
    Tax Liabilities", "Stock based compensation" in a table of "the components of
    deferred tax assets"), which `asked` (a question's item or a step's row) does not
    name: not the item itself (the cash flow statement's "Depreciation")."""
    said = " ".join(filter(None, (row.section, table.title, table.lead_in)))
    return bool(_DEFERRED_TAX.search(said)) and not _DEFERRED_TAX.search(asked)


def only_deferred_taxes(tables: list[Table]) -> bool:
    """Whether every table of `tables` is about deferred taxes (a report's one table, as a
    question about it is asked): then a row's deferred tax is what is asked. In a filing's
    tables, where the item itself is stated or not at all, it never is: "depreciation and
    amortization" is not the deferred tax liability labelled so when the cash flow
    statement states "Depreciation, amortization and impairment"."""
    return all(any(_DEFERRED_TAX.search(" ".join(filter(None, (r.section, t.title,
                                                               t.lead_in))))
                   for r in t.rows) for t in tables)


_DEFERRED_TAX = regex.compile(r"\bdeferred\s+(?:income\s+)?tax(?:es)?\b", regex.I)


def read_after_whole(row: Row, table: Table, asked: str, section_named: bool) -> bool:
    """Whether `row` states a part that a request (`asked`, its words; `section_named`:
    they say the row's heading) does not name, to be read only after a row of the whole:
    a segment's row under its heading (`by_section`), a row of a table about a part of the
    company (`of_a_part`), the deferred tax on an item (`of_deferred_taxes`)."""
    return by_section(row, table) and not section_named or of_a_part(table, asked) \
        or of_deferred_taxes(row, table, asked)


def name_key(text: str) -> tuple[str, ...]:
    """`text`'s words as a key, order aside: names that are the same row share one."""
    return tuple(sorted(label_words(text).words))


def one_part(name: Label, label: Label) -> Label:
    """`label` as it names `name`: without the other word of a join it states one figure
    for each of (BOTH) when `name` says only one of them (`Net loss per share, basic and
    diluted` asked as basic is `Net loss per share, basic`); else `label` itself."""
    for a, b in label.joins:
        if (a, b) not in BOTH and (b, a) not in BOTH:
            continue
        other = b if a in name.distinct and b not in name.distinct else \
            a if b in name.distinct and a not in name.distinct else None
        if other is None or label.counts[other] != 1:
            continue
        at = label.words.index(other)
        breaks = list(label.breaks)
        if at + 1 < len(breaks):  # the word after it keeps the break before it
            breaks[at + 1] = breaks[at + 1] or breaks[at]
        del breaks[at]
        return Label(label.words[:at] + label.words[at + 1:], tuple(breaks),
                     tuple(j for j in label.joins if j != (a, b)), label.compounds)
    return label


def fit(name: Label, label: Label, section: Label | None = None) -> Fit | None:
    """How `label` (under `section`) names `name`; None when it does not."""
    label = one_part(name, label)
    if not name.words:
        return None
    if not label.words:  # `Total` under the heading that names it
        return Fit("under", 0) if section is not None and section.counts == name.counts \
            else None
    if not name.distinct & label.distinct:
        return None
    wanted, have = name.counts, label.counts
    if name.distinct == label.distinct and wanted == have:
        return Fit("exact", 0)
    if label.distinct < name.distinct:  # every word of the label is the name's
        # the heading completes the label, unless the name joins two items the label
        # does not ("Accrued liabilities, other" under "Current liabilities" is not
        # "accrued and other current liabilities")
        if section is not None and not have - wanted and not wanted - have - section.counts \
                and not name.splits(label):
            return Fit("under", 0)
        return None
    if not name.distinct <= label.distinct:
        return None
    for end in range(len(name.words), len(label.words)):
        prefix = Counter(label.words[:end])
        if prefix == wanted:
            qualifies = label.breaks[end] and label.words[end] in QUALIFIERS \
                or label.words[end] == _END  # "Contributed equity at end of period"
            return Fit("qualified", len(label.words) - end) if qualifies else None
        if prefix - wanted:
            return None
    return None


def in_context(name: Label, label: Label, context: frozenset[str],
               total: bool = False) -> Fit | None:
    """How `label` names `name` when its context (the words of its heading, title and
    column header) says what the label leaves out; None when it does not. A label without
    words (`Total`) fits only as a `total` row."""
    label = one_part(name, label)
    if not name.words or not label.distinct <= name.distinct or not (label.words or total) \
            or name.splits(label):
        return None  # "Accrued liabilities, other" is not "accrued and other … liabilities"
    rest = name.distinct - label.distinct - FILLERS
    if not name.distinct - FILLERS or rest - context:
        return None
    if any((a in label.distinct) != (b in label.distinct) for a, b in name.compounds):
        return None  # "short-term …" is not "short" from the label and "term" from a header
    return Fit("context", len(rest))


def likeness(name: Label, label: Label) -> float:
    """How near `label` comes to `name`, 0 to 1: shared words over all words of both."""
    a, b = set(name.words), set(label.words)
    return len(a & b) / len(a | b) if a | b else 0.0
