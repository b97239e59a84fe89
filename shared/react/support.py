"""Whether a ReAct answer rests on what the loop read: consumes the text the model gave
`finish`, the question and the loop's results; produces the feedback that sends it back
(None when the answer may stand).

A small model (SmolLM2-135M in bench/real_model) called `finish` on its first turn, with
an answer and a figure it had read nowhere; the query ended `done`. So `finish` is
refused, with the reason as the iteration's feedback, while no tool has returned a result,
and when the answer states a figure that neither the question, nor any result, nor the
full text of a document behind a result holds (a search shows snippets; the document
it found may state the figure further on; citations such as [R2] are not figures). The
loop goes on; at its last iteration it ends with the evidence it gathered and no answer
of the model's.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from shared.errors import StoreError
from shared.models import Evidence, StepResult
from shared.plan.template_evidence import figures
from shared.search import SearchBackend
from shared.tools.variables import unique_evidence

_CITATION = re.compile(r"\[[^\]]*\]")


def unsupported(answer: str, question: str, results: dict[str, StepResult],
                contents: Callable[[list[Evidence]], list[str]] = lambda docs: []) -> str | None:
    """The feedback for a `finish` whose answer is not supported, or None; `contents`
    gives the full text of documents (document_texts)."""
    read = [r for r in results.values() if r.status == "ok" and r.value not in (None, "", [])]
    if not read:
        return ("finish refused: no tool has returned anything yet, so nothing supports an "
                "answer; look it up first (get a document, or search)")
    seen = figures(question)
    for r in read:
        seen |= figures(r.value if isinstance(r.value, str) else json.dumps(r.value))
    stated = figures(_CITATION.sub(" ", answer)) - seen
    if stated:  # read further: the documents the results came from, whole
        for text in contents(unique_evidence(read)):
            seen |= figures(text)
        stated -= seen
    if stated:
        listed = ", ".join(f"{f:f}" for f in sorted(stated))
        return (f"finish refused: the answer states {listed}, which neither the question nor "
                "any result contains; answer with the figures the results give, citing "
                "them as [R1], or look further")
    return None


def document_texts(backend: SearchBackend | None, docs: list[Evidence]) -> list[str]:
    """The full text of each of `docs` the search store still has (found by title, kept
    only when the id is the same); none when the store cannot answer."""
    if backend is None:
        return []
    texts = []
    for doc in docs:
        try:
            hits = backend.search(doc.title, 5)
        except StoreError:
            return texts
        # one text per document: the store ranks pages, so a document may come back twice
        texts += list({h.document.id: h.document.content for h in hits
                       if h.document.id == doc.doc_id}.values())
    return texts
