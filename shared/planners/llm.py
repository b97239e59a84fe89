"""The LLM planner: consumes a question and an `LLMClient`, produces a checked `Plan`
(`planner="llm"`) and the repairs made to it.

Each attempt sends the conversation so far (prompts.py) and reads the reply: a JSON
object `{"reasoning": …, "plan": …}` (the plan as a JSON object, or as ReWOO or
LLMCompiler text in a string; a null member means a field left out, as the strict
schema writes it); a bare plan in any of the three syntaxes is accepted too.
The plan is parsed, repaired and checked by shared/plan/parse.py, and its answer
template by shared/plan/template_evidence.py (a model may not print figures of its own).
When it fails the checks, the model's reply stays in the conversation and a follow-up message lists the
problems (`{step, code, message}`, one per line); the model tries again. After
`attempts` failed attempts, `PlanError` says so and carries the last attempt's problems.

Streamed planning: with a `sink` (shared/journey/dispatch.py's PlanDispatch) and an endpoint
that streams, each reply is read while the model writes it (shared/plan/stream.py); a
step that is complete and passes the checks that need only it and the steps before it
(shared/plan/prefix.py) goes to `sink.offer` at once, so it can run before the reply
ends. The whole reply is still read and checked at its end as above; a step that failed
mid-stream was never offered, and a retry's steps that an earlier reply already offered
(same operation and arguments) reuse those (shared/journey/placement.py). A stream that breaks
off counts as a failed attempt (the same messages are sent again) until the attempts run
out; the steps it offered stay offered.

Every call, failed ones included, is passed to `on_call` (the planner task records it
in the run store). `LLMError` (the endpoint failed after its retries) propagates.

Planning stops with `LLMReplyStopped`, making no further attempt, once its `watch`
(`QueryWatch`) says the query's deadline has passed or the query ended (failed by the
deadline sweeper, cancelled): it is asked before every attempt, the deadline also
bounds every call (client.py), and whether the query ended is asked again while a
reply streams, at most once every `CHECK_EVERY_S` seconds (one Redis read each for the
planner task). The reply schema (prompts.reply_schema) bounds the plan to `max_steps`
steps and every string in it, so a model that loops under it ends its reply.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from typing import Protocol

from shared.config import MAX_PLAN_CHARS, MAX_STEPS
from shared.errors import InputError, LLMError, LLMReplyStopped, LLMStreamBroken, PlanError
from shared.llm.client import LLMClient, LLMReply
from shared.planners.prompts import plan_messages, problems_message, reply_schema
from shared.llm.schema import without_nulls
from shared.llm.stream_reader import StopReading
from shared.broker.log_lines import clip_line
from shared.models import LLMCall, Plan, PlanProblem, Step
from shared.plan.draft import without_fences
from shared.plan.parse import parse_plan_with_repairs, parse_step
from shared.plan.prefix import PrefixCheck
from shared.plan.stream import StepReader
from shared.plan.syntax import detect_syntax
from shared.plan.template_evidence import check_template_evidence
from shared.plan.validate import plan_invalid

log = logging.getLogger("chordal.llm")
REPLY_FORM = ('one JSON object {"reasoning": "…", "plan": {"domain": "…", "steps": [ … ], '
              '"answer": "…"}} and no other text')
CHECK_EVERY_S = 1.0
"""How often, at most, a streaming planner asks whether its query has ended."""


class StepSink(Protocol):
    """Where streamed planning sends the steps it can run early (dispatch.PlanDispatch);
    `begin` comes before every reply (`reply_started_at` None: it is not streamed)."""

    def begin(self, reply_started_at: float | None = None) -> None: ...

    def offer(self, step: Step) -> None: ...


class QueryWatch:
    """Whether planning should stop: the query's `deadline` (a Unix time) has passed, or
    `ended` (None: never) gives the reason its query ended."""

    def __init__(self, deadline: float | None = None,
                 ended: Callable[[], str | None] | None = None):
        self.deadline = deadline
        self.ended = ended or (lambda: None)
        self.next_check = time.monotonic() + CHECK_EVERY_S

    def before(self, attempt: int) -> None:
        """LLMReplyStopped when attempt `attempt` must not be made."""
        if self.deadline is not None and time.time() >= self.deadline:
            why = "the query's deadline has passed"
        else:
            why = self.ended()
        if why:
            raise LLMReplyStopped(f"LLM planning stopped before attempt {attempt}: {why}")

    def check(self) -> None:
        """StopReading once the query has ended (asked at most every CHECK_EVERY_S)."""
        if time.monotonic() < self.next_check:
            return
        self.next_check = time.monotonic() + CHECK_EVERY_S
        why = self.ended()
        if why:
            raise StopReading(why)


def llm_plan(question: str, client: LLMClient, *, attempts: int = 3,
             on_call: Callable[[LLMCall], None] | None = None, documents: list[str] = (),
             max_steps: int = MAX_STEPS, max_chars: int = MAX_PLAN_CHARS,
             prompt: str = "full", sink: StepSink | None = None,
             watch: QueryWatch | None = None) -> tuple[Plan, list[str]]:
    """The plan the model writes for `question` and its repairs (`prompt`: the system
    prompt's variant, prompts.PROMPT_VARIANTS); PlanError after
    `attempts` plans that fail the checks (a plan of more than `max_chars` characters is
    one: `too_large`); LLMError when the endpoint fails; LLMReplyStopped when `watch`
    says the query is past its deadline or ended. With `sink`, replies stream and
    their steps are offered to it as they are written (see the module docstring)."""
    record = on_call or (lambda call: None)
    watch = watch or QueryWatch()
    messages = plan_messages(question, list(documents), max_steps, prompt)
    schema = reply_schema(max_steps)
    problems: list[PlanProblem] = []
    for attempt in range(1, attempts + 1):
        watch.before(attempt)
        purpose, streaming = f"plan {attempt}", sink is not None and client.streams is not False
        if sink is not None:
            sink.begin(time.time() if streaming else None)
        try:
            reply = (_streamed(client, messages, purpose, sink, max_steps, max_chars, schema,
                               watch) if streaming else
                     client.chat(messages, purpose=purpose, json_schema=schema,
                                 deadline=watch.deadline))
        except LLMError as exc:
            if exc.call is not None:
                record(exc.call)
            if isinstance(exc, LLMStreamBroken) and attempt < attempts:
                log.warning("LLM plan attempt %d of %d: %s; asking again", attempt, attempts,
                            exc.message)
                continue  # a stream that broke off: what it offered stays offered
            raise
        record(reply.call)
        try:
            plan, repairs = read_reply(reply.content, max_steps, max_chars)
            _check_evidence(plan, question)
        except PlanError as exc:
            problems = [PlanProblem.model_validate(p) if isinstance(p, dict) else p
                        for p in exc.problems]
            if reply.call.finish_reason == "length":
                problems = [_cut(p, client.max_tokens) for p in problems]
            log.info("LLM plan attempt %d of %d failed its checks: %s", attempt, attempts,
                     ", ".join(p.code for p in problems))
            said = clip_line(reply.content, max_chars)  # a reply too_large is not sent back whole
            messages = [*messages, {"role": "assistant", "content": said},
                        problems_message(problems, attempt, attempts)]
            continue
        return plan.model_copy(update={"planner": "llm"}), repairs
    raise PlanError(f"the LLM planner wrote {attempts} plan{'s' if attempts > 1 else ''} and "
                    "none passed the checks; the problems of the last one are listed",
                    problems)


def _streamed(client: LLMClient, messages: list[dict], purpose: str, sink: StepSink,
              max_steps: int, max_chars: int, schema: dict, watch: QueryWatch) -> LLMReply:
    """The reply, read as it streams: every step complete and fit to run is offered."""
    reader, check = StepReader(max_chars=max_chars), PrefixCheck(max_steps)

    def take(found) -> None:
        for streamed in found:
            step = parse_step(streamed.raw)
            if step is not None and check.accept(step):
                sink.offer(step)

    def on_text(delta: str) -> None:
        take(reader.feed(delta))
        watch.check()

    reply = client.chat_stream(messages, purpose=purpose, json_schema=schema,
                               on_text=on_text, deadline=watch.deadline)
    take(reader.close())
    return reply


def read_reply(content: str, max_steps: int = MAX_STEPS,
               max_chars: int = MAX_PLAN_CHARS) -> tuple[Plan, list[str]]:
    """The checked plan in a planner reply and its repairs; PlanError naming what is
    wrong (code `bad_json` when the reply is not JSON, `bad_field` when it has no plan)."""
    text = without_fences(content)
    if detect_syntax(text) in ("rewoo", "llmcompiler"):
        return _parse(text, max_steps, max_chars)
    try:
        data = _decode(text)
    except RecursionError:
        raise _problem("bad_json", "the reply's JSON is nested too deeply to read; send "
                       + REPLY_FORM) from None
    if isinstance(data, dict) and "plan" in data:
        plan = data["plan"]
    elif isinstance(data, dict) and "steps" in data:
        plan = data  # a bare plan without the reasoning around it
    else:
        raise _problem("bad_field", "the reply has no field 'plan'; send " + REPLY_FORM)
    if not isinstance(plan, (dict, str)):
        raise _problem("bad_field", f"field 'plan' is a JSON {type(plan).__name__}, not an "
                       "object; send " + REPLY_FORM)
    return _parse(without_nulls(plan), max_steps, max_chars)


def _decode(text: str) -> object:
    # strict=False: a control character (a raw newline) inside a string is read, as the
    # grammars of constrained decoders let a model write one there
    try:
        return json.loads(text, strict=False)
    except ValueError as e:
        start = text.find("{")
        if start < 0:
            raise _problem("bad_json", f"the reply is not JSON ({e.msg}) and has no JSON "
                           "object in it; send " + REPLY_FORM) from None
    try:  # prose around the object: read the object that starts at the first "{"
        return json.JSONDecoder(strict=False).raw_decode(text[start:])[0]
    except ValueError as e:
        raise _problem("bad_json", f"the reply is not valid JSON: {e.msg} at character "
                       f"{start + e.pos} of {len(text)}; send " + REPLY_FORM) from None


def _parse(source: str | dict, max_steps: int, max_chars: int) -> tuple[Plan, list[str]]:
    try:
        return parse_plan_with_repairs(source, max_steps=max_steps, max_chars=max_chars)
    except PlanError:
        raise
    except InputError as e:
        raise _problem("bad_syntax", f"{e}; send " + REPLY_FORM) from None


def _check_evidence(plan: Plan, question: str) -> None:
    """PlanError when the answer template states what no step backs (template_evidence.py)."""
    problems = check_template_evidence(plan, question)
    if problems:
        raise PlanError(plan_invalid(len(problems)), problems)


def _cut(problem: PlanProblem, max_tokens: int) -> PlanProblem:
    """`problem` of a reply the server cut at `max_tokens`, saying so when it is unreadable."""
    if problem.code != "bad_json":
        return problem
    return problem.model_copy(update={"message": (
        f"the reply was cut at {max_tokens} tokens (CHORDAL_LLM_MAX_TOKENS) before it "
        f"ended; write a shorter plan. {problem.message}")})


def _problem(code: str, message: str) -> PlanError:
    return PlanError(f"planner reply unusable ({code})",
                     [PlanProblem(step=None, code=code, message=message)])
