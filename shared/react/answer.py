"""The answer of a ReAct loop: consumes the model's final text (or the fact that the loop
stopped) and the tool results gathered, produces the `Answer` with evidence footnotes.

Citations: the model is asked to cite results as `[R2]` (or `[E1]`, a ReWOO step in
auto mode); each such marker becomes the footnote numbers of the documents behind that
result (`[1]`, `[1][2]`) — of a SEARCH result, only the documents whose snippets hold a
number the cited sentence states, when there are such. When the text cites nothing,
the marker of a result goes after the first place its value appears in the text; when
even that finds nothing, the text ends with the markers of every document gathered. A result without documents (the
clock, arithmetic over typed numbers) is cited with nothing.
"""

from __future__ import annotations

import re

from shared.models import Answer, Evidence, Footnote, ReactIteration, StepResult
from shared.tools.variables import evidence

_MARKER = re.compile(r"\s?\[\s*\$?([A-Za-z]\w*(?:\s*,\s*\$?[A-Za-z]\w*)*)\s*\]")
_SENTENCE = re.compile(r"(?<=[.!?;])\s+")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_YEAR = re.compile(r"(?:19|20)\d\d")
SHORT_VALUE = 40
"""Values longer than this are not searched for in the answer text."""


class _Notes:
    def __init__(self) -> None:
        self.by_doc: dict[str, Footnote] = {}

    def markers(self, docs: list[Evidence], name: str) -> str:
        numbers = []
        for e in docs:
            note = self.by_doc.setdefault(e.doc_id, Footnote(number=len(self.by_doc) + 1,
                                                             evidence=e))
            if name not in note.variables:
                note.variables.append(name)
            numbers.append(note.number)
        return "".join(f"[{n}]" for n in dict.fromkeys(numbers))


def _cite_markers(text: str, results: dict[str, StepResult], notes: _Notes) -> tuple[str, bool]:
    found = False

    def replace(m: re.Match) -> str:
        nonlocal found
        names = [n.strip().lstrip("$") for n in m[1].split(",")]
        if not all(n in results for n in names):
            return m[0]  # not a citation of ours: [sic], [1], …
        ok = [n for n in names if results[n].status == "ok"]
        found = found or bool(ok)  # a failed result has nothing to cite
        claim = _SENTENCE.split(text[:m.start()])[-1]
        return "".join(notes.markers(_documents(results[n], claim), n) for n in ok)

    return _MARKER.sub(replace, text), found


def _documents(r: StepResult, claim: str) -> list[Evidence]:
    """The documents behind `r` that support `claim`: for a list of snippets with one
    document each (SEARCH), those whose snippet holds a number the claim states."""
    items = r.value if isinstance(r.value, list) else []
    if not items or len(r.documents) != len(items):
        return evidence(r)
    numbers = set(_NUMBER.findall(claim))
    numbers = {x for x in numbers if not _YEAR.fullmatch(x)} or numbers  # "Q3 2023" is context
    chosen = [d for v, d in zip(items, r.documents) if numbers & set(_NUMBER.findall(str(v)))]
    return list({d.doc_id: d for d in chosen}.values()) or evidence(r)


def _cite_values(text: str, results: dict[str, StepResult], notes: _Notes) -> tuple[str, bool]:
    found = False
    for name, r in results.items():
        value = "" if r.value is None or isinstance(r.value, (list, dict)) else str(r.value)
        docs = evidence(r)
        if not docs or not value or len(value) > SHORT_VALUE:
            continue
        m = re.search(rf"(?<![\w.]){re.escape(value)}(?![\w]|\.\d)", text)
        if m:
            found = True
            text = text[:m.end()] + notes.markers(docs, name) + text[m.end():]
    return text, found


def finished_answer(text: str, results: dict[str, StepResult]) -> Answer:
    """The model's final answer with its citations turned into footnotes."""
    ok = {k: r for k, r in results.items() if r.status == "ok"}
    notes = _Notes()
    cited, found = _cite_markers(text.strip(), results, notes)
    if not found:
        cited, found = _cite_values(cited, ok, notes)
    if not found:
        tail = "".join(notes.markers(evidence(r), k) for k, r in ok.items() if evidence(r))
        cited = f"{cited} {tail}".rstrip() if tail else cited
    return Answer(text=cited or "(the model gave an empty answer)",
                  footnotes=list(notes.by_doc.values()))


def stopped_answer(iterations: list[ReactIteration], results: dict[str, StepResult],
                   why: str) -> Answer:
    """What a loop that ended without `finish` reports: that it stopped, why, and the
    evidence it gathered (each result with its observation and footnotes)."""
    notes = _Notes()
    lines = [f"I stopped without a final answer: {why}."]
    gathered = [it for it in iterations if it.action_id]
    if gathered:
        lines.append("Evidence gathered:")
    for it in gathered:
        name = f"R{it.n}"
        r = results.get(name)
        marks = notes.markers(evidence(r), name) if r is not None and r.status == "ok" else ""
        lines.append(f"- {name} {it.tool} {_short(it.tool_input)}: "
                     f"{' '.join(it.observation.split())[:200]}{marks}")
    if not gathered:
        lines.append("No tool returned evidence.")
    return Answer(text="\n".join(lines), footnotes=list(notes.by_doc.values()),
                  missing=[f"no final answer: {why}"], complete=False)


def _short(value: object) -> str:
    text = value if isinstance(value, str) else repr(value)
    text = " ".join(str(text).split())
    return repr(text[:60] + ("…" if len(text) > 60 else ""))
