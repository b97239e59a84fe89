"""The pure parts of the batch producer: reading and checking batch files, ids, the
status tally and the exported result lines. No Redis needed."""

from __future__ import annotations

import inspect
import json

import pytest

from producers.batch.export import result_line
from producers.batch.file import (LineDefaults, LineError, check_file, derived_id, parse_line,
                                  read_queries)
from producers.batch.follow import Tally, percentile
from shared.errors import InputError

DEFAULTS = LineDefaults(batch="b1", mode="rewoo", deadline_s=90.0)
PLAN = {"steps": [{"id": "E1", "operation": "GET", "source": "Tesla Q3 2023 Financial Report",
                   "output_var": "$R1"}]}


def write(tmp_path, *lines: object, name: str = "q.jsonl"):
    path = tmp_path / name
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    return path


def line_error(raw: object, defaults: LineDefaults = DEFAULTS) -> str:
    with pytest.raises(LineError) as e:
        parse_line(raw if isinstance(raw, str) else json.dumps(raw), defaults)
    return str(e.value)


def test_a_line_with_only_a_question_gets_the_commands_mode_and_deadline():
    q = parse_line('{"question": "What was Tesla\'s battery yield?"}', DEFAULTS)
    assert (q.mode, q.deadline_s, q.plan, q.domain) == ("rewoo", 90.0, None, None)
    assert q.id.startswith("b") and len(q.id) == 21


def test_the_same_line_gets_the_same_id_in_its_batch_and_another_id_elsewhere():
    line = '{"question": "How much revenue?", "deadline": 5}'
    first, again = parse_line(line, DEFAULTS), parse_line(line, DEFAULTS)
    other_batch = parse_line(line, LineDefaults(batch="b2"))
    other_mode = parse_line('{"question": "How much revenue?", "mode": "auto"}', DEFAULTS)
    assert first.id == again.id
    assert len({first.id, other_batch.id, other_mode.id}) == 3
    assert first.id == parse_line('{"question": "How much revenue?"}', DEFAULTS).id, \
        "the deadline is not part of what is asked"


def test_a_given_id_is_kept():
    assert parse_line('{"question": "q", "id": "row-17"}', DEFAULTS).id == "row-17"


@pytest.mark.parametrize("raw, names", [
    ({"id": "x"}, "field 'question' is missing"),
    ({"question": "  "}, "field 'question' is missing or empty"),
    ({"question": "q", "topic": "x"}, "field 'topic' is not allowed; allowed fields: question"),
    ({"question": "q", "mode": "fast"}, "field 'mode' is 'fast'; use one of rewoo, react, auto"),
    ({"question": "q", "deadline": 0}, "field 'deadline' is 0"),
    ({"question": "q", "deadline": "soon"}, "field 'deadline' is 'soon'"),
    ({"question": "q", "id": "has space"}, "field 'id' is 'has space'; use 1-64 letters"),
    ({"question": "q", "id": 17}, "field 'id' is 17; use 1-64 letters"),
    ({"question": "q" * 4001}, "field 'question': String should have at most 4000"),
    ({"question": "q", "domain": "sports"}, "field 'domain' is 'sports'; use one of generic"),
    ({"question": "q", "plan": PLAN, "mode": "react"}, "mode is 'react', which runs no plan"),
    ({"question": "q", "plan": 7}, "field 'plan' is int"),
    ([1, 2], "expected a JSON object"),
    ('{"question": "q",', "not valid JSON"),
])
def test_a_bad_line_names_the_field_and_the_fix(raw, names):
    assert names in line_error(raw)


def test_a_plan_that_fails_its_checks_names_the_step_and_problem():
    bad = {"steps": [{"id": "E1", "operation": "EXTRACT", "source": "$NOPE", "pattern": "(x)",
                      "output_var": "$X"}]}
    message = line_error({"question": "q", "plan": bad})
    assert message.startswith("field 'plan':") and "$NOPE" in message


def test_a_plan_is_accepted_as_json_or_as_text():
    text = "#E1 = Wikipedia[Tesla Q3 2023 Financial Report]"
    as_json = parse_line(json.dumps({"question": "q", "plan": PLAN}), DEFAULTS)
    as_text = parse_line(json.dumps({"question": "q", "plan": text}), DEFAULTS)
    assert as_json.plan.steps[0].source == as_text.plan.steps[0].source


def test_a_domain_without_a_plan_is_kept_for_the_planner():
    q = parse_line('{"question": "q", "domain": "medical"}', DEFAULTS)
    assert q.domain == "medical" and q.plan is None


def test_a_domain_that_contradicts_the_plan_is_rejected_and_one_that_agrees_is_kept():
    plan = {**PLAN, "domain": "finance"}
    assert "but the plan says 'finance'" in line_error(
        {"question": "q", "plan": plan, "domain": "legal"})
    assert parse_line(json.dumps({"question": "q", "plan": plan, "domain": "finance"}),
                      DEFAULTS).domain == "finance"


def test_a_file_with_a_bad_line_names_file_line_and_field_and_submits_nothing(tmp_path):
    path = write(tmp_path, {"question": "a"}, "", {"question": "b", "mode": "fast"},
                 "not json")
    with pytest.raises(InputError) as e:
        check_file(path, DEFAULTS)
    lines = str(e.value).splitlines()
    assert lines[0] == f"{path}: nothing submitted; fix these lines and retry"
    assert lines[1].startswith("q.jsonl line 3: field 'mode' is 'fast'")
    assert lines[2].startswith("q.jsonl line 4: not valid JSON")


