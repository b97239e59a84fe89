"""ReWOO plan text (Xu et al. 2023, billxbf/ReWOO) in, a `Draft` out (see draft.py).

    Plan: Fetch Tesla's Q3 2023 report.
    #E1 = Wikipedia[Tesla Q3 2023 Financial Report, temporal_scope=2023-Q3]
    Plan: Find the battery yield in it.
    #E2 = Extract[#E1, battery yield rate.*?(\\d+\\.\\d+)%, fallback=unknown]
    Plan: Compare it with the 92% target.
    #E3 = Calculator[#E2 - 92]
    Answer: Battery yield was {{ E2 }}%.

Each `#En = Tool[input]` is step `En` binding `$En`; `#En` in a later input becomes
`$En`. Tools map to operations through the tools table (tools_table.py). `Plan:` lines
are the planner's reasoning and are not kept; a `#En = …` written at the end of a
`Plan:` line counts as its own line. Optional `Answer: <Jinja2 template>` and
`Domain: <domain>` lines set the plan's answer template and domain. Blank lines and
Markdown code fences are skipped; any other line is `bad_syntax`, naming its number.

Inputs, per operation (the last `]` on the line closes the input, so patterns may hold
`]`; a value in matching quotes or backticks loses them; options are `, key=value`
at the end, recognized only for the keys listed):

    GET[source, temporal_scope=2023-Q3, top_k=3]
    SEARCH[query, temporal_scope=2023, top_k=5]
    EXTRACT[#E1, pattern, fallback=unknown, quantity=percent]   pattern: all after the
        first comma up to the options (a pattern ending in `, fallback=…` needs JSON)
    EXTRACT[#E1, row=purchases of property, plant and equipment, period=FY2018,
        quantity=money]   a table's cell: the row's words up to the next option
    COMPUTE[#E2 - 92]
    IF[#E3 < 0 ? below target : on target]   condition up to the first `?`, then-value
        up to the next `:`, else-value the rest (`: …` may be left out)
    VALIDATE[#E2, min=90, max=100, type=percent, pattern=…, source_type=a|b]
    MERGE[#E1, #E2, strategy=list]
    FILTER[#E1, $item > 90] or FILTER[#E1, pattern=…]
    ARBITRATE[#E1, #E2, prefer=source_type == "official_report"|newest]
List options (source_type, prefer) separate items with `|`, `;` or `,`.
"""

from __future__ import annotations

import re

from shared.plan.draft import (FENCE_RE, Draft, rewrite_references, syntax_problem, unknown_tool,
                               unquote)
from shared.plan.tools_table import ToolsTable

STEP_RE = re.compile(r"^#(E\d+)\s*=\s*([A-Za-z_][\w.-]*)\s*\[(.*)\]\s*$")
STEP_START_RE = re.compile(r"^#(E\d+)\b")
PLAN_RE = re.compile(r"^plan\s*:", re.IGNORECASE)
_INLINE_STEP_RE = re.compile(r"#E\d+\s*=")
_REFERENCE_RE = re.compile(r"#(E\d+)\b")

OPTIONS = {"GET": ("temporal_scope", "top_k"), "SEARCH": ("temporal_scope", "top_k"),
           "EXTRACT": ("row", "period", "fallback", "quantity"), "COMPUTE": (), "IF": (),
           "VALIDATE": ("min", "max", "type", "pattern", "source_type"),
           "MERGE": ("strategy",), "FILTER": ("condition", "pattern"), "ARBITRATE": ("prefer",)}
_LISTS = ("source_type", "prefer")

FORMS = {
    "GET": "#E1 = GET[document name, temporal_scope=2023-Q3, top_k=1]",
    "SEARCH": "#E1 = SEARCH[keywords, temporal_scope=2023, top_k=5]",
    "EXTRACT": "#E2 = EXTRACT[#E1, pattern with one (group), fallback=unknown] or "
               "EXTRACT[#E1, row=line item, period=FY2018]",
    "COMPUTE": "#E3 = COMPUTE[#E2 - 92]",
    "IF": "#E4 = IF[#E3 < 0 ? below target : on target]",
    "VALIDATE": "#E4 = VALIDATE[#E2, min=0, max=100, type=percent]",
    "MERGE": "#E5 = MERGE[#E2, #E4, strategy=list]",
    "FILTER": "#E3 = FILTER[#E1, $item > 90] or FILTER[#E1, pattern=…]",
    "ARBITRATE": '#E5 = ARBITRATE[#E2, #E4, prefer=source_type == "official_report"|newest]',
}


def read_rewoo(text: str, tools: ToolsTable) -> Draft:
    """The Draft of ReWOO plan `text`; every line that does not parse is a problem."""
    draft = Draft(syntax="rewoo", steps=[], forms=FORMS)
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if PLAN_RE.match(line) and (inline := _INLINE_STEP_RE.search(line)):
            line = line[inline.start():]
        if not line or FENCE_RE.match(line) or PLAN_RE.match(line):
            continue
        if draft.add_header(line, number):
            continue
        step = _read_step(line, number, tools)
        if step is None:
            draft.problems.append(syntax_problem(None, number, (
                "this line is neither 'Plan: <reasoning>' nor a step; write each "
                "step as #E1 = Tool[input] on its own line")))
            continue
        draft.steps.append(step)
        draft.lines.append(number)
    return draft


def _read_step(line: str, number: int, tools: ToolsTable):
    m = STEP_RE.match(line)
    if m is None:
        start = STEP_START_RE.match(line)
        if start is None:
            return None
        return syntax_problem(start[1], number, (
            f"step #{start[1]} does not parse; write it as "
            f"#{start[1]} = Tool[input], the input in square brackets"))
    step_id, tool, body = m[1], m[2], m[3]
    op = tools.operation(tool)
    if op is None:
        return unknown_tool(step_id, number, tool, tools.known())
    raw = {"id": step_id, "operation": op, **_fields(op, body)}
    return rewrite_references(raw, lambda t: _REFERENCE_RE.sub(r"$\1", t))


def _fields(op: str, body: str) -> dict:
    keys = OPTIONS[op]
    parts = re.split(rf",\s*(?=(?:{'|'.join(keys)})\s*=)", body) if keys else [body]
    fields = _head(op, parts[0])
    for option in parts[1:]:  # an option names its field: it wins over the plain input
        key, _, value = (part.strip() for part in option.partition("="))
        items = [unquote(v) for v in re.split(r"[|;,]", unquote(value)) if v.strip()]
        fields[key] = items if key in _LISTS else unquote(value)
    return {k: v for k, v in fields.items() if v != "" or k in ("then", "else")}


def _head(op: str, head: str) -> dict:
    if op in ("GET", "SEARCH", "COMPUTE", "VALIDATE"):
        name = {"GET": "source", "SEARCH": "query", "COMPUTE": "expression"}.get(op, "value")
        return {name: unquote(head)}
    if op in ("MERGE", "ARBITRATE"):
        return {"sources": [unquote(s) for s in head.split(",") if s.strip()]}
    if op == "IF":
        condition, question, rest = head.partition("?")
        then, colon, otherwise = rest.partition(":")
        return {"condition": unquote(condition), **({"then": unquote(then)} if question else {}),
                **({"else": unquote(otherwise)} if colon else {})}
    first, _, rest = head.partition(",")
    second = "pattern" if op == "EXTRACT" else "condition"
    return {"source": unquote(first), second: unquote(rest)}
