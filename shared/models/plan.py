"""The plan: what the planner produces and the executors run.

A plan is a list of steps, a discriminated union on `operation`. A step's output is
bound to `output_var` (`$NAME`); later steps refer to it as `$NAME` in `source` or
`expression`, and the answer template as `{{ NAME }}`.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, field_validator

VAR_RE = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?")
"""A variable reference: `$R1` or `${R1}`."""

STEP_ID_RE = r"^[A-Za-z][A-Za-z0-9_-]{0,31}$"


class _Step(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=STEP_ID_RE)
    """Step id, unique in the plan (`E1`); with the query id it forms the action_id."""

    output_var: str | None = None
    """Variable this step binds (`$R1`); defaults to `$<id>`."""

    @field_validator("output_var")
    @classmethod
    def _dollar_name(cls, v: str | None) -> str | None:
        if v is None:
            return v
        if not re.fullmatch(r"\$?[A-Za-z_][A-Za-z0-9_]*", v):
            raise ValueError(f"output_var {v!r} must look like $NAME (letters, digits, _)")
        return v if v.startswith("$") else f"${v}"

    @property
    def var(self) -> str:
        """The bound variable's bare name (`R1` for `$R1`)."""
        return (self.output_var or f"${self.id}")[1:]

    def references(self) -> list[str]:
        """Bare names of the variables this step reads."""
        return []


class GetStep(_Step):
    operation: Literal["GET"]
    source: str = Field(min_length=1)
    """Name, title or URL of the document to fetch."""
    temporal_scope: str | None = None
    """`2023`, `2023-Q3`, `2023-07` or `2023-07-01..2023-09-30`: only documents dated
    within it match. Without it, a year named in `source` narrows the search."""

    def references(self) -> list[str]:
        return VAR_RE.findall(self.source)


class ExtractStep(_Step):
    operation: Literal["EXTRACT"]
    source: str = Field(min_length=1)
    """`$VAR` of a fetched document."""
    pattern: str = Field(min_length=1)
    """Regular expression with exactly one capture group: the value to extract."""
    fallback: str | None = None
    """Value used when the pattern finds nothing (confidence `fallback`)."""

    def references(self) -> list[str]:
        return VAR_RE.findall(self.source)


class ComputeStep(_Step):
    operation: Literal["COMPUTE"]
    expression: str = Field(min_length=1)
    """Arithmetic or comparison over `$VAR`s and numbers: `$Y - 92`, `($A + $B) / 2`."""

    def references(self) -> list[str]:
        return VAR_RE.findall(self.expression)


Step = Annotated[Union[GetStep, ExtractStep, ComputeStep], Field(discriminator="operation")]
OPERATIONS = ("GET", "EXTRACT", "COMPUTE")


class Plan(BaseModel):
    model_config = ConfigDict(extra="forbid")

    domain: str = "generic"
    """Chooses the default answer template."""
    steps: list[Step] = Field(min_length=1)
    answer: str | None = None
    """Jinja2 template of the answer; variables by bare name (`{{ Y }}`)."""
    planner: str = "user"
    """Who wrote the plan: `user`, `heuristic` or `llm`."""

    def step(self, step_id: str) -> _Step:
        return next(s for s in self.steps if s.id == step_id)

    def producers(self) -> dict[str, str]:
        """Bare variable name -> id of the step that binds it."""
        return {s.var: s.id for s in self.steps}
