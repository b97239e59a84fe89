"""A ReAct `finish` stands only on what the loop read (shared/react/support.py)."""

from __future__ import annotations

from shared.models import Evidence, StepResult
from shared.react.support import unsupported

QUESTION = "How fast is the Kestrel KX-900's core clock?"
DATASHEET = Evidence(doc_id="d1", title="Kestrel KX-900 Microcontroller Datasheet")


def result(value, status="ok", documents=()) -> dict[str, StepResult]:
    return {"R1": StepResult(action_id="q:R1", step_id="R1", operation="SEARCH", status=status,
                             value=value, documents=list(documents))}


def test_finishing_before_anything_was_read_is_refused():
    assert "no tool has returned anything" in unsupported("It runs at 480 MHz.", QUESTION, {})
    failed = result(None, status="error")
    assert "no tool has returned anything" in unsupported("480 MHz", QUESTION, failed)


def test_a_figure_no_result_holds_is_named():
    read = result(["The KX-900 has a core clock of up to 480 MHz."])
    feedback = unsupported("It runs at 520 MHz [R1].", QUESTION, read)
    assert "states 520" in feedback and "480" not in feedback


def test_figures_from_the_results_the_question_and_citations_pass():
    read = result(["The KX-900 has a core clock of up to 480 MHz."])
    assert unsupported("The KX-900 runs at up to 480 MHz [R1].", QUESTION, read) is None
    assert unsupported("Up to 480.0 MHz [R1][2].", QUESTION, read) is None


def test_a_figure_further_on_in_a_document_a_snippet_came_from_passes():
    snippet = result(["The KX-900 has a core clock of up to…"], documents=[DATASHEET])
    whole = "The KX-900 has a core clock of up to 480 MHz and 2 MB of flash."
    assert unsupported("480 MHz [R1]", QUESTION, snippet, lambda docs: [whole]) is None
    assert "states 480" in unsupported("480 MHz [R1]", QUESTION, snippet, lambda docs: [])
