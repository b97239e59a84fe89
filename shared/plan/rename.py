"""Renaming variables throughout a plan: consumes a `Plan` and renames (bare variable
names, old -> new), produces the plan with every `$OLD`/`${OLD}` in the step fields that
refer to variables and every use of `OLD` in the answer template's `{{ }}` and `{% %}`
blocks reading `NEW`, in one pass over the steps however many the renames.

The template is rewritten token by token (not inside strings, not after `.`, `|` or
`is`) and the result is checked by Jinja2 itself: a rename that would not leave exactly
`OLD` replaced by `NEW` among the template's variables is not made (rename_variables
says which were), rather than change the template's meaning.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import jinja2
from pydantic import TypeAdapter

from shared.models import Plan, Step
from shared.plan.draft import rewrite_references
from shared.render.sandbox import template_reads

_STEP = TypeAdapter(Step)
_BLOCK_RE = re.compile(r"(\{\{|\{%)(.*?)(\}\}|%\})", re.DOTALL)
_TOKEN_RE = re.compile(r"""("(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*')"""
                       r"""|((?:\.|\|)\s*|\bis\s+(?:not\s+)?)?\b([A-Za-z_]\w*)\b""")
_REFERENCE_RE = re.compile(r"\$\{([A-Za-z_]\w*)\}|\$([A-Za-z_]\w*)")


def rename_variables(plan: Plan, renames: Mapping[str, str]) -> tuple[Plan, dict[str, str]]:
    """`plan` reading `$new` wherever it read `$old`, for each rename the answer template
    can take safely, and those renames (the others are left out, their steps unchanged)."""
    answer, made = plan.answer, dict(renames)
    if answer is not None:
        answer, made = _rename_in_template(answer, made)
    if not made:
        return plan, made

    def rewrite(text: str) -> str:
        return _REFERENCE_RE.sub(lambda m: m[0] if (m[1] or m[2]) not in made else (
            f"${{{made[m[1]]}}}" if m[1] else f"${made[m[2]]}"), text)

    steps = [_STEP.validate_python(rewrite_references(s.model_dump(exclude_unset=True), rewrite))
             if not made.keys().isdisjoint(s.references()) else s for s in plan.steps]
    return plan.model_copy(update={"steps": steps, "answer": answer}), made


def _rename_in_template(template: str, renames: dict[str, str]) -> tuple[str, dict[str, str]]:
    """`template` with the renames it can take, and those renames."""
    before = template_variables(template)
    if before is None:
        return template, {}
    used = {old: new for old, new in renames.items() if old in before}
    if not used:
        return template, renames
    renamed = _rename_tokens(template, used)
    if template_variables(renamed) == (before - used.keys()) | set(used.values()):
        return renamed, renames
    for old, new in used.items():  # one at a time, to find the ones it cannot take
        one = _rename_tokens(template, {old: new})
        after = template_variables(one)
        if after == (before - {old}) | {new}:
            template, before = one, after
        else:
            del renames[old]
    return template, renames


def _rename_tokens(template: str, renames: Mapping[str, str]) -> str:
    def block(m: re.Match) -> str:
        return m[1] + _TOKEN_RE.sub(token, m[2]) + m[3]

    def token(m: re.Match) -> str:
        return m[0] if m[1] or m[2] or m[3] not in renames else renames[m[3]]

    return _BLOCK_RE.sub(block, template)


def template_variables(template: str) -> set[str] | None:
    """The variables `template` reads, or None when it does not parse."""
    try:
        return set(template_reads(template))
    except (jinja2.TemplateSyntaxError, RecursionError, MemoryError):
        return None
