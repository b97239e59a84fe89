"""The limits a plan meets as it is submitted, before any work that grows with it:
consumes plan source (text, UTF-8 bytes or a decoded JSON dict) or the number of steps
written, produces nothing or a PlanError naming the limit, the count and the setting.

`too_large`: more than `max_chars` characters (a dict counts as compact JSON; bytes
once decoded). `too_many_steps`: more than `max_steps` steps as written, checked before
repair, so that no plan makes repair or the checks work through thousands of steps
that would merge into a few (validate.py checks the repaired plan against it again).
"""

from __future__ import annotations

from shared.config import MAX_PLAN_CHARS, MAX_STEPS
from shared.errors import PlanError
from shared.models import PlanProblem
from shared.plan.json_plan import json_size


def check_size(source: str | bytes | dict, max_chars: int = MAX_PLAN_CHARS) -> None:
    """PlanError (`too_large`) when `source` is more than `max_chars` characters."""
    if isinstance(source, dict):
        size = json_size(source)
    elif isinstance(source, (bytes, bytearray)) and len(source) > max_chars:
        size = len(bytes(source).decode("utf-8-sig", "replace"))  # else chars <= bytes
    else:
        size = len(source) if isinstance(source, (str, bytes, bytearray)) else 0
    if size > max_chars:
        raise too_large(f"{size:,} characters", max_chars)


def too_large(size: str, max_chars: int = MAX_PLAN_CHARS) -> PlanError:
    """The PlanError of a plan of `size` (`20,971,520 characters`), more than `max_chars`."""
    return PlanError(f"plan is too large: {size}, more than the {max_chars:,} characters "
                     "allowed (CHORDAL_MAX_PLAN_CHARS)", [PlanProblem(
                         step=None, code="too_large", message=(
                             f"the plan is {size}, more than the {max_chars:,} characters "
                             "allowed (setting CHORDAL_MAX_PLAN_CHARS); write fewer steps, "
                             "shorter sources and patterns and a shorter answer template"))])


def check_step_count(count: int, max_steps: int = MAX_STEPS) -> None:
    """PlanError (`too_many_steps`) when a plan is written with more than `max_steps` steps."""
    if count > max_steps:
        raise PlanError(f"plan has {count:,} steps, more than the {max_steps} allowed "
                        "(CHORDAL_MAX_STEPS)", [too_many_steps(count, max_steps)])


def too_many_steps(count: int, max_steps: int = MAX_STEPS) -> PlanProblem:
    """The problem of a plan with `count` steps, more than `max_steps`."""
    return PlanProblem(step=None, code="too_many_steps", message=(
        f"the plan has {count:,} steps, more than the {max_steps} allowed (setting "
        "CHORDAL_MAX_STEPS); combine steps (one GET per document, one COMPUTE per result) "
        "or ask a narrower question"))
