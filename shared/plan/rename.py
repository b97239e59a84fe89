"""Renaming a variable throughout a plan: consumes a `Plan` and two bare variable names,
produces the plan with every `$OLD`/`${OLD}` in the step fields that refer to variables
and every use of `OLD` in the answer template's `{{ }}` and `{% %}` blocks reading `NEW`.

The template is rewritten token by token (not inside strings, not after `.`, `|` or
`is`) and the result is checked by Jinja2 itself: when the rewrite would not leave
exactly `OLD` replaced by `NEW` among the template's variables, rename_variable gives
up (None) rather than change the template's meaning.
"""

from __future__ import annotations

import re

import jinja2
from jinja2 import meta
from pydantic import TypeAdapter

from shared.models import Plan, Step
from shared.plan.draft import rewrite_references
from shared.render.sandbox import BudgetedEnvironment

_STEP = TypeAdapter(Step)
_BLOCK_RE = re.compile(r"(\{\{|\{%)(.*?)(\}\}|%\})", re.DOTALL)
_TOKEN_RE = re.compile(r"""("(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*')"""
                       r"""|((?:\.|\|)\s*|\bis\s+(?:not\s+)?)?\b([A-Za-z_]\w*)\b""")


def rename_variable(plan: Plan, old: str, new: str) -> Plan | None:
    """`plan` reading `$new` wherever it read `$old`; None when the template cannot be
    rewritten safely."""
    answer = plan.answer
    if answer is not None:
        answer = rename_in_template(answer, old, new)
        if answer is None:
            return None
    braced = re.compile(rf"\$\{{{re.escape(old)}\}}")
    bare = re.compile(rf"\${re.escape(old)}(?!\w)")

    def rewrite(text: str) -> str:
        return bare.sub(lambda _: f"${new}", braced.sub(lambda _: f"${{{new}}}", text))

    steps = [_STEP.validate_python(rewrite_references(s.model_dump(exclude_unset=True), rewrite))
             for s in plan.steps]
    return plan.model_copy(update={"steps": steps, "answer": answer})


def rename_in_template(template: str, old: str, new: str) -> str | None:
    """`template` using `new` where it used the variable `old`; None when unsure."""
    before = template_variables(template)
    if before is None:
        return None
    if old not in before:
        return template

    def block(m: re.Match) -> str:
        return m[1] + _TOKEN_RE.sub(token, m[2]) + m[3]

    def token(m: re.Match) -> str:
        return m[0] if m[1] or m[2] or m[3] != old else new

    renamed = _BLOCK_RE.sub(block, template)
    after = template_variables(renamed)
    return renamed if after == (before - {old}) | {new} else None


def template_variables(template: str) -> set[str] | None:
    """The variables `template` reads, or None when it does not parse."""
    try:
        return set(meta.find_undeclared_variables(BudgetedEnvironment().parse(template)))
    except (jinja2.TemplateSyntaxError, RecursionError, MemoryError):
        return None
