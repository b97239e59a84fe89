import re
from pathlib import Path

import jinja2
import pytest

import shared
from shared.errors import InputError
from shared.llm.heuristic import heuristic_plan
from shared.search import Document, SqliteSearch, load_jsonl
from shared.plan.validate import validate_plan
from shared.tools.extract import run_extract
from shared.tools.get import run_get

DATA = Path(shared.__file__).parent / "data"
QUESTIONS = (DATA / "questions.txt").read_text().splitlines()
EXPECTED = {
    "What was Tesla's battery yield rate in Q3 2023?": "91.7%",
    "How much revenue did Northwind Motors report for Q3 2023?": "$9.84 billion",
    "How many laboratory-confirmed influenza cases did Calder County record in week 48 of 2023?": "1,240",
    "When must class members file claims in the Meridian Retail loyalty settlement?": "2024-03-29",
    "What policy rate did the Central Bank of Calder set in September 2023?": "5.25%",
}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    backend = SqliteSearch(tmp_path_factory.mktemp("heuristic") / "search.db")
    backend.add(load_jsonl(DATA / "corpus.jsonl"))
    yield backend
    backend.close()


def answer(plan, backend):
    """What running the plan's GET and EXTRACT gives: the fetched text and the value."""
    get, extract = plan.steps
    text = run_get(get, backend).value
    m = re.search(extract.pattern, text)
    return text, m.group(1) if m else None


def test_the_bundled_questions_are_the_ones_the_tests_expect_answers_for():
    assert QUESTIONS == list(EXPECTED)


@pytest.mark.parametrize("question", QUESTIONS)
def test_each_bundled_question_gets_a_plan_whose_pattern_matches_the_chosen_document(corpus, question):
    plan = heuristic_plan(question, corpus)
    text, value = answer(plan, corpus)
    assert value is not None and value in text


@pytest.mark.parametrize("question, expected", EXPECTED.items())
def test_each_bundled_question_is_answered_with_the_value_the_document_states(corpus, question, expected):
    assert answer(heuristic_plan(question, corpus), corpus)[1] == expected


@pytest.mark.parametrize("question", QUESTIONS)
def test_the_plan_is_a_valid_heuristic_get_then_extract(corpus, question):
    plan = heuristic_plan(question, corpus)
    get, extract = plan.steps
    assert plan.planner == "heuristic"
    assert (get.operation, extract.operation) == ("GET", "EXTRACT")
    assert extract.source == get.output_var
    assert re.compile(extract.pattern).groups == 1
    assert corpus.best(get.source)[0].title == get.source


@pytest.mark.parametrize("question, expected", EXPECTED.items())
def test_the_plan_passes_the_plan_checks_and_the_extract_tool_gets_the_value(corpus, question, expected):
    plan = heuristic_plan(question, corpus)
    assert validate_plan(plan) == []
    get, extract = plan.steps
    fetched = run_get(get, corpus)
    assert run_extract(extract, fetched.value, fetched.document).value == expected


def test_the_plan_names_the_period_the_question_asks_about(corpus):
    get = heuristic_plan("What was Tesla's battery yield rate in Q2 2023?", corpus).steps[0]
    assert (get.source, get.temporal_scope) == ("Tesla Q2 2023 Financial Report", "2023-Q2")


def test_the_answer_states_the_value_and_its_document_without_footnote_markers(corpus):
    plan = heuristic_plan(QUESTIONS[0], corpus)
    text = jinja2.Environment().from_string(plan.answer).render(VALUE="91.7%")
    assert text.startswith("91.7%, according to \"Tesla Q3 2023 Financial Report\"")
    assert "without an LLM" in text
    assert not re.search(r"\[\d+\]", text)


def test_a_question_not_asking_for_a_quantity_captures_the_best_matching_sentence(corpus):
    plan = heuristic_plan("Who did Kestrel Semiconductors appoint as chief executive officer?", corpus)
    assert plan.steps[1].output_var == "$SENTENCE"
    assert answer(plan, corpus)[1] == (
        "Kestrel Semiconductors appointed Dana Okafor as chief executive officer effective 2024-02-01.")


def test_a_question_matching_no_document_says_to_index_documents(corpus):
    with pytest.raises(InputError, match=r"no document matches.*chordal index FILE\.jsonl"):
        heuristic_plan("What is the airspeed velocity of an unladen swallow?", corpus)


def test_the_same_question_always_gets_the_same_plan(corpus):
    assert heuristic_plan(QUESTIONS[1], corpus) == heuristic_plan(QUESTIONS[1], corpus)


def test_a_document_dated_outside_the_year_its_title_names_is_still_fetched(tmp_path):
    with SqliteSearch(tmp_path / "s.db") as store:
        store.add([Document(title="Harbor Logistics 2022 Annual Report", date="2023-03-15",
                            content="Harbor moved 2.84 million containers in 2022.")])
        plan = heuristic_plan("How many containers did Harbor Logistics move?", store)
        assert answer(plan, store)[1] == "2.84 million"


def test_a_value_repeated_in_the_document_is_anchored_to_the_right_sentence(tmp_path):
    content = ("For the first half, revenue was $5 million. "
               "Operating costs rose sharply. "
               "For the second half, revenue was $7 million.")
    with SqliteSearch(tmp_path / "s.db") as store:
        store.add([Document(title="Acme results", content=content)])
        plan = heuristic_plan("How much revenue did Acme make in the second half?", store)
        assert answer(plan, store)[1] == "$7 million"
        assert re.search(plan.steps[1].pattern, content, re.IGNORECASE).group(1) == "$7 million"
