"""The plan: what the planner produces and the executors run.

A plan is a list of steps, a discriminated union on `operation`. A step's output is
bound to `output_var` (`$NAME`); later steps refer to it as `$NAME` in `source` or
`expression`, and the answer template as `{{ NAME }}`. Text fields are `Text` (UTF-8
only) and numbers must be finite (fields.py), so every plan that validates can be stored.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from .fields import Text

VAR_RE = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?")
"""A variable reference: `$R1` or `${R1}`."""

STEP_ID_RE = r"^[A-Za-z][A-Za-z0-9_-]{0,31}$"
OUTPUT_VAR_RE = r"\$?[A-Za-z_][A-Za-z0-9_]*"
"""An `output_var` as a step may give it (`$R1` or `R1`; ASCII only)."""
DOMAINS = ("generic", "finance", "legal", "medical")
"""Domains with an answer template of their own (shared/templates); any other renders as
generic, so a plan may name one, but the LLM is asked for one of these."""


class _Step(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, serialize_by_alias=True,
                              allow_inf_nan=False)

    id: str = Field(pattern=STEP_ID_RE)
    """Step id, unique in the plan (`E1`); with the query id it forms the action_id."""

    output_var: str | None = None
    """Variable this step binds (`$R1`); defaults to `$<id>`."""

    @field_validator("output_var")
    @classmethod
    def _dollar_name(cls, v: str | None) -> str | None:
        if v is None:
            return v
        if not re.fullmatch(OUTPUT_VAR_RE, v):
            raise ValueError("output_var must look like $NAME (letters, digits, _)")
        return v if v.startswith("$") else f"${v}"

    @property
    def var(self) -> str:
        """The bound variable's bare name (`R1` for `$R1`)."""
        return (self.output_var or f"${self.id}")[1:]

    def references(self) -> list[str]:
        """Bare names of the variables this step reads."""
        return []


def _refs(*texts: str | None) -> list[str]:
    return [v for t in texts if t for v in VAR_RE.findall(t)]


MAX_SOURCE_CHARS = 2000
"""Longest GET source: a title or URL (its NOT_FOUND message quotes it, and is stored)."""


class GetStep(_Step):
    operation: Literal["GET"]
    source: Text = Field(min_length=1, max_length=MAX_SOURCE_CHARS)
    """Name, title or URL of the document to fetch."""
    temporal_scope: Text | None = None
    """`2023`, `2023-Q3`, `2023-H1`, `2023-07` or `2023-07-01..2023-09-30`: only documents
    about a period inside it match (shared/search/matching.py). A period named in
    `source` must be the document's own."""
    top_k: int = Field(1, ge=1, le=10)
    """Documents to fetch; above 1 the value is a list of documents, best first, and an
    EXTRACT over it takes the first document whose text matches."""

    def references(self) -> list[str]:
        return _refs(self.source)


class SearchStep(_Step):
    operation: Literal["SEARCH"]
    query: Text = Field(min_length=1)
    """Keywords; `$VAR`s are substituted before searching."""
    temporal_scope: Text | None = None
    top_k: int = Field(5, ge=1, le=50)
    """Value: the ranked snippets (list of text), each with its document as evidence."""

    def references(self) -> list[str]:
        return _refs(self.query)


class ExtractStep(_Step):
    operation: Literal["EXTRACT"]
    source: Text = Field(min_length=1)
    """`$VAR` of a fetched document."""
    pattern: Text | None = Field(None, min_length=1)
    """Regular expression with exactly one capture group: the value to extract (a
    sentence's figure). Give `pattern` or `row`, not both."""
    row: Text | None = Field(None, min_length=1, max_length=MAX_SOURCE_CHARS)
    """A table's line item, by its words or a name the domain library knows for it
    (`purchases of property, plant and equipment`, `capital expenditure`): the value is
    the cell of that row in the column of `period`."""
    period: Text | None = Field(None, min_length=1)
    """With `row`: the column's period (`FY2018`, `2018`, `2019-Q3`, `December 31,
    2018`); without it, the table's one column of figures or the newest; `all`: the row
    in every period of its table, a list of figures (earliest first) for COMPUTE's
    `mean()` or `sum()`."""
    fallback: Text | None = None
    """Value used when no layer finds anything (confidence `fallback`)."""
    quantity: Literal["percent", "money", "date", "number", "article"] | None = None
    """What the value is. A capture or cell that is not of this kind is not a value;
    when the pattern matches nothing, the built-in pattern for this quantity, then a
    rule-based number/date finder, are tried in the sentences that contain the
    pattern's literal words (confidence `library:…`, `entity:…`)."""

    @model_validator(mode="after")
    def _pattern_or_row(self) -> ExtractStep:
        if (self.pattern is None) == (self.row is None):
            raise ValueError("give `pattern` (a regular expression with one capture group) "
                             "or `row` (a table's line item, with `period`), one of them")
        if self.period is not None and self.row is None:
            raise ValueError("`period` picks a table column for `row`; give `row` too, or "
                             "drop `period`")
        return self

    def references(self) -> list[str]:
        return _refs(self.source)


