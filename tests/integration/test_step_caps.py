"""The caps on what a step and a query may store, through a stack of their own whose
caps are small: the step or query over them gets a step error naming the setting, and
the query still ends."""

from __future__ import annotations

import pytest

from shared.config import Settings
from shared.ingest import load_jsonl
from shared.search import Document, open_backend
from shared.stack.embedded import Stack

from ..conftest import DATA, Pipeline, free_port

pytestmark = pytest.mark.integration
STEP_CAP, QUERY_CAP = 4096, 8192


@pytest.fixture(scope="module")
def capped(tmp_path_factory) -> Pipeline:
    home = tmp_path_factory.mktemp("chordal-caps-home")
    settings = Settings(home=home, redis_port=free_port(), redis_url=None,
                        search_db=home / "search.db", max_step_bytes=STEP_CAP,
                        max_query_bytes=QUERY_CAP)
    backend = open_backend(settings)
    backend.add(load_jsonl(DATA / "corpus.jsonl"))
    backend.add([Document(id=f"caps-maple-{n}", title=f"Maple Foods Report part {n}",
                          date=f"2024-{n:02d}-15", content=f"Maple Foods part {n}. " * 400)
                 for n in range(1, 13)])
    backend.close()
    with Stack(settings) as stack:
        p = Pipeline(settings.model_copy(update={"redis_url": stack.redis_url}))
        p.stack = stack
        yield p


def get(step_id: str, source: str, **kw) -> dict:
    return {"id": step_id, "operation": "GET", "source": source, "output_var": f"$D{step_id}", **kw}


def test_a_step_over_the_step_cap_is_a_step_error_naming_the_setting(capped):
    record = capped.ask("too much", {"steps": [get("E1", "Maple Foods Report", top_k=9)],
                                     "answer": "{{ DE1 }}"})
    assert record.status in ("done", "failed")
    (step,) = record.steps
    assert (step.status, step.error_code) == ("error", "STEP_TOO_LARGE")
    assert "CHORDAL_MAX_STEP_BYTES (4,096)" in step.error_message
    small = capped.ask("enough", {"steps": [get("E1", "Maple Foods Report part 3")]})
    assert small.steps[0].status == "ok"  # the cap is per step: one document fits


def test_a_query_over_the_query_cap_stores_errors_past_it_and_still_ends(capped):
    steps = [get(f"E{n}", f"Maple Foods Report part {n}") for n in range(1, 13)]
    record = capped.ask("many", {"steps": steps})
    assert record.status in ("done", "failed")
    codes = [s.error_code for s in record.steps]
    assert codes[0] is None and "QUERY_TOO_LARGE" in codes, codes
    refused = next(s for s in record.steps if s.error_code == "QUERY_TOO_LARGE")
    assert "CHORDAL_MAX_QUERY_BYTES (8,192)" in refused.error_message
    stored = int(capped.store.r.hget(f"chordal:run:{record.query_id}", "stored_bytes"))
    assert stored <= QUERY_CAP + 9 * 1024  # only small errors stored past the cap
