"""What every tool returns: a ToolOutput, or a raised ToolError (see shared/errors.py);
and what its check of a step's own fields returns before it runs: `Finding`s.

The executor wraps either into a StepResult; tools never touch Redis or Celery.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from shared.models import Candidate, Evidence
from shared.models.quantity import Quantity

Finding = tuple[str, str]
"""`(code, message)`: one problem with a step's own fields, found without running it; the
message names the step and the field and does not quote the field's text."""


@dataclass
class ToolOutput:
    value: Any
    """JSON-serializable value bound to the step's output variable (Decimal → str)."""
    confidence: str
    """Which layer produced the value (`title_match`, `pattern`, `fallback`, `computed`)."""
    document: Evidence | None = None
    inputs: list[str] = field(default_factory=list)
    documents: list[Evidence] = field(default_factory=list)
    """Every document behind a list value."""
    note: str | None = None
    """Why the tool decided as it did."""
    candidates: list[Candidate] = field(default_factory=list)
    """The documents a GET considered, with their verdicts."""
    quote: str | None = None
    """The sentence of `document` the value was read from (EXTRACT), or the table row."""
    quantity: Quantity | None = None
    """The value typed (EXTRACT, COMPUTE)."""
    quantities: list[Quantity] = field(default_factory=list)
    """A list value's figures typed, one per item (EXTRACT in every period)."""
