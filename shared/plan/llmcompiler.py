"""LLMCompiler plan text (Kim et al. 2023, SqueezeAILab/LLMCompiler) in, a `Draft` out.

    Thought: Find Tesla's revenue, then compare it with 92.
    1. search("Tesla Q3 2023 revenue", temporal_scope="2023-Q3")
    2. extract($1, "revenue of \\$(\\d+(?:\\.\\d+)?)")
    3. math("$2 - 92")
    4. join()<END_OF_PLAN>
    Answer: Revenue was ${{ E2 }} billion.

Call `N. tool(args)` is step `EN` binding `$EN`; `$N` and `${N}` anywhere in an input
(inside a string or bare, as in `extract($1, "…")`) become `$EN`, so `math("${1} +
${2}")` reads steps 1 and 2. Arguments are Python literals (strings, numbers, lists,
`key=value`), read with `ast.literal_eval`, never evaluated. `Thought:` and `Plan:` lines, a
trailing `# comment` and blank or code-fence lines are skipped; `join()` or `<END_OF_PLAN>` ends
the plan (a call after it is `bad_syntax`; leaving both out is fine); optional
`Answer: <Jinja2 template>` and `Domain: <domain>` lines set those plan fields.

Positional arguments fill, in order (keywords take any field; `else_` for `else`):
GET source, temporal_scope, top_k · SEARCH query, temporal_scope, top_k · EXTRACT
source, pattern, fallback (a table's cell: `extract($1, row="capital expenditure",
period="FY2018")`) · COMPUTE expression · IF condition, then, else · VALIDATE
value · FILTER source, condition · MERGE and ARBITRATE: every positional is a source
(or pass one list).
"""

from __future__ import annotations

import ast
import re
import warnings

from shared.models import PlanProblem
from shared.plan.draft import FENCE_RE, Draft, rewrite_references, syntax_problem, unknown_tool
from shared.plan.tools_table import ToolsTable

CALL_RE = re.compile(r"^(\d+)\s*\.\s*([A-Za-z_]\w*)\s*\((.*)\)\s*(?:#[^\"']*)?$")
CALL_START_RE = re.compile(r"^(\d+)\s*\.")
END_OF_PLAN = "<END_OF_PLAN>"
_REFERENCE_RE = re.compile(r"\$\{?(\d+)\}?")
# a string literal (kept as it is) or a bare $1 / ${1} (quoted so that ast can read it)
_TOKEN_RE = re.compile(r"""[rRbBuUfF]{0,2}("(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*')|\$\{?(\d+)\}?""")
_RESERVED = ("id", "operation", "output_var")

POSITIONAL = {"GET": ("source", "temporal_scope", "top_k"),
              "SEARCH": ("query", "temporal_scope", "top_k"),
              "EXTRACT": ("source", "pattern", "fallback"), "COMPUTE": ("expression",),
              "IF": ("condition", "then", "else"), "VALIDATE": ("value",),
              "FILTER": ("source", "condition")}
_LISTS = ("sources", "prefer", "source_type")

FORMS = {
    "GET": '1. get("document name", temporal_scope="2023-Q3", top_k=1)',
    "SEARCH": '1. search("keywords", temporal_scope="2023", top_k=5)',
    "EXTRACT": '2. extract($1, "pattern with one (group)", fallback="unknown") or '
               'extract($1, row="line item", period="FY2018")',
    "COMPUTE": '3. math("$2 - 92")',
    "IF": '4. if("$3 < 0", "below target", "on target")',
    "VALIDATE": '4. validate($2, min=0, max=100, type="percent")',
    "MERGE": '5. merge($2, $4, strategy="list")',
    "FILTER": '3. filter($1, "$item > 90") or filter($1, pattern="…")',
    "ARBITRATE": '5. arbitrate($2, $4, prefer=[\'source_type == "official_report"\', "newest"])',
}


