"""Plan steps read out of a reply while it is written: each step comes out at the delta
that completes it, and all of them are the steps the whole reply holds."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from shared.planners.llm import read_reply
from shared.planners.prompts import EXAMPLE_STEPS, WORKED_EXAMPLE
from shared.llm.schema import without_nulls
from shared.models import PlanProblem
from shared.plan.draft import FENCE_RE
from shared.plan import stream as stream_module
from shared.plan.stream import StepReader
from shared.plan.syntax import detect_syntax, read_draft

PLANS = Path(__file__).parents[3] / "shared" / "data" / "plans"
REWOO = (PLANS / "two_branch.rewoo.txt").read_text()
LLMCOMPILER = (PLANS / "two_branch.llmcompiler.txt").read_text()
STRICT = {  # as a strict schema makes a model write it: every field, null when left out
    "reasoning": "Fetch the report, read the yield, compare it with 92.",
    "plan": {"domain": "finance", "steps": [
        {"id": "E1", "operation": "GET", "source": "Tesla Q3 2023 Financial Report",
         "temporal_scope": "2023-Q3", "top_k": None, "output_var": "$R1"},
        {"id": "E2", "operation": "EXTRACT", "source": "$R1", "pattern": r"yield (\d+)%",
         "quantity": None, "fallback": None, "output_var": "$Y"},
        {"id": "E3", "operation": "COMPUTE", "expression": "$Y - 92", "output_var": None}],
        "answer": "Yield {{ Y }}%."}}
TRICKY = {  # braces, brackets, quotes and escapes inside strings, lists inside steps
    "reasoning": 'Not a plan: "steps": [{"id": "X1", "operation": "GET"}] } ] { [ \\',
    "plan": {"steps": [
        {"id": "E1", "operation": "GET", "source": "Tesla [Q3] {2023} \"report\" — é"},
        {"id": "E2", "operation": "EXTRACT", "source": "$E1", "pattern": r"\{(\d+)\}"},
        {"id": "E3", "operation": "EXTRACT", "source": "$E1", "pattern": r"rate (\d+)%"},
        {"id": "E4", "operation": "MERGE", "sources": ["$E2", "$E3"], "strategy": "list"},
        {"id": "E5", "operation": "ARBITRATE", "sources": ["$E2", "$E3"],
         "prefer": ['source_type == "official_report"', "newest"]}],
        "answer": "{{ E5 }}{% if E5 > 90 %} [high]{% endif %} {# } #}"}}
JSON_REPLIES = [
    json.dumps(WORKED_EXAMPLE),
    json.dumps(WORKED_EXAMPLE, indent=2, ensure_ascii=False),
    json.dumps({"plan": {"answer": "{{ Y }}", "steps": WORKED_EXAMPLE["plan"]["steps"]},
                "reasoning": "the plan first"}),
    json.dumps(STRICT),
    json.dumps(TRICKY),
    (PLANS / "tesla_yield.json").read_text(),
    "Here is the plan:\n```json\n" + json.dumps({"steps": EXAMPLE_STEPS}, indent=1) + "\n```\n",
    "\ufeff" + json.dumps({"steps": EXAMPLE_STEPS[:3]}),
    '{"plan": {"steps": [\n```\n' + json.dumps(EXAMPLE_STEPS[0]) + "\n  ```json\n]}}",
    '\n{"plan": {"steps": [{"id": "E\\u0031", "operation": "GET", "source": "a \\u007b\\u0022'
    ' \\ud83d\\ude00"}, {"id": "E2", "operation": "COMPUTE", "expression": "1"}]}}',
]
TEXT_REPLIES = [
    REWOO, LLMCOMPILER, REWOO.rstrip("\n"), "```\n" + LLMCOMPILER + "```",
    "#E1 = Extract[#E0, a\\{3\\}, fallback=none]\n#E2 = Calculator[#E1 + 1]",
    "Plan: fetch it\n#E1 = Wikipedia[Tesla Q3 2023 report]\n#E2 = Nope[x]\n#E3 broken\n"
    "this line is no step\n#E4 = Calculator[#E1 * 2]\nAnswer: {{ E4 }}\n",
    '1. search("Tesla")\n2. extract($1, "unclosed\n3. nope("x")\n4. math("$1 + ${2}")\n'
    'join()\n5. math("1")\nAnswer: {{ E4 }}',
]
VALID = JSON_REPLIES[:8] + TEXT_REPLIES[:4]


def whole_reply_steps(text: str) -> list:
    """The raw steps `read_reply` reads from the whole reply."""
    text = "\n".join("" if FENCE_RE.match(line) else line for line in text.split("\n"))
    if detect_syntax(text) in ("rewoo", "llmcompiler"):
        return read_draft(text).steps
    data = json.JSONDecoder().raw_decode(text[text.index("{"):])[0]
    return without_nulls(data["plan"] if "plan" in data else data)["steps"]


def stream(deltas: list[str], **kwargs) -> tuple[list, StepReader]:
    reader = StepReader(**kwargs)
    steps = [s for delta in deltas for s in reader.feed(delta)] + reader.close()
    assert [s.index for s in steps] == list(range(len(steps)))
    return [s.raw for s in steps], reader


def emitted_at(text: str, **kwargs) -> list[int]:
    """The index of the character whose delta emitted each step, fed one at a time."""
    reader, at = StepReader(**kwargs), []
    for i, char in enumerate(text):
        at += [i] * len(reader.feed(char))
    return at + [len(text)] * len(reader.close())


@st.composite
def split_reply(draw, replies=JSON_REPLIES + TEXT_REPLIES):
    text = draw(st.sampled_from(replies))
    cuts = sorted(draw(st.sets(st.integers(1, len(text) - 1), max_size=40)))
    return text, [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]


def test_every_example_reply_is_one_the_planner_accepts():
    for text in VALID:
        read_reply(text)


@settings(max_examples=300, deadline=None)
@given(split_reply())
def test_any_split_of_a_reply_streams_exactly_the_steps_of_the_whole_reply(case):
    text, deltas = case
    raws, reader = stream(deltas)
    assert raws == whole_reply_steps(text)
    assert not reader.stopped
    assert reader.syntax == ("json" if text in JSON_REPLIES else detect_syntax(text))


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                 max_size=3), max_leaves=8)
OTHER_KEYS = st.text(max_size=8).filter(lambda key: key not in ("plan", "steps"))


@st.composite
def json_reply(draw):
    steps = draw(st.lists(st.dictionaries(st.text(max_size=8), JSON_VALUES, max_size=4) |
                          JSON_VALUES, max_size=5))
    plan = {**draw(st.dictionaries(OTHER_KEYS, JSON_VALUES, max_size=2)), "steps": steps}
    plan = dict(draw(st.permutations(list(plan.items()))))
    reply = {**draw(st.dictionaries(OTHER_KEYS, JSON_VALUES, max_size=2)),
             **({"plan": plan} if draw(st.booleans()) else plan)}
    reply = dict(draw(st.permutations(list(reply.items()))))
    text = json.dumps(reply, indent=draw(st.sampled_from([None, 0, 2])),
                      ensure_ascii=draw(st.booleans()))
    cuts = sorted(draw(st.sets(st.integers(1, len(text) - 1), max_size=30)))
    return text, [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]


@settings(max_examples=300, deadline=None)
@given(json_reply())
def test_any_json_reply_split_anywhere_streams_the_elements_of_its_plans_steps(case):
    text, deltas = case
    raws, reader = stream(deltas)
    assert raws == whole_reply_steps(text) and reader.syntax == "json" and not reader.stopped


def test_a_json_step_is_emitted_at_the_brace_that_closes_it_and_not_before():
    text = json.dumps(WORKED_EXAMPLE)
    start, decoder, closes = text.index("[", text.index('"steps"')) + 1, json.JSONDecoder(), []
    while text[start] == "{":
        start = decoder.raw_decode(text, start)[1]
        closes.append(start - 1)
        start += len(", ")
    assert len(closes) == len(WORKED_EXAMPLE["plan"]["steps"]) == 4
    assert emitted_at(text) == closes


def test_a_text_step_is_emitted_at_the_newline_that_ends_its_line():
    ends = [i for i, char in enumerate(REWOO) if char == "\n"
            and REWOO[REWOO.rfind("\n", 0, i) + 1:].startswith("#E")]
    assert len(ends) == 5
    assert emitted_at(REWOO) == ends


def test_a_last_text_line_without_a_newline_is_emitted_by_close():
    text = "#E1 = Wikipedia[Tesla Q3 2023 report]\n#E2 = Calculator[#E1 + 1]"
    assert emitted_at(text) == [text.index("\n"), len(text)]


def test_braces_brackets_and_quotes_inside_strings_neither_end_nor_start_a_step():
    raws, _ = stream(list(json.dumps(TRICKY)))
    assert raws == TRICKY["plan"]["steps"]
    assert raws[1]["pattern"] == r"\{(\d+)\}"
    assert raws[4]["prefer"] == ['source_type == "official_report"', "newest"]


def test_unicode_escapes_are_read_as_json_reads_them():
    raws, _ = stream(list(JSON_REPLIES[-1]))
    assert raws[0] == {"id": "E1", "operation": "GET", "source": 'a {" \U0001F600'}


def test_steps_written_inside_the_reasoning_text_are_not_steps():
    text = json.dumps({"reasoning": 'I could write "steps": [{"id": "E9"}] here',
                       "plan": {"domain": "finance", "steps": []}})
    assert stream(list(text))[0] == []


def test_prose_and_a_code_fence_before_the_object_are_skipped():
    body = json.dumps(WORKED_EXAMPLE, indent=1)
    for prefix in ("Sure! Here is my plan.\n```json\n", "```json\n", "Thinking: done.\n\n"):
        raws, reader = stream([prefix, body[:9], body[9:], "\n```\nThat is all."])
        assert raws == WORKED_EXAMPLE["plan"]["steps"]
        assert reader.syntax == "json"


def test_null_members_are_left_out_as_the_strict_schema_means_them():
    raws, _ = stream(list(json.dumps(STRICT)))
    assert raws[0] == {"id": "E1", "operation": "GET", "source": "Tesla Q3 2023 Financial Report",
                       "temporal_scope": "2023-Q3", "output_var": "$R1"}
    assert "output_var" not in raws[2]


def test_a_malformed_reply_yields_the_steps_complete_before_the_damage_and_never_raises():
    good = json.dumps(WORKED_EXAMPLE)
    second = good.index('{"id": "E2"')
    damaged = {
        good[:second - 2] + " " + good[second:]: 1,  # the comma between two steps is gone
        good.replace('"source": "$R1"', '"source": "$R\\x1"'): 1,  # an escape JSON has not
        good.replace('"source": "$R1"', '"source": "$R\n1"'): 1,  # a raw newline in a string
        good.replace('"fallback"', "fallback"): 1,
        good.replace('"output_var": "$GAP"', '"output_var": tru'): 3,
        good.replace('"temporal_scope": "2023-Q3"', '"temporal_scope": 2023-Q3'): 0,
        "{{" + good[1:]: 0,
        good.replace('"steps": [', '"steps": [ ```\n'): 0,  # a fence line is on a line alone
        "{" * 5000: 0,
        '{"plan": {"steps": [' + "[" * 5000 + "]" * 5000 + "]}}": 0,
    }
    for text, complete in damaged.items():
        for deltas in ([text], list(text)):
            raws, reader = stream(deltas)
            assert raws == WORKED_EXAMPLE["plan"]["steps"][:complete]
            assert reader.stopped
    raws, reader = stream(list(good[:-40]))  # cut off in the answer, after the steps
    assert raws == WORKED_EXAMPLE["plan"]["steps"] and not reader.stopped


def test_a_plan_written_as_text_inside_json_streams_nothing():
    text = json.dumps({"reasoning": "two steps", "plan": REWOO})
    raws, reader = stream(list(text))
    assert raws == [] and reader.syntax is None and not reader.stopped


def test_nothing_is_emitted_past_max_chars():
    text = json.dumps(WORKED_EXAMPLE)
    third_closes = emitted_at(text)[2]
    assert len(stream(list(text), max_chars=third_closes)[0]) == 2
    raws, reader = stream(list(text), max_chars=third_closes + 1)
    assert len(raws) == 3 and reader.stopped
    cut = REWOO.index("#E5") + 5
    assert stream([REWOO], max_chars=cut)[0] == whole_reply_steps(REWOO)[:4]


def test_a_second_plan_or_steps_member_after_steps_were_emitted_stops_the_stream():
    steps = WORKED_EXAMPLE["plan"]["steps"]
    bare_then_plan = json.dumps({"steps": steps[:1], "plan": {"steps": steps}})
    raws, reader = stream([bare_then_plan])
    assert raws == steps[:1] and reader.stopped
    bare_then_text = json.dumps({"steps": steps[:1], "plan": "#E1 = Calculator[1]"})
    raws, reader = stream([bare_then_text])
    assert raws == steps[:1] and reader.stopped and reader.syntax is None
    text_then_bare = json.dumps({"plan": "#E1 = Calculator[1]", "steps": steps})
    raws, reader = stream(list(text_then_bare))  # read_reply reads the text plan
    assert raws == [] and reader.syntax is None and not reader.stopped
    twice = '{"plan": {"steps": ' + json.dumps(steps[:1]) + ', "steps": ' + json.dumps(steps) + "}}"
    raws, reader = stream(list(twice))  # read_reply keeps the last "steps"
    assert raws == steps[:1] and reader.stopped
    empty_then_full = '{"plan": {"steps": [], "steps": ' + json.dumps(steps) + "}}"
    assert stream(list(empty_then_full))[0] == whole_reply_steps(empty_then_full) == steps


def test_the_syntax_is_known_as_soon_as_the_reply_shows_it():
    for text, syntax, known_at in ((json.dumps(WORKED_EXAMPLE), "json", 0),
                                   ("```json\n{", "json", 8),
                                   (REWOO, "rewoo", REWOO.index("\n")),
                                   (LLMCOMPILER, "llmcompiler", LLMCOMPILER.index("\n"))):
        reader, seen = StepReader(), []
        for char in text:
            reader.feed(char)
            seen.append(reader.syntax)
        assert seen.index(syntax) == known_at


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from([
    '{"plan": ', '{"steps": [', '{"id": "E1"}', "[", "]", "{", "}", ", ", ":", '"', "\\",
    "\\u00", "null", "1", "```\n", "\n", "\n\n", " ", "#E1 = Calculator[1]", '1. math("1")',
    "Plan: x", "plan", "#E2", "=", ".", "(", "foo", '"steps"', '"reasoning": "', "é",
    "join()"]), max_size=40),
    st.integers(1, 7))
def test_any_text_in_any_deltas_never_raises_and_streams_what_the_whole_text_holds(parts, size):
    text = "".join(parts)
    raws, reader = stream([text[i:i + size] for i in range(0, len(text), size)])
    blanked = "\n".join("" if FENCE_RE.match(line) else line for line in text.split("\n"))
    syntax = detect_syntax(blanked)
    if blanked.lstrip().startswith("{"):
        try:
            data = json.JSONDecoder().raw_decode(blanked.lstrip())[0]
        except ValueError:
            return
        plan = without_nulls(data.get("plan", data))
        steps = plan.get("steps") if isinstance(plan, dict) else None
        assert reader.stopped or raws == (steps if isinstance(steps, list) else [])
    elif "{" not in text and not reader.stopped:
        text_syntax = syntax if syntax in ("rewoo", "llmcompiler") else None
        assert reader.syntax == text_syntax
        assert raws == (read_draft(blanked).steps if text_syntax else [])


def test_a_long_think_before_the_json_object_does_not_keep_it_from_streaming():
    think = "".join(f"Thought {i}: the report (Q3) may say: yield = {i}%.\n" for i in range(1500))
    text = think + json.dumps(WORKED_EXAMPLE)
    raws, reader = stream(list(text))
    assert raws == whole_reply_steps(text) == WORKED_EXAMPLE["plan"]["steps"]
    assert reader.syntax == "json" and not reader.stopped


def test_text_that_begins_with_a_bracket_is_never_read_as_a_text_plan():
    raws, reader = stream(list("[note]\n#E1 = Calculator[1]\n"))
    assert detect_syntax("[note]\n#E1 = Calculator[1]\n") == "json"
    assert raws == [] and reader.syntax is None


def test_a_text_reply_that_turns_out_to_be_another_syntax_stops_the_stream():
    text = 'Plan: fetch it\n#E1 fetch it\n1. math("1 + 1")\n'
    raws, reader = stream(list(text))
    assert [type(raw) for raw in raws] == [PlanProblem] and reader.stopped
    assert whole_reply_steps(text) == [{"id": "E1", "operation": "COMPUTE", "expression": "1 + 1"}]


def test_a_text_step_the_reader_cannot_read_is_streamed_as_its_problem_in_its_place():
    raws, reader = stream(list(TEXT_REPLIES[5]))
    assert reader.syntax == "rewoo"
    assert [r.step if isinstance(r, PlanProblem) else r["id"] for r in raws] == [
        "E1", "E2", "E3", "E4"]
    assert [type(r) for r in raws] == [dict, PlanProblem, PlanProblem, dict]
    assert raws[1].message.startswith("line 3: ") and raws[3]["expression"] == "$E1 * 2"


def test_a_text_reply_of_thousands_of_lines_stops_streaming_rather_than_reread_them_all(
        monkeypatch):
    monkeypatch.setattr(stream_module, "REREAD_BUDGET", 4 * len(REWOO))
    raws, reader = stream(REWOO.splitlines(keepends=True))
    assert reader.stopped and 0 < len(raws) < 5 and raws == whole_reply_steps(REWOO)[:len(raws)]
