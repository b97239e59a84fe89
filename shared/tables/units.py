"""A table's unit and scale: consumes the text around a table (its title, the notes above
its header, its header rows), produces the currency its money is in, the power of ten its
figures are in, and the rows that text excepts from that scale.

"(In thousands)" -> 3, "$ in millions" -> USD, 6, "(Millions)" -> 6, "(Dollars in
millions)" -> USD, 6, "€m" -> EUR, 6, "$000" -> USD, 3, "RMB’Million" -> CNY, 6,
"(in thousands, except per share data)" -> 3, with per-share rows at 0.
"""

from __future__ import annotations

import regex

from shared.tables.quantities import CURRENCIES

_SCALE_WORDS = {"thousand": 3, "million": 6, "billion": 9, "trillion": 12}
_F = regex.IGNORECASE | regex.VERSION1
_CODES = r"us\$|usd|eur|gbp|rmb|cny|hk\$|a\$|c\$|s\$|nz\$|chf|jpy|inr|aud|cad|sgd|zar|sek|nok|dkk"
"""Currency codes and prefixed signs a unit line writes its scale after (`CHF m`, `S$'000`)."""
_SCALE = regex.compile(
    r"\b(?<w>thousands|millions|billions|trillions)\b"
    r"|(?:^|[\s(])(?:in\s+)?(?<w>thousand|million|billion)s?\s+of\s+(?:u\.?s\.?\s+)?dollars"
    r"|(?:[$€£¥]|\b(?:CODES))\s*[’'‘]?\s*(?<k>000)s?\b"
    r"|\b(?:r|rm)[’'‘](?<k>000)s?\b"
    r"|(?:^|[\s(])[’'‘](?<k>000)[’'‘]?s?\b"
    r"|(?:^|\s)\(\s*(?<k>000)[’'‘]?s?\s*\)|(?:^|[\s(])(?<k>000)[’'‘]?s\b"
    r"|(?:[$€£¥]|\b(?:CODES))\s*[’'‘]?\s*(?<m>m|mn|million)\b"
    r"|(?:[$€£¥]|\b(?:CODES))\s*[’'‘]?\s*(?<b>b|bn|billion)\b"
    r"|\bin\s+(?<w>thousand|million|billion)\b".replace("CODES", _CODES), _F)
_CURRENCY = regex.compile(
    r"(?<sign>us\$|[$€£¥₹])|\b(?<code>usd|eur|gbp|jpy|cny|rmb|inr|chf|cad|aud)\b"
    r"|\b(?<word>u\.?s\.?\s+dollars?|dollars?|euros?|pounds?\s+sterling|yen|renminbi)\b", _F)
_WORDS = {"euro": "EUR", "pound sterling": "GBP", "pounds sterling": "GBP", "yen": "JPY",
          "renminbi": "CNY"}
_EXCEPT = regex.compile(r"\bexcept\b(?<what>[^)]*)", _F)
PER_SHARE = regex.compile(r"\bper\s+(?:common\s+|ordinary\s+|diluted\s+|basic\s+)?share\b"
                          r"|\bper\s+unit\b|\bearnings\s+per\b|\bEPS\b"
                          r"|\bdividends?\s+declared\s+per", _F)
"""A per-share row: money in units, whatever the table's scale."""
SHARE_COUNT = regex.compile(
    r"^(?:[-–]\s*)?(?:(?:weighted[\s-]+)?average\s+|basic\s+|diluted\s+)?(?:number\s+of\s+)?"
    r"(?:common\s+|ordinary\s+|outstanding\s+)?shares\b|\bnumber\s+of\s+(?:common\s+)?shares\b"
    r"|\bshares\s+(?:used|outstanding)\b", _F)
"""A row that counts shares: a number, never money."""
PEOPLE = regex.compile(r"\bemployees\b|\bheadcount\b|\b(?:share|stock)?holders\s+of\s+record\b"
                       r"|\bnumber\s+of\s+(?:share|stock)holders\b", _F)
"""A row that counts people: in units, whatever the table's scale."""


