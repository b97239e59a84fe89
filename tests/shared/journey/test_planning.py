"""make_plan: the query's `domain` (a batch line's `domain`) reaches the plan whoever
writes it, and choosing the template of the answer."""

from __future__ import annotations

from pathlib import Path

import pytest

import shared
from shared.models import Plan, Query
from shared.journey.planning import make_plan
from shared.ingest import load_jsonl
from shared.search import SqliteSearch

DATA = Path(shared.__file__).parent / "data"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    backend = SqliteSearch(tmp_path_factory.mktemp("planning") / "search.db")
    backend.add(load_jsonl(DATA / "corpus.jsonl"))
    yield backend
    backend.close()


def test_the_heuristic_plan_takes_the_domain_of_the_query(corpus):
    question = "What was Tesla's battery yield rate in Q3 2023?"
    plain, _ = make_plan(Query(question=question), corpus)
    medical, _ = make_plan(Query(question=question, domain="medical"), corpus)
    assert (plain.domain, plain.planner) == ("generic", "heuristic")
    assert medical.domain == "medical" and medical.steps == plain.steps


def test_a_given_plan_keeps_its_own_domain_when_the_query_names_none(corpus):
    plan = Plan.model_validate({"domain": "finance", "steps": [
        {"id": "E1", "operation": "GET", "source": "Tesla Q3 2023 Financial Report"}]})
    assert make_plan(Query(question="q", plan=plan), corpus)[0].domain == "finance"
