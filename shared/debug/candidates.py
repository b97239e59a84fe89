"""Explain a GET that chose no document: consumes its StepResult (the candidates the
matching rules considered, each with the reason it was refused), produces the Diagnosis
that `chordal debug` prints — the nearest candidates and the change that would let the
right one in, or the honest conclusion that the store lacks it."""

from __future__ import annotations

from shared.models import Candidate

from .diagnosis import Diagnosis

SHOWN = 5
"""Candidates a diagnosis lists."""


def get_diagnosis(step_id: str, code: str, cause: str,
                  candidates: list[Candidate]) -> Diagnosis:
    """The Diagnosis of a GET that failed NOT_FOUND or AMBIGUOUS (or a SEARCH that found
    nothing), from the candidates the matching rules judged."""
    shown = candidates[:SHOWN]
    if code == "AMBIGUOUS":
        fits = [c for c in candidates if c.verdict == "fits"]
        fix = ("name one document by its full title or URL: "
               + " or ".join(repr(c.title) for c in fits[:3]))
    elif not shown:
        fix = ("nothing in the store shares a word with the source: index the document "
               "with `chordal index FILE.jsonl`, or fix the source's spelling")
    else:
        fix = _fix(shown[0])
    return Diagnosis(step=step_id, code=code, cause=cause, suggestion=fix,
                     titles=[c.title for c in shown], candidates=shown)


def _fix(nearest: Candidate) -> str:
    reason = nearest.reason
    if reason.startswith(("title names", "about ")) and "the source names" in reason:
        return (f"the store holds {nearest.title!r} (period {nearest.period}), not the period "
                "the source names: ask for that period by its title, or index the document "
                "of the period you want; Chordal will not substitute another period")
    if "outside temporal_scope" in reason:
        return (f"the nearest document is about {nearest.period or 'no stated period'} "
                f"(published {nearest.date or 'on an unknown date'}): widen temporal_scope to "
                "include it, or remove temporal_scope")
    if reason.startswith("no period of its own"):
        return ("give the document a `period` in the corpus (e.g. \"2024-Q3\") or a title "
                "naming it, or raise CHORDAL_PUBLICATION_LAG_DAYS if it was published later")
    if "other titles carry" in reason:
        return (f"the source's words name another document than {nearest.title!r}; name the "
                "document you mean by its full title, or index it")
    if reason.startswith("title lacks"):
        return (f"name the document by its title (source {nearest.title!r}) if that is the "
                "one you mean; otherwise the store does not hold it: index it")
    return f"see why each candidate was refused; the nearest is {nearest.title!r}"
