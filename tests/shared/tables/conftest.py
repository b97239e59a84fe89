"""Real pages and tables the reader's tests read (tests/shared/tables/data, README there)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shared.models.table import Table

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="session")
def filing_words() -> dict[str, list[list[tuple[float, float, str]]]]:
    """Pages of real filings as pdfplumber's words, by "file.pdf#page"."""
    pages = json.loads((DATA / "filing_words.json").read_text())
    return {key: [[tuple(w) for w in line] for line in lines] for key, lines in pages.items()}


def row(table: Table, label: str, section: str | None = None):
    """The one row of `table` labelled `label` (in `section`, when given)."""
    found = [r for r in table.rows
             if r.label == label and (section is None or r.section == section)]
    assert len(found) == 1, [r.label for r in table.rows]
    return found[0]


def titled(tables: list[Table], words: str) -> Table:
    """The one table whose title holds `words`."""
    found = [t for t in tables if t.title and words.lower() in t.title.lower()]
    assert len(found) == 1, [t.title for t in tables]
    return found[0]
