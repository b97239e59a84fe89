"""The planner's prompts: consumes the question (and the titles of documents that may
answer it), produces the chat messages that ask a model for a ReWOO plan, the reply's
model and its strict JSON schema (schema.py, derived from the Plan models), and the
follow-up message that sends a failed plan's problems back.

The system prompt primes the plan syntax (the JSON plan of docs/plans.md), lists the nine
operations with their fields and an example of each (`EXAMPLE_STEPS`, which together
form one valid plan), gives a checklist the plan must satisfy, and asks for a JSON
object `{"reasoning": …, "plan": …}` so the model thinks before it plans.

Shorter variants (`PROMPT_VARIANTS`, for the real-model bench, bench/real_model/) drop
parts of it for a model whose reply structure the strict schema already enforces:
`fields` the per-operation examples, `signatures` also the field descriptions and all but
four checklist items, `relevant` also every operation a look-up does not need. `full`
is the default; the others are chosen only by passing `variant`.
"""

from __future__ import annotations

import json

from pydantic import BaseModel, ConfigDict

from shared.config import MAX_STEPS
from shared.errors import InputError
from shared.llm.schema import bounded, strict_schema
from shared.models import DOMAINS, OPERATIONS, Plan, PlanProblem
from shared.models.fields import Text

_GET = {"source": "Tesla Q3 2023 Financial Report", "temporal_scope": "2023-Q3"}
EXAMPLE_STEPS: list[dict] = [
    {"id": "E1", "operation": "GET", **_GET, "output_var": "$Q3"},
    {"id": "E2", "operation": "SEARCH", "query": "Tesla battery yield rate",
     "temporal_scope": "2023", "top_k": 5, "output_var": "$HITS"},
    {"id": "E3", "operation": "EXTRACT", "source": "$Q3", "pattern":
     r"battery yield rate of (\d+(?:\.\d+)?)%", "fallback": "unknown", "quantity": "percent",
     "output_var": "$Y"},
    {"id": "E4", "operation": "COMPUTE", "expression": "$Y - 92", "output_var": "$GAP"},
    {"id": "E5", "operation": "IF", "condition": "$GAP >= 0", "then": "met the target",
     "else": "missed the target", "output_var": "$VERDICT"},
    {"id": "E6", "operation": "VALIDATE", "value": "$Y", "min": 0, "max": 100,
     "type": "percent", "output_var": "$Y_OK"},
    {"id": "E7", "operation": "FILTER", "source": "$HITS", "pattern": "yield",
     "output_var": "$YIELD_NEWS"},
    {"id": "E8", "operation": "EXTRACT", "source": "$HITS", "pattern":
     r"yield rate of (\d+(?:\.\d+)?)%", "quantity": "percent", "output_var": "$Y_NEWS"},
    {"id": "E9", "operation": "MERGE", "sources": ["$Y", "$Y_NEWS"], "strategy": "unique",
     "output_var": "$ALL_Y"},
    {"id": "E10", "operation": "ARBITRATE", "sources": ["$Y", "$Y_NEWS"],
     "prefer": ['source_type == "official_report"', "newest"], "output_var": "$BEST_Y"},
    {"id": "E11", "operation": "EXTRACT", "source": "$Q3", "row": "capital expenditure",
     "period": "2023-Q3", "quantity": "money", "output_var": "$CAPEX"},
]
"""One example step per operation, and one per way of extracting (a sentence by
pattern, a table's cell by row and period); in this order they form one valid plan.
Each writes its fields in the order of REPLY_SCHEMA, the order constrained decoders
impose."""

