"""Search terms: consumes free text (a question, a GET source), produces the keywords
search backends match on and a safe SQLite FTS5 query built from them.

User text never reaches FTS5 as syntax: it is cut into words, stopwords and FTS5
operators drop out, and each remaining word is quoted. Chinese and Japanese script has
no spaces between words: each ideograph or kana is a word of its own (as
Elasticsearch's standard tokenizer cuts it), and `index_text` spaces them out so that
SQLite's tokenizer cuts indexed text the same way.
"""

from __future__ import annotations

from functools import lru_cache

import regex as re

from .periods import without_periods

STOPWORDS = frozenset("""
a about after all also am an and any are as at be been before being but by can could
did do does doing during for from had has have having he her here him his how i if in
into is it its me more most my no nor not of off on once only or other our out over own
same she should so some such than that the their them then there these they this those
through to too under until up very was we were what when where which while who whom why
will with would you your near many much
的 了 是 在 和 与 及 其 为 之 多 少 什 么 哪 几 吗 呢 有
""".split())
"""Words too common to tell documents apart (and FTS5's `NEAR`, `AND`, `OR`, `NOT`)."""

_IDEOGRAPH = r"[\p{Han}\p{Hiragana}\p{Katakana}]"
WORD_RE = re.compile(rf"{_IDEOGRAPH}|(?:(?!{_IDEOGRAPH})[^\W_])+")
IDEOGRAPH_RE = re.compile(rf"({_IDEOGRAPH})")


def words(text: str) -> list[str]:
    """Lower-cased words of `text` as FTS5's unicode61 tokenizer cuts `index_text(text)`."""
    return WORD_RE.findall(text.lower())


def closed_prefixes(text: str) -> str:
    """`text` with the hyphen after a prefix closed (`non-current`: `noncurrent`,
    `pre-tax`: `pretax`, `non-USD`: `nonUSD`), so that a label and a name that spell a
    word either way compare equal, and "non-USD" is one word, not "non" and "USD"."""
    return _PREFIXED.sub(r"\1", text)


_PREFIXED = re.compile(r"\b(non|pre|post|sub|re|co|multi|inter|intra|semi)-(?=[^\W\d_])",
                       re.IGNORECASE)


def index_text(text: str) -> str:
    """`text` with a space around every ideograph, for a tokenizer that splits on spaces."""
    return IDEOGRAPH_RE.sub(r" \1 ", text) if IDEOGRAPH_RE.search(text) else text


def keywords(text: str) -> list[str]:
    """The words of `text` worth searching for: no stopwords, no lone letters, no repeats."""
    seen: dict[str, None] = {}
    for word in words(text):
        if word in STOPWORDS or (len(word) == 1 and not word.isdigit()
                                 and not IDEOGRAPH_RE.match(word)):
            continue
        seen.setdefault(word, None)
    return list(seen)


IRREGULAR = {"grew": "grow", "grown": "grow", "growth": "grow", "rose": "rise",
             "risen": "rise", "fell": "fall", "fallen": "fall", "sold": "sell", "paid": "pay",
             "payment": "pay", "payments": "pay", "spent": "spend", "built": "build",
             "lost": "lose", "losses": "loss", "held": "hold", "bought": "buy", "made": "make",
             "won": "win", "led": "lead"}
"""Irregular English forms, mapped to the verb they come from (before the suffix rules)."""


_ISE = re.compile(r"(?<=\w{3})is(ation|ations|ed|es|e|ing|er|ers)$")
_OUR_ROOTS = ("labo", "favo", "behavio", "colo", "hono", "harbo", "neighbo", "vapo", "endeavo")
"""Words spelt "-our" in British English and "-or" in American (`labour`, `favourable`)."""
_OUR = re.compile(rf"({'|'.join(_OUR_ROOTS)})ur")
_AMERICAN = {"centre": "center", "centres": "centers", "programme": "program",
             "programmes": "programs", "licence": "license", "licences": "licenses",
             "defence": "defense", "cheque": "check", "cheques": "checks"}