def scale_in(text: str) -> int | None:
    """The power of ten `text` says figures are in, or None when it names none (or names
    two different ones, which a reader cannot choose between)."""
    found = _scales(text or "")
    if len(found) > 1 and (m := _EXCEPT.search(text or "")):
        # "(In millions, except number of shares which are reflected in thousands …)"
        found = _scales(text[:m.start()])
    return found.pop() if len(found) == 1 else None


def unit_clause(text: str) -> str | None:
    """The part of a sentence that states a table's scale, when it states one: its
    parenthesis ("Revenue is as follows (in thousands, except percentages):" ->
    "(in thousands, except percentages)"), else the words from the scale on ("…, in
    millions:" -> "in millions"); None when it states none."""
    if scale_in(text) is None:
        return None
    for m in regex.finditer(r"\([^()]*\)", text):
        if scale_in(m.group()) is not None:
            return m.group()
    rates = [m.span() for m in _PER.finditer(text)]
    for m in _SCALE.finditer(text):
        if not any(a <= m.start() < b for a, b in rates):
            start = m.start() - 3 if text[max(0, m.start() - 3):m.start()].lower() == "in " \
                else m.start()
            return text[start:].strip(" :.") or None
    return None


_PER = regex.compile(r"\bper\s+(?:(?:[$€£¥]|\b(?:CODES))\s*)?(?:thousand|million|billion|mn|m|bn|k|"
                    r"'?000)\b".replace("CODES", _CODES), _F)
"""A rate's denominator ("Normalised per $ million of revenues"): no scale of figures."""


def _scales(text: str) -> set[int]:
    found = set()
    for m in _SCALE.finditer(_PER.sub(" ", text)):
        if m["w"]:
            found.add(_SCALE_WORDS[m["w"].lower().rstrip("s")])
        elif m["k"]:
            found.add(3)
        elif m["m"]:
            found.add(6)
        elif m["b"]:
            found.add(9)
    return found


def names_more(text: str) -> bool:
    """Whether `text`, which states a scale, also names what a column holds (`USD
    denominated RMB’Million`, `Total $m`): a header, not only a unit line (`$'000`,
    `(in thousands, except per share data)`)."""
    rest = _CURRENCY.sub(" ", _SCALE.sub(" ", text or ""))
    return any(w.lower() not in _UNIT_WORDS for w in regex.findall(r"\p{L}+", rest))


_UNIT_WORDS = frozenset("""in of the and a amounts amount dollars dollar currency except per share
shares data unaudited expressed u s which are is reflected otherwise noted stated indicated
where all figures values numbers rounded to nearest m mn k bn""".split())


def currency_in(text: str) -> str | None:
    """The currency (ISO 4217) `text` names, or None for none or more than one."""
    found = set()
    for m in _CURRENCY.finditer(text or ""):
        if m["sign"] or m["code"]:
            code = CURRENCIES.get((m["sign"] or m["code"]).lower())
        else:
            word = " ".join(m["word"].lower().replace(".", "").split())
            code = "USD" if "dollar" in word else _WORDS.get(word.rstrip("s"), _WORDS.get(word))
        if code:
            found.add(code)
    return found.pop() if len(found) == 1 else None


_SCALE_EXCEPT = regex.compile(r"(?P<scale>\b(?:thousands|millions|billions)\b|'000s?)"
                              r"[^()\n]{0,20}?" + _EXCEPT.pattern, regex.IGNORECASE)


def without_exceptions(text: str) -> str:
    """`text` without the rows its scale leaves out ("(in thousands, except per share
    amounts)" -> "(in thousands)"): which rows are in units, no words of any row."""
    return _SCALE_EXCEPT.sub(r"\g<scale>", text)


def excepted(text: str) -> tuple[bool, bool]:
    """(per-share rows, share-count rows): which rows `text` ("in thousands, except share
    and per share data") takes out of the table's scale."""
    per_share = shares = False
    for m in _EXCEPT.finditer(text or ""):
        what = m["what"]
        per_share |= bool(PER_SHARE.search(what))
        shares |= bool(regex.search(r"\bshares?\b", PER_SHARE.sub(" ", what), _F))
    return per_share, shares
