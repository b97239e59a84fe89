"""Variables: values of the inputs a step reads, as numbers, text and evidence."""

from __future__ import annotations

import pytest

from shared.errors import ToolError
from shared.models import Evidence
from shared.tools.variables import as_text, evidence, single_var, substitute

DOC = Evidence(doc_id="d1", title="Report")


def test_substitute_replaces_each_variable_with_its_value_as_text(ok):
    inputs = {"CO": ok("E1", "Northwind"), "L": ok("E2", ["a", "b"]), "OK": ok("E3", True)}
    text, used = substitute("${CO} $L $OK", inputs, "S1")
    assert text == "Northwind a b true" and used == ["CO", "L", "OK"]


def test_substitute_names_a_missing_variable_and_the_ones_available(ok):
    with pytest.raises(ToolError) as e:
        substitute("$NOPE revenue", {"CO": ok("E1", "x")}, "S1")
    assert e.value.code == "MISSING_INPUT"
    assert "$NOPE" in e.value.message and "$CO" in e.value.message


def test_a_branch_is_one_variable_only_when_nothing_else_is_written():
    assert single_var(" $Y ") == "Y" and single_var("${Y}") == "Y"
    assert single_var("$Y%") is None and single_var("rate $Y") is None


def test_evidence_lists_document_then_documents_without_repeats(ok):
    other = Evidence(doc_id="d2", title="Other")
    assert evidence(ok("E1", ["x", "y"], document=DOC, documents=[DOC, other])) == [DOC, other]


def test_none_is_empty_text():
    assert as_text(None) == ""
