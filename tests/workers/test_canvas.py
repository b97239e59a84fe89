"""What Flower shows of a sent step's arguments: the payload as Python writes it, the
action_id first, cut to Celery's bound."""

from __future__ import annotations

from celery.utils.saferepr import saferepr

from shared.models import GetStep, StepTask
from workers.canvas import REPR_CHARS, short_repr


def args(source: str) -> tuple[dict]:
    task = StepTask(query_id="q1", step=GetStep(id="E1", operation="GET", source=source))
    return (task.model_dump(mode="json"),)


def test_a_step_shows_its_payload_as_celery_would_write_it():
    sent = args("Tesla Q3 2023 Financial Report")
    assert short_repr(sent) == saferepr(sent, REPR_CHARS, maxlevels=3)
    assert short_repr(sent).startswith("({'action_id': 'q1:E1'")


def test_a_step_with_a_long_source_shows_a_line_of_bounded_length():
    shown = short_repr(args("Tesla " * 300))  # 1,800 characters
    assert len(shown) == REPR_CHARS and shown.startswith("({'action_id': 'q1:E1'")
    assert shown.endswith("...")