"""British spellings written as American ones (`amortisation`, `capitalised`, `labour`,
`favourable`, `centre`), so that a filing of either spelling and a question or library
name of the other compare equal."""


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A light stem, so that word forms compare equal outside FTS5: `report`/`reports`,
    `company`/`companies`, `deliver`/`delivered`/`deliveries`, `ship`/`shipped`,
    `rate`/`rates`/`rated`, `appointed`/`appointment`, `amortisation`/`amortization`.
    Only ever compared with other stems."""
    word = IRREGULAR.get(word, word)
    if len(word) <= 3 or not word.isascii() or not word.isalpha():
        return word
    word = _AMERICAN.get(word) or _OUR.sub(r"\1r", _ISE.sub(r"iz\1", word))
    for suffix, keep in (("ies", "y"), ("ied", "y"), ("ing", ""), ("ed", ""), ("es", ""),
                         ("s", "")):
        if not word.endswith(suffix) or len(word) - len(suffix) < 3:
            continue
        if suffix == "es" and not word.endswith(("ses", "xes", "zes", "ches", "shes")):
            continue
        if suffix == "s" and word.endswith(("ss", "us", "is")):
            continue
        word = word[: len(word) - len(suffix)] + keep
        if suffix in ("ing", "ed") and len(word) > 3 and word[-1] == word[-2] \
                and word[-1] not in "lsz":
            word = word[:-1]  # shipped -> ship
        break
    for suffix in ("ment", "ive"):  # appointment -> appoint, effective -> effect
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            word = word[: -len(suffix)]
            break
    if len(word) > 4 and word.endswith("y"):
        word = word[:-1]  # delivery -> deliver
    if len(word) >= 4 and word.endswith("e"):
        word = word[:-1]  # rate, rated -> rat
    return word


def stems(text: str) -> set[str]:
    return {stem(w) for w in words(text)}


def fts_query(text: str) -> str | None:
    """An FTS5 MATCH expression: each keyword quoted, OR-ed; None when none is left."""
    terms = keywords(text)
    return " OR ".join(f'"{t}"' for t in terms) or None


SURFACE = re.compile(r"[\p{Han}\p{Hiragana}\p{Katakana}]|(?:(?![\p{Han}\p{Hiragana}\p{Katakana}])[^\W_])+")
"""A word as written, for messages that quote a source or question."""


SHORT_TEXT = 500
"""Texts up to this long (titles, sources) have their words cached; contents do not."""


def name_words(text: str) -> tuple[str, ...]:
    """The stemmed words of `text` that name a thing: periods and filler words gone."""
    return _name_words(text) if len(text) <= SHORT_TEXT else _name_words.__wrapped__(text)


@lru_cache(maxsize=16384)
def _name_words(text: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(stem(w) for w in words(without_periods(text))
                               if w not in STOPWORDS and not (len(w) == 1 and w.isascii()
                                                              and not w.isdigit())))


def all_words(text: str) -> frozenset[str]:
    """Every stemmed word of `text`."""
    return _all_words(text) if len(text) <= SHORT_TEXT else _all_words.__wrapped__(text)


@lru_cache(maxsize=16384)
def _all_words(text: str) -> frozenset[str]:
    return frozenset(stem(w) for w in words(text))


def holds_all(text: str, wanted: frozenset[str] | set[str]) -> bool:
    """Whether `text` has a word of each stem in `wanted` (`wanted <= all_words(text)`),
    reading a long text only for words that can have those stems, and only until each
    is found: a long filing costs one pass of one pattern, not a stem for every word."""
    if not wanted:
        return True
    if len(text) <= SHORT_TEXT:
        return set(wanted) <= all_words(text)
    left = set(wanted)
    for m in _stem_finder(frozenset(wanted)).finditer(text):
        left.discard(stem(m[0].lower()))
        if not left:
            return True
    return False


def word_starts(wanted: frozenset[str]) -> tuple[list[str], list[str], list[str]]:
    """What the words whose stem may be one of `wanted` look like: (beginnings, whole
    irregular forms, ideographs). A stem is its word cut short (a final `y` may stand
    for `ies`), but for the irregular forms that stem to it."""
    ideographs = sorted(w for w in wanted if IDEOGRAPH_RE.fullmatch(w))
    cut = {w[:-1] if w.endswith("y") and len(w) > 1 else w for w in wanted if w not in ideographs}
    # a British spelling stems to the American one: its word begins the British way
    begins = sorted(cut | {_BRITISH.sub(lambda m: _BRITISH_OF[m[0]], w) for w in cut},
                    key=len, reverse=True)
    irregular = sorted(form for form, base in [*IRREGULAR.items(), *_AMERICAN.items()]
                       if stem(base) in wanted)
    return begins, irregular, ideographs


_BRITISH_OF = {"iz": "is", **{f"{root}r": f"{root}ur" for root in _OUR_ROOTS}}
_BRITISH = re.compile("|".join(sorted(_BRITISH_OF, key=len, reverse=True)))


@lru_cache(maxsize=1024)
def _stem_finder(wanted: frozenset[str]) -> re.Pattern:
    """A pattern matching every word whose stem may be one of `wanted`."""
    begins, irregular, ideographs = word_starts(wanted)
    word = rf"(?:(?!{_IDEOGRAPH})[^\W_])"
    parts = [rf"(?<!{word})(?:{'|'.join(re.escape(b) for b in [*begins, *irregular])}){word}*"]
    if not begins and not irregular:
        parts = []
    parts += [re.escape(i) for i in ideographs]
    return re.compile("|".join(parts), re.IGNORECASE)
