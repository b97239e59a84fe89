"""Search snippets: consumes a document's text and the search text it was found for,
produces a short passage around the searched words, each marked `**word**`.

The cost is bounded whatever the document: the text is scanned for the search words
only until `MAX_MATCHES` of them have been seen (or `MAX_CANDIDATES` words that merely
begin like one), and the passage is the window among those matches that holds the most
distinct search words, earliest first. SQLite FTS5's own `snippet()` weighs every
match in the document, and its time grows faster than their number: on a 5 MB document
that holds the searched word 40,000 times it took minutes.

Words match as the search store matches them, closely enough for a passage: the same
word in any case, or another form with the same stem (`report`, `reports`,
`reported`; shared/search/terms.py). A document that matched on forms this misses gets
its opening words, as FTS5's snippet gives a document without a match in the column.
"""

from __future__ import annotations

from functools import lru_cache

import regex

from .terms import IDEOGRAPH_RE, WORD_RE, keywords, stem

SNIPPET_WORDS = 16
"""Words in a snippet (FTS5's snippet() was asked for 16 tokens)."""
WORDS_BEFORE = 3
"""Words of context a snippet keeps before its first match."""
MAX_MATCHES = 256
"""Matches of the search words read from one document before the snippet is chosen."""
MAX_CANDIDATES = 4 * MAX_MATCHES
"""Words read that begin like a search word (matches or not) before the scan stops."""
MAX_TERMS = 32
"""Search words a snippet looks for (the first ones): the matcher is one pattern of
them, whose size would otherwise grow with the query."""
ELLIPSIS = "…"
_EDGE_BEFORE = regex.compile(r"[^\s\w]*$")
_EDGE_AFTER = regex.compile(r"[^\s\w]*")
MARK = "**"


def snippet(text: str, query: str) -> str:
    """The passage of `text` that best shows `query`'s words, marked; the opening words
    of `text` when none of them is found."""
    found = _matcher(tuple(keywords(query)[:MAX_TERMS]))
    matches = found(text) if found is not None else []
    windows = [_window(text, s) for s, _, _ in matches] or [_window(text, 0)]
    best = max(windows, key=lambda w: (len({k for s, e, k in matches
                                            if s >= w[0] and e <= w[1]}), -w[0]))
    return _passage(text, best, matches)


@lru_cache(maxsize=256)
def _matcher(terms: tuple[str, ...]):
    """A function giving the (start, end, stem) of each match of `terms` in a text, in
    order, at most MAX_MATCHES; None without terms."""
    if not terms:
        return None
    stems = {stem(t): t for t in terms}
    prefixes = sorted({_prefix(t) for t in terms}, key=len, reverse=True)
    plain = [regex.escape(p) for p in prefixes if not IDEOGRAPH_RE.fullmatch(p)]
    ideographs = [regex.escape(p) for p in prefixes if IDEOGRAPH_RE.fullmatch(p)]
    parts = ([rf"(?<![^\W_])(?:{'|'.join(plain)})[^\W_]*"] if plain else []) + ideographs
    pattern = regex.compile("|".join(parts), regex.IGNORECASE)

    def matches(text: str) -> list[tuple[int, int, str]]:
        found = []
        for seen, m in enumerate(pattern.finditer(text), 1):
            word = m[0].lower()
            key = word if IDEOGRAPH_RE.fullmatch(word) else stem(word)
            if key in stems:
                found.append((m.start(), m.end(), key))
            if len(found) >= MAX_MATCHES or seen >= MAX_CANDIDATES:
                break
        return found
    return matches


def _prefix(term: str) -> str:
    """What every form of `term` begins with: its stem, cut at the first place a form
    may differ (company -> compan, rate -> rat)."""
    base = stem(term)
    return base if len(base) <= len(term) and term.startswith(base) else term


def _window(text: str, at: int) -> tuple[int, int]:
    """The span of SNIPPET_WORDS words of `text` that opens WORDS_BEFORE words before
    offset `at` (or at the start of the text)."""
    reach = max(0, at - 40 * WORDS_BEFORE)
    before = [m.start() for m in WORD_RE.finditer(text, reach, at)][-WORDS_BEFORE:]
    start = before[0] if before and (len(before) == WORDS_BEFORE or reach > 0) else 0
    end = start
    for n, m in enumerate(WORD_RE.finditer(text, start), 1):
        end = m.end()
        if n >= SNIPPET_WORDS:
            break
    # the signs that belong to the words at the edges: "$5", "7%", "(12)."
    start = _EDGE_BEFORE.search(text, max(0, start - 8), start).start()
    end = _EDGE_AFTER.match(text, end, end + 8).end()
    return start, end


def _passage(text: str, window: tuple[int, int], matches: list[tuple[int, int, str]]) -> str:
    """The `window` of `text` with the `matches` inside marked and an ellipsis on each
    side where text was left out."""
    start, end = window
    pieces, cursor = [], start
    for s, e, _ in matches:
        if s >= start and e <= end:
            pieces += [text[cursor:s], MARK, text[s:e], MARK]
            cursor = e
    pieces.append(text[cursor:end])
    return (ELLIPSIS if start > 0 else "") + "".join(pieces) + (ELLIPSIS if end < len(text) else "")
