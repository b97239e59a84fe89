"""The answer the finalizer renders."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from .result import Evidence


class Footnote(BaseModel):
    model_config = ConfigDict(extra="forbid")

    number: int
    evidence: Evidence
    variables: list[str] = []
    """Plan variables whose values rest on this document."""


class Answer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str
    footnotes: list[Footnote] = []
    missing: list[str] = []
    """One sentence per value that could not be obtained, with the reason."""
    complete: bool = True
    """False when a step failed and the answer names the gap."""

    def render(self) -> str:
        """The answer as a person reads it: text, gaps, then footnotes."""
        lines = [self.text]
        if self.footnotes:
            lines.append("")
            for f in self.footnotes:
                lines.append(f"[{f.number}] {f.evidence.cite()}")
        return "\n".join(lines)