class ComputeStep(_Step):
    operation: Literal["COMPUTE"]
    expression: Text = Field(min_length=1)
    """Arithmetic or comparison over `$VAR`s and numbers: `$Y - 92`, `($A + $B) / 2`."""

    def references(self) -> list[str]:
        return _refs(self.expression)


class IfStep(_Step):
    operation: Literal["IF"]
    condition: Text = Field(min_length=1)
    """A COMPUTE expression that yields true or false: `$GAP < 0`."""
    then: Text
    """Value when the condition holds: literal text, or one `$VAR` (its value is taken)."""
    else_: Text = Field("", alias="else")
    """Value otherwise (JSON key `else`)."""

    def references(self) -> list[str]:
        return _refs(self.condition, self.then, self.else_)


class ValidateStep(_Step):
    operation: Literal["VALIDATE"]
    value: str = Field(pattern=r"^\$\{?[A-Za-z_][A-Za-z0-9_]*\}?$")
    """The `$VAR` to check."""
    min: float | None = None
    max: float | None = None
    type: Literal["number", "percent", "money", "date", "text"] | None = None
    pattern: Text | None = None
    """Regex the value must match (searched, not anchored)."""
    source_type: list[Text] | None = None
    """Accepted `source_type`s of the document behind the value. The step's value is
    true or false; its `note` says which check failed and why."""

    def references(self) -> list[str]:
        return _refs(self.value)


class MergeStep(_Step):
    operation: Literal["MERGE"]
    sources: list[Text] = Field(min_length=1)
    """`$VAR`s to combine; failed ones are skipped and named in the note."""
    strategy: Literal["first", "list", "unique"] = "first"
    """`first`: the first value obtained; `list`: all values; `unique`: all, de-duplicated."""

    def references(self) -> list[str]:
        return _refs(*self.sources)


class FilterStep(_Step):
    operation: Literal["FILTER"]
    source: Text
    """`$VAR` holding a list (SEARCH, MERGE with list/unique, FILTER, GET with top_k)."""
    condition: Text | None = None
    """COMPUTE expression over `$item` (a number): `$item > 90`."""
    pattern: Text | None = None
    """Regex an item's text must contain."""

    def references(self) -> list[str]:
        return [v for v in _refs(self.source, self.condition) if v != "item"]


class ArbitrateStep(_Step):
    operation: Literal["ARBITRATE"]
    sources: list[Text] = Field(min_length=2)
    """`$VAR`s holding conflicting values of one fact."""
    prefer: list[Text] = Field(default_factory=lambda: ["majority"])
    """Rules tried in order until one decides: `source_type == "official_report"`,
    `newest`, `oldest`, `majority`. The step's `note` records which rule chose and why."""

    def references(self) -> list[str]:
        return _refs(*self.sources)


Step = Annotated[Union[GetStep, SearchStep, ExtractStep, ComputeStep, IfStep, ValidateStep,
                       MergeStep, FilterStep, ArbitrateStep], Field(discriminator="operation")]
OPERATIONS = ("GET", "SEARCH", "EXTRACT", "COMPUTE", "IF", "VALIDATE", "MERGE", "FILTER",
              "ARBITRATE")


class Plan(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    domain: Text = Field("generic", json_schema_extra={"enum": list(DOMAINS)})
    """Chooses the default answer template; its JSON schema lists `DOMAINS`."""
    steps: list[Step] = Field(min_length=1)
    answer: Text | None = None
    """Jinja2 template of the answer; variables by bare name (`{{ Y }}`)."""
    planner: Text = "user"
    """Who wrote the plan: `user`, `heuristic` or `llm`."""
    drop_unused: bool = False
    """Let repair drop steps whose output no step and no template uses."""

    def step(self, step_id: str) -> _Step:
        return next(s for s in self.steps if s.id == step_id)

    def producers(self) -> dict[str, str]:
        """Bare variable name -> id of the step that binds it."""
        return {s.var: s.id for s in self.steps}
