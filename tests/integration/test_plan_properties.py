"""Every plan that passes the checks runs to a terminal state on real workers, and random
documents and patterns never crash a step (hypothesis)."""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shared.errors import PlanError
from shared.models import ExtractStep, Plan, StepTask
from shared.plan.repair import prepare_plan
from shared.search import Document, SqliteSearch
from shared.journey.steps import run_step

pytestmark = pytest.mark.integration

TITLES = ["Tesla Q3 2023 Financial Report", "Northwind Motors Q3 2023 Financial Report",
          "Voltara Energy Q3 2023 Quarterly Results", "No Such Document Anywhere"]
PATTERNS = [r"revenue of \$(\d+(?:\.\d+)?)", r"(\d+(?:\.\d+)?)%", r"margin was (\d+(?:\.\d+)?)", r"(zzz)",
            r"(\w+\s?)+$x"]
EXPRESSIONS = ["$A - $B", "$A / ($B - $B)", "max($A, $B) * 2", "$A > $B", "abs($A)"]


@st.composite
def plans(draw) -> dict:
    steps, texts = [], []
    for i in range(draw(st.integers(1, 3))):
        steps.append({"id": f"G{i}", "operation": "GET", "source": draw(st.sampled_from(TITLES)),
                      "output_var": f"$D{i}", **({"top_k": 2} if draw(st.booleans()) else {})})
        steps.append({"id": f"X{i}", "operation": "EXTRACT", "source": f"$D{i}",
                      "pattern": draw(st.sampled_from(PATTERNS)), "output_var": f"$V{i}",
                      **({"fallback": "0"} if draw(st.booleans()) else {})})
        texts.append(f"$V{i}")
    a, b = texts[0], texts[-1]
    tail = draw(st.sampled_from(["COMPUTE", "MERGE", "IF", "VALIDATE", "ARBITRATE", None]))
    if tail == "COMPUTE":
        expr = draw(st.sampled_from(EXPRESSIONS)).replace("$A", a).replace("$B", b)
        steps.append({"id": "T", "operation": "COMPUTE", "expression": expr})
    elif tail == "MERGE":
        steps.append({"id": "T", "operation": "MERGE", "sources": texts, "strategy": "unique"})
    elif tail == "IF":
        steps.append({"id": "T", "operation": "IF", "condition": f"{a} > 10", "then": a,
                      "else": "small"})
    elif tail == "VALIDATE":
        steps.append({"id": "T", "operation": "VALIDATE", "value": a, "min": 1, "max": 100})
    elif tail == "ARBITRATE" and len(texts) > 1:
        steps.append({"id": "T", "operation": "ARBITRATE", "sources": texts,
                      "prefer": ["newest", "majority"]})
    return {"domain": draw(st.sampled_from(["generic", "finance", "legal", "medical"])),
            "steps": steps}


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(plans())
def test_every_plan_that_passes_the_checks_reaches_a_terminal_state_with_one_answer(pipeline, raw):
    try:
        plan, _ = prepare_plan(Plan.model_validate(raw))
    except PlanError:
        return
    record = pipeline.ask("property", plan, timeout=60)
    assert record.status == "done", record.error
    assert len(record.steps) == len(plan.steps)
    assert record.answer is not None and record.finalizer_runs == 1
    assert record.answer.complete == (not record.answer.missing)
    ids = {s.id for s in plan.steps}
    for gap in record.answer.missing:  # every gap names the step behind it
        assert any(step_id in gap for step_id in ids), gap


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(content=st.text(min_size=1, max_size=400).filter(str.strip), pattern=st.text(max_size=20))
def test_random_documents_and_patterns_never_crash_an_extract_step(pipeline, tmp_path_factory,
                                                                     content, pattern):
    home = tmp_path_factory.mktemp("fuzz")
    backend = SqliteSearch(home / "s.db")
    backend.add([Document(id="d", title="Doc", content=content)])
    query_id = f"fuzz-{time.time_ns()}"
    get = StepTask(query_id=query_id, step={"id": "G", "operation": "GET", "source": "Doc",
                                            "output_var": "$D"})
    extract = StepTask(query_id=query_id, inputs={"D": "G"}, step=ExtractStep(
        id="X", operation="EXTRACT", source="$D", pattern=pattern or "x"))
    for task in (get, extract):
        result = run_step(task, pipeline.store, backend)
        assert result.status in ("ok", "error")
        assert result.status == "ok" or result.error_code  # errors always carry a code
