import re
from pathlib import Path

import jinja2
import pytest

import shared
from shared.errors import InputError, NoAnswer, SearchUnavailable, TransientToolError
from shared.planners.heuristic import abstention, heuristic_plan
from shared.ingest import load_jsonl
from shared.search import Document, SqliteSearch
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
    assert corpus.best(get.source, None).found[0].document.title == get.source


@pytest.mark.parametrize("question, expected", EXPECTED.items())
def test_the_plan_passes_the_plan_checks_and_the_extract_tool_gets_the_value(corpus, question, expected):
    plan = heuristic_plan(question, corpus)
    assert validate_plan(plan) == []
    get, extract = plan.steps
    fetched = run_get(get, corpus)
    assert run_extract(extract, fetched.value, fetched.document).value == expected


def test_the_plan_fetches_the_document_of_the_period_the_question_asks_about(corpus):
    plan = heuristic_plan("What was Tesla's battery yield rate in Q2 2023?", corpus)
    assert plan.steps[0].source == "Tesla Q2 2023 Financial Report"
    assert answer(plan, corpus)[1] == "90.4%"


def test_the_answer_states_the_value_its_document_period_date_and_confidence(corpus):
    plan = heuristic_plan(QUESTIONS[0], corpus)
    text = jinja2.Environment().from_string(plan.answer).render(VALUE="91.7%")
    assert text.startswith('91.7%, according to "Tesla Q3 2023 Financial Report" '
                           "(period 2023-Q3, published 2023-10-18)")
    assert "Confidence: high" in text and "without an LLM" in text
    assert not re.search(r"\[\d+\]", text)


def test_a_question_not_asking_for_a_quantity_captures_the_best_matching_sentence(corpus):
    plan = heuristic_plan("Who did Kestrel Semiconductors appoint as chief executive officer?", corpus)
    assert plan.steps[1].output_var == "$SENTENCE"
    assert answer(plan, corpus)[1] == (
        "Kestrel Semiconductors appointed Dana Okafor as chief executive officer effective 2024-02-01.")


def test_a_question_no_document_answers_abstains_saying_what_was_not_found(corpus):
    with pytest.raises(NoAnswer) as caught:
        heuristic_plan("What is the airspeed velocity of an unladen swallow?", corpus)
    assert caught.value.message.startswith("not found: no indexed document states")
    text = abstention(caught.value)
    assert not text.complete and text.missing == [caught.value.message]
    assert text.text.startswith("Not found.")


def test_a_question_over_an_empty_store_says_to_index_documents(tmp_path):
    with SqliteSearch(tmp_path / "empty.db") as empty:
        with pytest.raises(InputError, match=r"store is empty.*chordal index FILE\.jsonl"):
            heuristic_plan("What was Tesla's battery yield rate in Q3 2023?", empty)


def test_the_same_question_always_gets_the_same_plan(corpus):
    assert heuristic_plan(QUESTIONS[1], corpus) == heuristic_plan(QUESTIONS[1], corpus)


def test_a_document_published_after_the_year_its_title_names_is_still_fetched(tmp_path):
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


def store_of(tmp_path, *docs: Document) -> SqliteSearch:
    store = SqliteSearch(tmp_path / "s.db")
    store.add(docs)
    return store


def test_the_annual_report_published_next_spring_answers_for_its_year(tmp_path):
    with store_of(tmp_path,
                  Document(id="ar23", title="Acme Annual Report 2023", date="2024-02-20",
                           content="Operating margin was 8.4%, up from 7.9% in 2022."),
                  Document(id="ar24", title="Acme Annual Report 2024", date="2025-02-18",
                           content="Operating margin was 9.1%, up from 8.4% in 2023.")) as s:
        plan = heuristic_plan("What was Acme's operating margin in 2024?", s)
        assert answer(plan, s)[1] == "9.1%"
        assert plan.steps[0].source == "Acme Annual Report 2024"


