"""The domain library: consumes the line-item files under shared/data/domains/ (one per
domain, `finance.json`), produces the `LineItem`s a table row may be asked for by — a
name an analyst uses ("capital expenditure"), the names reports give it ("purchases of
property, plant and equipment", "additions to property and equipment"), its kind
(money, number, percent), the section headings it sits under and whether it is stated
per share.

A file is `{"domain": …, "about": …, "line_items": [{"name", "kind", "names",
"sections"?, "per_share"?, "formula"?, "loss_names"?, "one_of"?}, …]}`; a new domain is a
new file. `items_named(text)` finds the items one of whose names is `text` word for word
(shared/tools/rows.py's words: case, punctuation, plurals, small words and "total"
aside), `choices_named(text)` those stated only as one of others. EXTRACT by row consults
every domain's file: a step does not carry its plan's domain, and a statement's line
item is named the same whatever the plan calls its domain; `line_items(domain)` gives
one domain's.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from shared.errors import ConfigError

from .rows import name_key

DOMAINS_DIR = Path(__file__).resolve().parent.parent / "data" / "domains"
"""Where the domain files live: `<domain>.json`."""


class LineItem(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    """What analysts call it (`capital expenditure`)."""
    kind: Literal["money", "number", "percent"]
    """What its figure is."""
    names: tuple[str, ...] = Field(min_length=1)
    """The labels reports give the row, its own name aside."""
    sections: tuple[str, ...] = ()
    """Words of the headings it sits under (`investing activities`): among rows that fit
    alike, one under such a heading is read."""
    per_share: bool = False
    """Stated in units even in a table "in thousands, except per share data"."""
    formula: str | None = None
    """How the item is computed from other line items of the same period when no row
    states it (`current assets / current liabilities`): the heuristic planner reads the
    operands' rows and computes it."""
    loss_names: tuple[str, ...] = ()
    """The labels reports give the row when it states a loss (`net loss`, `loss from
    operations`): read only when no row names the item, and only a figure written
    negative, which is the item's value (a loss of 371,094 is net income of -371,094);
    an unsigned figure there may be the loss's amount, and is not answered."""

    one_of: tuple[str, ...] = ()
    """The items (by `name`) reports state this one only as (`earnings per share`:
    basic or diluted): a question that says none of them is not answered, and its answer
    names each one's figure. Such an item is no row's name to EXTRACT (`items_named`
    leaves it out); `choices_named` finds it."""

    def all_names(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((self.name, *self.names)))


class DomainFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    domain: str = Field(min_length=1)
    about: str = ""
    line_items: tuple[LineItem, ...]


def domains() -> list[str]:
    """The domains that have a line-item file."""
    return sorted(p.stem for p in DOMAINS_DIR.glob("*.json"))


@lru_cache(maxsize=None)
def line_items(domain: str | None = None) -> tuple[LineItem, ...]:
    """The line items of `domain` (none when it has no file); None: every domain's."""
    if domain is None:
        return tuple(item for name in domains() for item in line_items(name))
    path = DOMAINS_DIR / f"{domain}.json"
    if not path.is_file():
        return ()
    try:
        library = DomainFile.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (ValueError, ValidationError) as e:
        raise ConfigError(f"domain library {path}: {e}; fix the file (each line item needs "
                          "\"name\", \"kind\" (money, number, percent) and \"names\")") from None
    known = {item.name for item in library.line_items}
    if unknown := sorted({n for item in library.line_items for n in item.one_of} - known):
        raise ConfigError(f"domain library {path}: \"one_of\" names no line item "
                          f"{', '.join(map(repr, unknown))}; use the \"name\" of an item "
                          "of the same file")
    if library.domain != domain:
        raise ConfigError(f"domain library {path} says \"domain\": {library.domain!r}; name "
                          f"the file {library.domain}.json or set \"domain\": {domain!r}")
    return library.line_items


@lru_cache(maxsize=None)
def _index(domain: str | None, choices: bool = False
           ) -> dict[tuple[str, ...], tuple[LineItem, ...]]:
    """The items of `domain` by the keys of their names: those stated as one of others
    (`one_of`) with `choices`, the others without."""
    index: dict[tuple[str, ...], list[LineItem]] = {}
    for item in line_items(domain):
        if bool(item.one_of) != choices:
            continue
        for name in item.all_names():
            found = index.setdefault(name_key(name), [])
            if item not in found:
                found.append(item)
    return {key: tuple(items) for key, items in index.items()}


def items_named(text: str, domain: str | None = None) -> tuple[LineItem, ...]:
    """The line items one of whose names is `text`, word for word."""
    return _index(domain).get(name_key(text), ()) if text else ()


def choices_named(text: str, domain: str | None = None) -> tuple[LineItem, ...]:
    """The line items stated only as one of others (`one_of`) one of whose names is
    `text`, word for word (`EPS`: basic or diluted)."""
    return _index(domain, True).get(name_key(text), ()) if text else ()


def item_called(name: str, domain: str | None = None) -> LineItem | None:
    """The line item whose own `name` is `name`."""
    return next((item for item in line_items(domain) if item.name == name), None)