FIELDS = {
    "GET": "source (a document's title as listed, with the period it is about, or its "
           "URL), temporal_scope (a window the document's period must lie in), top_k "
           "(default 1) -> the document's text",
    "SEARCH": "query (keywords), temporal_scope, top_k (default 5) -> ranked snippets",
    "EXTRACT": "source ($VAR of a GET or SEARCH), then either pattern (regex, exactly one "
               "capture group: a figure in a sentence) or row (a table's line item, as the "
               "table or an analyst names it: \"purchases of property, plant and equipment\", "
               "\"capital expenditure\") with period (the column: FY2018, 2018, 2019-Q3, "
               "December 31, 2018; or all: the row in every period of its table, a list for "
               "mean() or sum()); quantity (percent, money, date, number, article), "
               "fallback -> the captured text or the cell",
    "COMPUTE": "expression over $VARs and numbers: + - * / // % **, comparisons, and/or/"
               "not, abs min max round, mean and sum (also of a list), change and "
               "percent_change (of a list of two) -> a number",
    "IF": "condition (a COMPUTE expression), then, else (text or one $VAR) -> the chosen value",
    "VALIDATE": "value ($VAR), min, max, type (number, percent, money, date, text), pattern, "
                "source_type (list) -> true or false",
    "MERGE": "sources (list of $VARs), strategy (first, list, unique) -> combined values",
    "FILTER": "source ($VAR holding a list), condition over $item, pattern -> matching items",
    "ARBITRATE": "sources (two or more $VARs for one fact), prefer (rules tried in order: "
                 'source_type == "official_report", newest, oldest, majority) -> one value',
}
WORKED_EXAMPLE = {
    "reasoning": "The Q3 2023 report states the battery yield rate in a sentence and "
                 "capital expenditure in its cash flow table; the target is 92%. Fetch the "
                 "report once, extract the rate with a pattern, read the capital expenditure "
                 "cell by row and period, compare the rate with 92.",
    "plan": {"domain": "finance", "steps": [
        {"id": "E1", "operation": "GET", **_GET, "output_var": "$R1"},
        {"id": "E2", "operation": "EXTRACT", "source": "$R1", "pattern":
         r"battery yield rate.*?(\d+\.\d+)%", "fallback": "unknown", "output_var": "$Y"},
        {"id": "E3", "operation": "EXTRACT", "source": "$R1", "row": "capital expenditure",
         "period": "2023-Q3", "quantity": "money", "output_var": "$CAPEX"},
        {"id": "E4", "operation": "COMPUTE", "expression": "$Y - 92", "output_var": "$GAP"}],
        "answer": "Battery yield was {{ Y }}%{% if GAP < 0 %}, below the 92% target{% endif %}; "
                  "capital expenditure was {{ CAPEX }}."},
}
CHECKLIST = (
    "Every GET names one concrete document by its exact title (company, kind of report, "
    "period), e.g. one of the listed documents; never a description such as 'the latest "
    "report' or a guess at a URL.",
    "Every EXTRACT reads the $VAR of a GET or SEARCH step, and its pattern has exactly one "
    "capture group (...) around the value; write other groups as (?:...). In JSON, double "
    "every backslash: \"(\\\\d+\\\\.\\\\d+)%\". A figure of a financial statement "
    "(revenue, capital expenditure, total assets) is in a table: give row and period "
    "instead of pattern, the period in period, never in row.",
    "Every $VAR a step or the answer reads is the output_var of an earlier step: no "
    "undefined variables, no step reading its own output.",
    "One source string per concept: fetch each document once and read that step's "
    "variable wherever it is needed; never write the same document two ways.",
    "Step ids (E1, E2, ...) and output_vars are unique; operations are upper case.",
    "temporal_scope, when given, is 2023, 2023-Q3, 2023-H1, 2023-07, 2023-07-01 or "
    "2023-07-01..2023-09-30.",
    "The answer is a Jinja2 template that uses bare names ({{ Y }}, not {{ $Y }}) of "
    "variables the plan binds; it prints every figure through a variable, never one of "
    "its own.",
    "At most {max_steps} steps; the fewest that answer the question.",
)

SYSTEM_PROMPT = """You are the planner of Chordal. You write a ReWOO plan: every tool \
step is decided up front, before any result is seen; executors then run the steps in \
parallel and a template states the answer.

A plan is one JSON object: {{"domain": one of {domains}, "steps": [...], "answer": \
"Jinja2 template"}}. Each step has "id", "operation", its fields, and "output_var" \
("$NAME"); later steps read it as $NAME, the answer template as {{{{ NAME }}}}.

The tools (operations), their fields and an example of each:
{operations}

Before you answer, check every item:
{checklist}

Reply with one JSON object and nothing else: {{"reasoning": "what the question needs, \
which documents hold it, which steps get it", "plan": {{...}}}}. Think in "reasoning" \
first, then write the plan. Example reply:
{example}"""


SIGNATURES = {
    "GET": "source, temporal_scope, top_k",
    "SEARCH": "query, temporal_scope, top_k",
    "EXTRACT": "source ($VAR), pattern (one capture group) or row and period, quantity, "
               "fallback",
    "COMPUTE": "expression over $VARs",
    "IF": "condition, then, else",
    "VALIDATE": "value, min, max, type, pattern, source_type",
    "MERGE": "sources, strategy",
    "FILTER": "source, condition, pattern",
    "ARBITRATE": "sources, prefer",
}
"""Each operation's fields, names only: the `signatures` and `relevant` variants."""
LOOKUP_OPERATIONS = ("GET", "EXTRACT", "COMPUTE")
"""What a question about one figure in one document needs: the `relevant` variant."""
SHORT_CHECKLIST = (0, 1, 2, 6)
"""The checklist items the short variants keep: concrete titles, one capture group, no
undefined variables, bare names in the answer template."""
SHORT_PROMPT = """You are the planner of Chordal. Write a ReWOO plan: every step decided before any result is seen. A plan is {{"domain": one of {domains}, "steps": [...], "answer": "Jinja2 template"}}; each step has "id", "operation", its fields and "output_var" ("$NAME"), read later as $NAME and in the answer as {{{{ NAME }}}}.

Operations and their fields:
{operations}

Rules:
{checklist}

Reply with one JSON object: {{"reasoning": "...", "plan": {{...}}}}. Example reply:
{example}"""
PROMPT_VARIANTS = ("full", "fields", "signatures", "relevant")


