"""Search terms: consumes free text (a question, a GET source), produces the keywords
search backends match on and a safe SQLite FTS5 query built from them.

User text never reaches FTS5 as syntax: it is cut into words, stopwords and FTS5
operators drop out, and each remaining word is quoted.
"""

from __future__ import annotations

import re

STOPWORDS = frozenset("""
a about after all also am an and any are as at be been before being but by can could
did do does doing during for from had has have having he her here him his how i if in
into is it its me more most my no nor not of off on once only or other our out over own
same she should so some such than that the their them then there these they this those
through to too under until up very was we were what when where which while who whom why
will with would you your near many much
""".split())
"""Words too common to tell documents apart (and FTS5's `NEAR`, `AND`, `OR`, `NOT`)."""

_WORD_RE = re.compile(r"[^\W_]+")


def words(text: str) -> list[str]:
    """Lower-cased words of `text` as FTS5's unicode61 tokenizer cuts them."""
    return _WORD_RE.findall(text.lower())


def keywords(text: str) -> list[str]:
    """The words of `text` worth searching for: no stopwords, no lone letters, no repeats."""
    seen: dict[str, None] = {}
    for word in words(text):
        if word in STOPWORDS or (len(word) == 1 and not word.isdigit()):
            continue
        seen.setdefault(word, None)
    return list(seen)


def stem(word: str) -> str:
    """A crude stem so that `reports` and `report` compare equal outside FTS5."""
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def stems(text: str) -> set[str]:
    return {stem(w) for w in words(text)}


def fts_query(text: str) -> str | None:
    """An FTS5 MATCH expression: each keyword quoted, OR-ed; None when none is left."""
    terms = keywords(text)
    return " OR ".join(f'"{t}"' for t in terms) or None
