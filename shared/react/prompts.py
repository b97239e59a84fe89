"""ReAct prompts: consumes the question, the iterations so far (from the run store), the
tools and, in auto mode, the evidence a ReWOO plan already gathered; produces the chat
messages of the next LLM call.

The conversation is rebuilt from the stored iterations on every call, so any worker can
run any iteration: system prompt, the question (with the seed evidence), then per
iteration the model's Action as JSON and a user turn with its Observation.
"""

from __future__ import annotations

import json
from typing import Iterable

from shared.models import ReactIteration

from .actions import FORMAT
from .tools import FINISH, ReactTool

SYSTEM = """You answer questions by using tools, one at a time, and reasoning over what \
they return.
Each turn, reply with exactly one JSON object and nothing else:
{format}

Tools:
{tools}
- {finish}: you are done; input: the final answer as text. Example: \
{{"thought": "R2 states the revenue.", "action": {{"tool": "finish", "input": \
"Acme's Q3 2023 revenue was $412.5 million [R2]."}}}}

Rules:
- Each result gets a name: R1 for your first action, R2 for the next, and so on. Refer \
to an earlier result in a tool input as $R1; results of an earlier plan keep their step \
names ($E1).
- Observations are cut to {chars} characters. [NO_DATA] means nothing was found: change \
the query or the tool. [ERROR] means the tool failed: fix the input or use another tool.
- In the final answer, cite the result each fact comes from as [R1] (or [E1]).
- You have at most {max_iterations} turns; answer with {finish} before they run out."""


def tool_lines(tools: Iterable[ReactTool]) -> str:
    lines = []
    for t in tools:
        example = json.dumps({"tool": t.name, "input": t.example})
        lines.append(f"- {t.name}: {t.description}. Example action: {example}")
    return "\n".join(lines)


def system_prompt(tools: Iterable[ReactTool], max_iterations: int, chars: int = 500) -> str:
    return SYSTEM.format(format=FORMAT, tools=tool_lines(tools), finish=FINISH,
                         chars=chars, max_iterations=max_iterations)


def question_prompt(question: str, seed: str | None = None) -> str:
    text = f"Question: {question}"
    if seed:
        text += ("\n\nA plan already ran for this question. What it found and what is "
                 f"missing:\n{seed}\nContinue from there: find what is missing; do not "
                 "fetch again what is already known.")
    return text


def action_json(it: ReactIteration) -> str:
    """The model's turn as it is replayed: its Action as JSON, or its own unparsable text."""
    if it.tool is None:
        return it.thought or "(empty reply)"
    return json.dumps({"thought": it.thought, "action": {"tool": it.tool, "input": it.tool_input}},
                      ensure_ascii=False)


def observation_turn(it: ReactIteration, last_turn: bool = False) -> str:
    name = f" [R{it.n}]" if it.action_id else ""
    text = f"Observation{name}: {it.observation or '(none)'}"
    if it.feedback:
        text += f"\nNote: {it.feedback}"
    if last_turn:
        text += (f"\nThis is your last turn: reply with {FINISH} and the best answer the "
                 "observations support, saying what is still unknown.")
    return text


def build_messages(question: str, iterations: list[ReactIteration], tools: Iterable[ReactTool],
                   max_iterations: int, *, chars: int = 500, seed: str | None = None,
                   ) -> list[dict]:
    """The messages for iteration `len(iterations) + 1`."""
    messages = [{"role": "system", "content": system_prompt(tools, max_iterations, chars)},
                {"role": "user", "content": question_prompt(question, seed)}]
    last = len(iterations) + 1 == max_iterations
    for i, it in enumerate(iterations):
        messages.append({"role": "assistant", "content": action_json(it)})
        messages.append({"role": "user",
                         "content": observation_turn(it, last and i == len(iterations) - 1)})
    if last and not iterations:
        messages[1]["content"] += f"\nYou have one turn: reply with {FINISH}."
    return messages