def test_an_analysts_expectation_is_not_the_reported_figure(tmp_path):
    with store_of(tmp_path,
                  Document(id="pre", title="Acme Q3 2024 preview", date="2024-09-10",
                           source_type="news",
                           content="Analysts expect Acme to report a gross margin of 18.1%.")) as s:
        with pytest.raises(NoAnswer) as caught:
            heuristic_plan("What was Acme's gross margin in Q3 2024?", s)
        assert "'Acme Q3 2024 preview' (period 2024-Q3, published 2024-09-10)" in (
            "\n".join(caught.value.nearest))


def test_the_official_report_wins_over_a_draft_and_a_summary_of_it(tmp_path):
    with store_of(tmp_path,
                  Document(id="d", title="Draft: Acme Q3 2024 Report", date="2024-10-01",
                           source_type="draft", content="Gross margin was 17.6% in the quarter."),
                  Document(id="s", title="Acme Q3 2024 Report (Summary)", date="2024-10-21",
                           source_type="summary", content="Gross margin was about 18%."),
                  Document(id="o", title="Acme Q3 2024 Report", date="2024-10-20",
                           source_type="official_report",
                           content="Gross margin was 17.9% in the quarter.")) as s:
        plan = heuristic_plan("What was Acme's gross margin in Q3 2024?", s)
        assert answer(plan, s)[1] == "17.9%"


def test_another_companys_document_never_answers(tmp_path):
    with store_of(tmp_path,
                  Document(id="b", title="Bolt Motors Q3 2024 Report", date="2024-10-20",
                           content="Bolt Motors' gross margin was 21.0%; Acme's was lower.")) as s:
        with pytest.raises(NoAnswer, match="about Acme for 2024-Q3 states gross margin"):
            heuristic_plan("What was Acme's gross margin in Q3 2024?", s)


def test_the_prior_periods_figure_in_the_same_sentence_is_never_taken(tmp_path):
    with store_of(tmp_path,
                  Document(id="o", title="Acme Annual Report 2024", date="2025-03-01",
                           content="In 2023 the gross margin was 15.2%. Revenue rose 12% to "
                                   "$3.47 billion, compared with $3.10 billion a year earlier."
                                   )) as s:
        assert answer(heuristic_plan("How much revenue did Acme report for 2024?", s), s)[1] == (
            "$3.47 billion")
        with pytest.raises(NoAnswer):  # the only margin is 2023's
            heuristic_plan("What was Acme's gross margin in 2024?", s)


def test_a_question_about_a_missing_quarter_abstains_and_names_the_neighbours(tmp_path):
    with store_of(tmp_path,
                  Document(id="q3", title="Acme Q3 2024 Report", date="2024-10-20",
                           content="Gross margin was 17.9% in the quarter.")) as s:
        with pytest.raises(NoAnswer) as caught:
            heuristic_plan("What was Acme's gross margin in Q4 2024?", s)
        assert caught.value.nearest == [
            "'Acme Q3 2024 Report' (period 2024-Q3, published 2024-10-20): title names "
            "2024-Q3, the question asks about 2024-Q4"]


def test_a_chinese_question_finds_the_chinese_report_of_that_quarter(tmp_path):
    with store_of(tmp_path,
                  Document(id="q2", title="华川电子2024年第二季度报告", date="2024-07-25",
                           content="毛利率为22.4%，上年同期为21.0%。"),
                  Document(id="q3", title="华川电子2024年第三季度报告", date="2024-10-25",
                           content="营业收入为人民币52.3亿元。毛利率为23.1%，上年同期为21.4%。")) as s:
        plan = heuristic_plan("华川电子2024年第三季度的毛利率是多少？", s)
        assert answer(plan, s)[1] == "23.1%"
        assert answer(heuristic_plan("华川电子2024年第三季度的营业收入是多少？", s), s)[1] == (
            "人民币52.3亿元")


def doc(doc_id: str, title: str, content: str, published: str = "2024-10-20", **extra) -> Document:
    return Document(id=doc_id, title=title, content=content, date=published, **extra)


ELECTION = doc("vote", "Northgate County Council Election 2024 Results",
               "Turnout was 34.2%, down from 38.9% at the 2019 election. The Green Party won 14 "
               "seats, the Liberal Democrats 22 seats and the Conservatives 19 seats. Labour won "
               "11 seats, a loss of 6.", "2024-05-03", source_type="official_report")


