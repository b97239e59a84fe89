"""Reading the model's reply: the JSON Action, however the model bent the format."""

from __future__ import annotations

import pytest

from shared.react.actions import parse_action, to_json

PLAIN = '{"thought": "I need the report.", "action": {"tool": "get", "input": "Tesla Q3 2023"}}'


def test_a_well_formed_reply_gives_its_thought_tool_and_input():
    a = parse_action(PLAIN)
    assert (a.thought, a.tool, a.input, a.error) == ("I need the report.", "get", "Tesla Q3 2023", None)


@pytest.mark.parametrize("reply", [
    "```json\n" + PLAIN + "\n```",
    "Sure! Here is my next step:\n" + PLAIN + "\nLet me know.",
    '{"thought": "I need the report.", "action": {"tool": "get", "input": "Tesla Q3 2023",},}',
    "{'thought': 'I need the report.', 'action': {'tool': 'get', 'input': 'Tesla Q3 2023'}}",
    "{\u201cthought\u201d: \u201cI need the report.\u201d, \u201caction\u201d: "
    "{\u201ctool\u201d: \u201cget\u201d, \u201cinput\u201d: \u201cTesla Q3 2023\u201d}}",
    '{"thought": "I need the report.", "action": {"tool": "GET", "input": "Tesla Q3 2023"}}',
])
def test_fences_surrounding_text_trailing_commas_and_odd_quotes_are_tolerated(reply):
    a = parse_action(reply)
    assert (a.thought, a.tool, a.input) == ("I need the report.", "get", "Tesla Q3 2023")


def test_an_apostrophe_inside_a_single_quoted_string_does_not_end_it():
    a = parse_action("{'thought': \"Tesla's report has it\", 'action': {'tool': 'search', "
                     "'input': 'Tesla's revenue'}}")
    assert a.tool == "search" and a.input == "Tesla's revenue"


def test_regex_backslashes_the_model_forgot_to_escape_survive_into_the_pattern():
    reply = (r'{"thought": "x", "action": {"tool": "extract", "input": {"source": "$R1", '
             r'"pattern": "revenue of \$(\d+(?:\.\d+)?) billion"}}}')
    a = parse_action(reply)
    assert a.input == {"source": "$R1", "pattern": r"revenue of \$(\d+(?:\.\d+)?) billion"}


def test_braces_inside_strings_and_a_second_object_after_the_first_do_not_confuse_it():
    reply = ('{"thought": "dates", "action": {"tool": "extract", "input": {"pattern": "(\\\\d{4})"}}}'
             ' and afterwards {"note": 1}')
    a = parse_action(reply)
    assert a.tool == "extract" and a.input == {"pattern": r"(\d{4})"}


def test_python_literals_become_json():
    a = parse_action("{'thought': 'now', 'action': {'tool': 'current_time', 'input': None}}")
    assert a.tool == "current_time" and a.input is None
    assert to_json("{'a': True, 'b': False}") == '{"a": true, "b": false}'


def test_the_classic_react_text_form_is_understood():
    a = parse_action("Thought: search first\nAction: search[Voltara cell shipments]")
    assert (a.thought, a.tool, a.input) == ("search first", "search", "Voltara cell shipments")


def test_a_flat_tool_and_input_object_is_understood():
    a = parse_action('{"thought": "t", "tool": "calculate", "input": "2 + 2"}')
    assert (a.tool, a.input) == ("calculate", "2 + 2")


@pytest.mark.parametrize("reply, reason", [
    ("I think I should look at the report first.", "holds no JSON object"),
    ('{"thought": "thinking only"}', 'has no "action"'),
    ('{"thought": "t", "action": {"input": "x"}}', "names no tool"),
    ("", "holds no JSON object"),
])
def test_a_reply_without_an_action_gets_feedback_naming_the_problem_and_the_format(reply, reason):
    a = parse_action(reply)
    assert not a.valid and a.tool is None
    assert a.error.startswith("no valid Action:") and reason in a.error
    assert '"action": {"tool"' in a.error  # the format to use next time


SMOLLM2_UNDER_SCHEMA = ('{ "thought": "Northwind Motors\' battery yield in Q3 2023 was $1.45." , '
                        '"action" : { "tool": "get", "input": "Acme\'s Q3 2023 Battery Yield"} }')
"""What SmolLM2-135M wrote under the reply schema (json_object_schema): spaces around
the colons and commas, an apostrophe inside a string."""


def test_a_real_small_model_reply_under_the_schema_gives_its_action():
    a = parse_action(SMOLLM2_UNDER_SCHEMA)
    assert (a.tool, a.input) == ("get", "Acme's Q3 2023 Battery Yield")
    assert a.thought.startswith("Northwind Motors' battery yield")


def test_a_real_small_model_reply_without_the_schema_is_prose_and_told_the_format():
    a = parse_action("The answer is:\nR2.")  # SmolLM2-135M asked by the prompt alone
    assert not a.valid and a.error.startswith("no valid Action: the reply holds no JSON")
    assert '"action"' in a.error