def test_many_bad_lines_are_listed_up_to_ten_then_counted(tmp_path):
    path = write(tmp_path, *[{"q": i} for i in range(25)])
    with pytest.raises(InputError) as e:
        check_file(path, DEFAULTS)
    assert str(e.value).splitlines()[-1] == "… and 15 more bad lines"


def test_a_repeated_line_is_submitted_once_but_one_id_for_two_questions_is_an_error(tmp_path):
    path = write(tmp_path, {"question": "a"}, {"question": "b"}, {"question": "a"})
    check = check_file(path, DEFAULTS)
    assert (check.queries, check.duplicates) == (2, {3})
    assert [n for n, _ in read_queries(path, DEFAULTS, check.duplicates)] == [1, 2]
    clash = write(tmp_path, {"question": "a", "id": "x"}, {"question": "b", "id": "x"},
                  name="clash.jsonl")
    with pytest.raises(InputError, match="clash.jsonl line 2: field 'id' 'x' is already used "
                                         "by line 1 for a different query"):
        check_file(clash, DEFAULTS)


def test_an_empty_or_missing_file_says_what_to_give(tmp_path):
    with pytest.raises(InputError, match="no queries in the file"):
        check_file(write(tmp_path, "", " "), DEFAULTS)
    with pytest.raises(InputError, match="no such file"):
        check_file(tmp_path / "absent.jsonl", DEFAULTS)


def test_a_file_is_read_one_line_at_a_time(tmp_path):
    path = write(tmp_path, {"question": "a"}, "broken")
    rows = read_queries(path, DEFAULTS)
    assert inspect.isgenerator(rows)
    assert next(rows)[1].question == "a"  # line 2 is not parsed until it is asked for


def test_derived_ids_fit_the_query_id_pattern():
    assert derived_id("x" * 64, "q" * 4000, "auto", "legal", PLAN).isalnum()


def test_percentiles_are_nearest_rank():
    values = [float(v) for v in range(1, 101)]
    assert (percentile(values, 50), percentile(values, 95), percentile([3.0], 95)) == (50, 95, 3)
    assert percentile([], 50) is None


def test_the_tally_counts_states_latency_throughput_and_the_oldest_unfinished():
    tally = Tally("b1")
    tally.add("a", ["done", "100", "101", None])
    tally.add("b", ["done", "100", "103", None])
    tally.add("c", ["failed", "101", None, "104"])
    tally.add("d", ["executing", "102", None, None])
    tally.add("e", ["queued", "103", None, None])
    tally.add("f", [None, None, None, None])
    s = tally.result(now=110)
    assert s.counts == {"queued": 1, "planning": 0, "executing": 1, "finalizing": 0,
                        "done": 2, "failed": 1, "cancelled": 0, "missing": 1}
    assert (s.total, s.unfinished) == (6, 2)
    assert (s.p50_s, s.p95_s) == (1.0, 3.0)
    assert s.answers_per_s == pytest.approx(2 / 4)
    assert s.oldest_unfinished == {"id": "d", "status": "executing", "age_s": 8.0}


def test_an_exported_line_carries_answer_footnotes_and_latency_or_the_error():
    answer = {"text": "91.7[1]%", "complete": True, "missing": [], "footnotes": [
        {"number": 1, "variables": ["VALUE"], "evidence": {
            "doc_id": "d1", "title": "Tesla Q3", "date": "2023-09-30", "url": "https://x"}}]}
    query = json.dumps({"id": "a", "question": "Yield?"})
    done = result_line("a", 4, [query, "done", json.dumps(answer), None, "10", "12.5", None, None])
    assert done == {"id": "a", "line": 4, "question": "Yield?", "status": "done",
                    "answer": "91.7[1]%", "footnotes": [{"number": 1, "title": "Tesla Q3",
                    "date": "2023-09-30", "url": "https://x", "variables": ["VALUE"]}],
                    "complete": True, "missing": [], "error": None, "latency_s": 2.5}
    failed = result_line("b", 5, [query, "failed", None, "deadline exceeded", "10", None, "70", None])
    assert (failed["answer"], failed["error"], failed["latency_s"]) == (
        None, "deadline exceeded", 60.0)
    gone = result_line("c", 6, [None] * 8)
    assert (gone["status"], gone["error"]) == ("missing", "record expired from the run store")


@pytest.mark.parametrize("number", ["Infinity", "1e400"])
def test_a_deadline_that_is_not_a_finite_number_is_a_bad_line(number):
    assert "field 'deadline'" in line_error('{"question": "q", "deadline": %s}' % number)


@pytest.mark.parametrize("raw, names", [
    ('{"question": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested too deeply"),
    (json.dumps({"question": "q \ud800"}), "field 'question': holds a lone surrogate"),
    (json.dumps({"question": "q", "plan": {**PLAN, "answer": "\udc80 {{ R1 }}"}}),
     "field 'answer': holds a lone surrogate"),
    ('{"question": "q", "deadline": 1' + "0" * 5000 + "}", "more than 4300 digits"),
], ids=["100k-deep", "surrogate-question", "surrogate-answer", "5000-digits"])
def test_json_that_python_or_a_query_cannot_carry_is_a_bad_line(raw, names):
    assert names in line_error(raw)


def test_a_bad_value_is_quoted_only_in_part():
    message = line_error({"question": "q", "mode": "x" * 1_000_000})
    assert message.startswith("field 'mode' is 'xxx") and len(message) < 300