def read_llmcompiler(text: str, tools: ToolsTable) -> Draft:
    """The Draft of LLMCompiler plan `text`; every line that does not parse is a problem."""
    draft = Draft(syntax="llmcompiler", steps=[], forms=FORMS)
    ended = False
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        ends = line.endswith(END_OF_PLAN)
        line = line.removesuffix(END_OF_PLAN).strip()
        if (not line or FENCE_RE.match(line) or line.lower().startswith(("thought:", "plan:"))
                or draft.add_header(line, number)):
            ended = ended or ends
            continue
        call = CALL_RE.match(line)
        if ended and CALL_START_RE.match(line):
            draft.problems.append(syntax_problem(None, number, (
                "this call comes after join(), which ends the plan; put every "
                "call before join() and join() last")))
        elif call is not None and call[2].lower() == "join":
            ended = True
        elif call is not None:
            draft.steps.append(_read_call(call, number, tools))
            draft.lines.append(number)
        else:
            start = CALL_START_RE.match(line)
            draft.problems.append(syntax_problem(f"E{start[1]}" if start else None, number, (
                "this line is not a numbered call; write each step as "
                '1. tool("input", key=value) on its own line')))
            if start:  # the step is known to exist: bind a stand-in for it
                draft.steps.append(draft.problems.pop())
                draft.lines.append(number)
        ended = ended or ends
    return draft


def _read_call(call: re.Match, number: int, tools: ToolsTable) -> dict | PlanProblem:
    step_id, tool, args = f"E{int(call[1])}", call[2], call[3]
    op = tools.operation(tool)
    if op is None:
        return unknown_tool(step_id, number, tool, tools.known())
    try:
        positional, keywords = _arguments(args)
    except ValueError as e:
        return syntax_problem(step_id, number, f"the arguments of {tool}() "
                              f"{e}; quote text like {tool}(\"Tesla Q3 2023\") and refer to "
                              "step 1 as $1")
    fields, wrong = _fields(op, positional, keywords)
    if wrong:
        return PlanProblem(step=step_id, code="bad_field", message=f"line {number}: {tool}(): "
                           f"{wrong}; write it as {FORMS[op]}")
    raw = {"id": step_id, "operation": op, **fields}
    return rewrite_references(raw, lambda t: _REFERENCE_RE.sub(r"$E\1", t))


def _arguments(args: str) -> tuple[list, dict]:
    code = _TOKEN_RE.sub(lambda m: m[0] if m[1] else f'"${m[2]}"', args)
    try:
        with warnings.catch_warnings():  # "\$" in a plain string warns; it is kept as written
            warnings.simplefilter("ignore")
            call = ast.parse(f"f({code})", mode="eval").body
            if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
                raise ValueError
            positional = [_literal(a) for a in call.args]
            keywords = {k.arg: _literal(k.value) for k in call.keywords if k.arg}
    except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
        raise ValueError("are not Python literals") from None
    if len(keywords) != len(call.keywords):
        raise ValueError("use **, which is not allowed")
    return positional, keywords


def _literal(node: ast.expr) -> object:
    value = ast.literal_eval(node)
    return list(value) if isinstance(value, tuple) else value


def _fields(op: str, positional: list, keywords: dict) -> tuple[dict, str | None]:
    if op in POSITIONAL:
        names = POSITIONAL[op]
        if len(positional) > len(names):
            return {}, f"takes at most {len(names)} plain arguments ({', '.join(names)})"
        fields = dict(zip(names, positional))
    else:
        sources = positional[0] if len(positional) == 1 and isinstance(positional[0], list) \
            else positional
        fields = {"sources": sources} if sources else {}
    for key, value in keywords.items():
        if key in _RESERVED:
            return {}, f"{key!r} is set by the numbering; leave it out"
        key = "else" if key == "else_" else key
        if key in fields:
            return {}, f"{key!r} is given twice"
        fields[key] = [value] if key in _LISTS and isinstance(value, str) else value
    return fields, None
