"""What the workers write to their logs stays line-sized whatever a plan quotes, through
the real stack (`pipeline`: real Redis, real worker processes writing their log files)."""

from __future__ import annotations

import pytest

from shared.broker.log_lines import MAX_LOG_CHARS
from shared.models.plan import MAX_SOURCE_CHARS

pytestmark = pytest.mark.integration


def test_a_get_of_the_longest_source_logs_its_failure_in_one_short_line(pipeline):
    source = ("Tesla Q3 2023 " + "zq " * 1000)[:MAX_SOURCE_CHARS]  # quoted whole, ~3x over
    record = pipeline.ask("q", {"steps": [{"id": "E1", "operation": "GET", "source": source}]})
    assert record.steps[0].error_code == "NOT_FOUND"  # whose message quotes the source
    logged = [line for worker in pipeline.stack.workers if worker.log_path.exists()
              for line in worker.log_path.read_text(errors="replace").splitlines()
              if record.query_id in line]
    failed = [line for line in logged if f"step {record.query_id}:E1 failed: NOT_FOUND" in line]
    assert failed and failed[0].endswith(" more characters]")
    assert max(len(line) for line in logged) < MAX_LOG_CHARS + 200