@pytest.mark.parametrize("party, seats", [("the Green Party", "14"), ("the Liberal Democrats", "22"),
                                          ("the Conservatives", "19"), ("Labour", "11")])
def test_in_a_list_each_name_gets_its_own_figure(tmp_path, party, seats):
    with store_of(tmp_path, ELECTION) as s:
        plan = heuristic_plan(f"How many seats did {party} win in the Northgate County Council "
                              "Election 2024?", s)
        assert answer(plan, s)[1] == seats


def test_a_sentence_that_lists_figures_without_the_name_asked_about_answers_nothing(tmp_path):
    with store_of(tmp_path, ELECTION) as s, pytest.raises(NoAnswer):
        heuristic_plan("How many seats were won in the Northgate County Council Election 2024?", s)


def test_a_time_is_read_whole_and_a_season_is_a_period(tmp_path):
    with store_of(tmp_path,
                  doc("m", "City Marathon 2024 results",
                      "Faith Chebet won the women's race in 2:18:45, a course record.", "2024-04-22"),
                  doc("r", "Riverside Rovers 2023-24 Season Review",
                      "Riverside Rovers finished the 2023-24 season with 71 points. Striker Jonas "
                      "Ekdal scored 24 league goals, the most since the 2019-20 season. Last "
                      "season the club had finished seventh with 58 points.", "2024-05-30")) as s:
        plan = heuristic_plan("What was the winning time of the women's race at the City "
                              "Marathon 2024?", s)
        assert answer(plan, s)[1] == "2:18:45"
        assert answer(heuristic_plan("How many points did Riverside Rovers finish with in the "
                                     "2023-24 season?", s), s)[1] == "71"
        assert answer(heuristic_plan("How many league goals did Jonas Ekdal score for "
                                     "Riverside Rovers in 2023-24?", s), s)[1] == "24"


def test_a_day_of_the_month_is_not_the_figure(tmp_path):
    with store_of(tmp_path, doc("w", "UK weather summary, January 2024",
                                "The lowest temperature was recorded at Altnaharra on 17 "
                                "January.", "2024-02-02")) as s, pytest.raises(NoAnswer):
        heuristic_plan("What was the lowest temperature recorded in January 2024?", s)


@pytest.mark.parametrize("sentence", [
    "Free cash flow was negative $41 million.",
    "Free cash flow was a net outflow of $41 million.",
    "Free cash flow was between $40 million and $45 million.",
    "Free cash flow was €(41) million.",
])
def test_a_negative_or_a_range_is_never_reported_as_a_plain_figure(tmp_path, sentence):
    with store_of(tmp_path, doc("q", "Quillon Systems Annual Report 2024", sentence,
                                "2025-02-20")) as s, pytest.raises(NoAnswer):
        heuristic_plan("What was Quillon Systems' free cash flow in 2024?", s)


def test_a_question_about_a_change_gets_the_change(tmp_path):
    with store_of(tmp_path, doc("t", "Tarsis Pharma Q3 2024 Report",
                                "Research and development spending rose 22% to $121 million.")) as s:
        assert answer(heuristic_plan("How much did Tarsis Pharma's research and development "
                                     "spending rise in Q3 2024?", s), s)[1] == "22%"
        assert answer(heuristic_plan("What was Tarsis Pharma's research and development "
                                     "spending in Q3 2024?", s), s)[1] == "$121 million"


def test_a_full_year_or_nine_month_figure_is_not_the_quarters(tmp_path):
    with store_of(tmp_path,
                  doc("q4", "Vantor Logistics Q4 and Full Year 2024 Results",
                      "Full-year revenue was $4.62 billion. Fourth-quarter revenue was $1.24 "
                      "billion.", "2025-02-10"),
                  doc("9m", "Quillon Systems Results for the Nine Months Ended September 30, 2024",
                      "Revenue for the period was $3.38 billion.", "2024-10-25")) as s:
        assert answer(heuristic_plan("What was Vantor Logistics' revenue in Q4 2024?", s),
                      s)[1] == "$1.24 billion"
        with pytest.raises(NoAnswer):
            heuristic_plan("What was Quillon Systems' revenue in Q3 2024?", s)


