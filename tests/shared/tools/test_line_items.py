"""The domain library: line items analysts ask about, named as filings write them."""

from __future__ import annotations

import json

import pytest

from shared.errors import ConfigError
from shared.tools import line_items as library
from shared.tools.line_items import choices_named, domains, items_named, line_items
from shared.tools.rows import name_key


def test_the_finance_library_knows_the_line_items_analysts_ask_about():
    names = {item.name for item in line_items("finance")}
    assert len(names) >= 50
    assert {"capital expenditure", "cost of goods sold", "operating cash flow",
            "depreciation and amortization", "accounts payable", "inventory",
            "total current liabilities", "revenue", "earnings per share, diluted"} <= names
    assert "finance" in domains()


@pytest.mark.parametrize("written, item", [
    ("Purchases of property, plant and equipment", "capital expenditure"),
    ("Additions to property and equipment", "capital expenditure"),
    ("Capital Expenditures", "capital expenditure"),
    ("Cost of sales", "cost of goods sold"),
    ("Cost of revenues", "cost of goods sold"),
    ("Net cash provided by (used in) operating activities", "operating cash flow"),
    ("Net sales", "revenue"),
    ("Total revenues", "revenue"),
    ("Depreciation & amortization", "depreciation and amortization"),
    ("Inventories", "inventory"),
    ("Total stockholders' equity", "shareholders' equity"),
    ("Selling, general and administrative expenses", "selling, general and administrative expenses"),
    # as analysts write them
    ("PP&E", "property, plant and equipment, net"),
    ("SG&A expenses", "selling, general and administrative expenses"),
    ("R&D expense", "research and development expenses"),
    ("R&D costs", "research and development expenses"),
])
def test_a_name_filings_give_a_row_finds_its_line_item(written, item):
    assert [i.name for i in items_named(written)] == [item]


def test_no_name_belongs_to_two_line_items():
    seen: dict[tuple, str] = {}
    for item in line_items():
        for name in item.all_names():
            assert seen.setdefault(name_key(name), item.name) == item.name, name


def test_per_share_items_and_kinds_are_given():
    eps = items_named("diluted EPS")[0]
    assert eps.per_share and eps.kind == "money"
    assert items_named("effective tax rate")[0].kind == "percent"
    assert items_named("weighted average diluted shares outstanding")[0].kind == "number"
    assert items_named("capex")[0].sections == ("investing activities",)


def test_a_domain_without_a_file_has_no_line_items():
    assert line_items("legal") == () and items_named("revenue", "legal") == ()


def _refused(tmp_path, monkeypatch, items: list[dict]) -> str:
    """The ConfigError of a domain file `energy.json` of `items`."""
    (tmp_path / "energy.json").write_text(json.dumps({"domain": "energy", "line_items": items}))
    monkeypatch.setattr(library, "DOMAINS_DIR", tmp_path)
    library.line_items.cache_clear()
    try:
        with pytest.raises(ConfigError) as e:
            line_items("energy")
        return str(e.value)
    finally:
        library.line_items.cache_clear()


def test_a_broken_domain_file_is_named_with_the_fix(tmp_path, monkeypatch):
    refused = _refused(tmp_path, monkeypatch, [{"name": "output", "names": ["generation"]}])
    assert "energy.json" in refused and "\"kind\"" in refused


def test_an_item_stated_only_as_one_of_others_is_no_rows_name():
    # "EPS" is basic or diluted: EXTRACT reads no row by it, the planner asks which
    assert items_named("EPS") == () and items_named("earnings per share") == ()
    assert choices_named("EPS")[0].one_of == ("earnings per share, basic",
                                              "earnings per share, diluted")
    assert choices_named("net income per share") == choices_named("EPS")
    assert choices_named("revenue") == ()


def test_one_of_names_items_of_its_own_file(tmp_path, monkeypatch):
    refused = _refused(tmp_path, monkeypatch, [
        {"name": "output", "kind": "number", "names": ["generation"],
         "one_of": ["output, gross", "net output"]},
        {"name": "output, gross", "kind": "number", "names": ["gross generation"]}])
    assert "energy.json" in refused and "'net output'" in refused