class PlannerReply(BaseModel):
    """The reply the planner asks for: its reasoning first, then the plan."""

    model_config = ConfigDict(extra="forbid")

    reasoning: Text
    plan: Plan


REPLY_STRING_CHARS = 500
"""The most characters any string of a planner reply may have under the reply schema:
reasoning of a few sentences, titles, patterns, expressions and an answer sentence need
far less. SmolLM2-135M, asked how many influenza cases Calder County recorded in week
48, wrote its answer template on as prose until the 1,024-token cap; bounded, it closes
the string there, about 170 tokens on, and ends the reply."""


def reply_schema(max_steps: int = MAX_STEPS) -> dict:
    """The strict JSON schema of `PlannerReply`, which constrained decoders enforce: the
    plan without the fields the planner sets itself (`planner`) or leaves to users
    (`drop_unused`), each step's `output_var` last, where the examples write it
    (SmolLM2-135M, made to name the variable before the operation, wrote nonsense until
    it ran out of tokens); 1 to `max_steps` steps (CHORDAL_MAX_STEPS), every other array
    at most `max_steps` items and every string at most REPLY_STRING_CHARS: a model that
    loops under the schema must close what it loops in and end the reply."""
    schema = strict_schema(PlannerReply, omit={"Plan": ("planner", "drop_unused")},
                           last=("output_var",))
    schema["$defs"]["Plan"]["properties"]["steps"]["minItems"] = 1
    return bounded(schema, REPLY_STRING_CHARS, max_steps)


REPLY_SCHEMA: dict = reply_schema()
"""The reply schema at the default CHORDAL_MAX_STEPS."""


def system_prompt(max_steps: int = MAX_STEPS, variant: str = "full") -> str:
    """The planner's system prompt; `variant` one of PROMPT_VARIANTS (InputError else)."""
    if variant not in PROMPT_VARIANTS:
        raise InputError(f"prompt variant {variant!r} is unknown; use one of "
                         f"{', '.join(PROMPT_VARIANTS)}")
    if variant == "full":
        operations = "\n".join(f"- {op}: {FIELDS[op]}\n  e.g. "
                               + " or ".join(json.dumps(e) for e in _examples(op))
                               for op in OPERATIONS)
    elif variant == "fields":
        operations = "\n".join(f"- {op}: {FIELDS[op]}" for op in OPERATIONS)
    else:
        ops = LOOKUP_OPERATIONS if variant == "relevant" else OPERATIONS
        operations = "\n".join(f"- {op}({SIGNATURES[op]})" for op in ops)
    items = CHECKLIST if variant in ("full", "fields") else [CHECKLIST[i] for i in SHORT_CHECKLIST]
    checklist = "\n".join(f"{n}. {item.replace('{max_steps}', str(max_steps))}"
                          for n, item in enumerate(items, start=1))
    template = SYSTEM_PROMPT if variant in ("full", "fields") else SHORT_PROMPT
    return template.format(domains=", ".join(DOMAINS), operations=operations,
                           checklist=checklist, example=json.dumps(WORKED_EXAMPLE))


def _examples(op: str) -> list[dict]:
    """The example steps of `op` that show a field the ones before them do not."""
    shown: list[dict] = []
    for step in EXAMPLE_STEPS:
        if step["operation"] == op and not any(set(step) <= set(s) for s in shown):
            shown.append(step)
    return shown


def plan_messages(question: str, documents: list[str] = (), max_steps: int = MAX_STEPS,
                  variant: str = "full") -> list[dict]:
    """The opening messages that ask for a plan answering `question` (`variant`: which
    system prompt, one of PROMPT_VARIANTS)."""
    user = f"Question: {question}"
    if documents:
        user += ("\n\nDocuments in the search store that may hold the answer (title, the "
                 "period it is about, when it was published):\n"
                 + "\n".join(f"- {d}" for d in documents))
    return [{"role": "system", "content": system_prompt(max_steps, variant)},
            {"role": "user", "content": user}]


def problems_message(problems: list[PlanProblem], attempt: int, attempts: int) -> dict:
    """The follow-up that sends a failed plan's problems back to the model."""
    listed = "\n".join(json.dumps(p.model_dump()) for p in problems)
    return {"role": "user", "content": (
        f"Your plan (attempt {attempt} of {attempts}) failed these checks, one "
        f"{{step, code, message}} per line:\n{listed}\nFix every problem and reply again "
        "with the whole JSON object {\"reasoning\": ..., \"plan\": ...}.")}