def test_a_document_without_a_period_answers_only_where_its_sentence_names_the_period(tmp_path):
    with store_of(tmp_path, doc("p", "Pellucid Foods trading update",
                                "Operating margin reached 9.4%. In the second quarter the "
                                "margin was 8.1%.", "2024-10-21")) as s:
        with pytest.raises(NoAnswer):
            heuristic_plan("What was Pellucid Foods' operating margin in Q3 2024?", s)
        assert answer(heuristic_plan("What was Pellucid Foods' margin in Q2 2024?", s),
                      s)[1] == "8.1%"


def test_a_period_named_relative_to_another_is_not_guessed(tmp_path):
    with store_of(tmp_path, doc("h", "Halvorsen Marine Q2 2024 Report",
                                "Revenue was NOK 4.21 billion, up from NOK 3.88 billion a year "
                                "earlier.")) as s, pytest.raises(NoAnswer, match="relative"):
        heuristic_plan("What was Halvorsen Marine's revenue a year earlier than Q2 2024?", s)
    with store_of(tmp_path / "q4", doc("q", "Halvorsen Marine Q4 2024 Report",
                                       "Revenue was NOK 4.40 billion.")) as s:
        with pytest.raises(NoAnswer, match="relative"):
            heuristic_plan("What was Halvorsen Marine's revenue in the last quarter?", s)
        # the last quarter of a year is its fourth
        plan = heuristic_plan("What was Halvorsen Marine's revenue in the last quarter of 2024?",
                              s)
        assert answer(plan, s)[1] == "4.40 billion"


def test_a_name_that_fits_two_companies_which_disagree_is_not_answered(tmp_path):
    with store_of(tmp_path,
                  doc("a", "Halvorsen Marine Q2 2024 Results", "Operating margin was 11.4%.",
                      source_type="official_report"),
                  doc("b", "Halvorsen Maritime Q2 2024 Results", "Operating margin was 6.2%.",
                      source_type="official_report")) as s:
        with pytest.raises(NoAnswer, match="the documents disagree"):
            heuristic_plan("What was Halvorsen's operating margin in Q2 2024?", s)
        assert answer(heuristic_plan("What was Halvorsen Maritime's operating margin in Q2 "
                                     "2024?", s), s)[1] == "6.2%"


def test_the_total_wins_over_a_segment_and_two_unmarked_figures_answer_nothing(tmp_path):
    with store_of(tmp_path,
                  doc("q", "Quillon Systems Annual Report 2024",
                      "Cloud revenue was $1.62 billion. Total revenue was $4.33 billion.",
                      "2025-02-20"),
                  doc("r", "Rondel Annual Report 2024",
                      "Cloud revenue was $1.1 billion. Hardware revenue was $2.2 billion.",
                      "2025-02-20")) as s:
        assert answer(heuristic_plan("What was Quillon Systems' revenue in 2024?", s),
                      s)[1] == "$4.33 billion"
        with pytest.raises(NoAnswer):
            heuristic_plan("What was Rondel's revenue in 2024?", s)


def test_a_code_the_question_names_must_be_in_the_document(tmp_path):
    with store_of(tmp_path, doc("p2", "Veralimab Phase 2 Results",
                                "The phase 2 study randomised 310 patients.")) as s:
        with pytest.raises(NoAnswer):
            heuristic_plan("How many patients were randomised in the Veralimab KESTREL-2 "
                           "trial?", s)


class SearchDownAtGet(SqliteSearch):
    """Finds documents, but every GET meets a search outage."""

    def best(self, *args, **kwargs):
        raise SearchUnavailable("the search store timed out")


def test_a_search_outage_while_fetching_is_not_taken_for_nothing_found(tmp_path):
    with SearchDownAtGet(tmp_path / "s.db") as store:
        store.add(load_jsonl(DATA / "corpus.jsonl"))
        with pytest.raises(TransientToolError, match="SEARCH_UNAVAILABLE"):
            heuristic_plan("What was Tesla's battery yield rate in Q3 2023?", store)
