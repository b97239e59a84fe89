"""The answer sandbox's budget and size limits (shared/render/sandbox.py): no Redis."""

from __future__ import annotations

import pytest
from jinja2.exceptions import SecurityError

from shared.render.sandbox import BudgetedEnvironment


def render(template: str, budget_s: float = 5.0, **values) -> str:
    return BudgetedEnvironment(budget_s).from_string(template).render(**values)


@pytest.mark.parametrize("template, expected", [
    ("{{ range(5)|length }}", "5"),
    ("{{ range(5)[2] }}", "2"),
    ("{{ 3 in range(5) }}", "True"),
    ("{{ range(3)|list }}", "[0, 1, 2]"),
    ("{% for i in range(2, 8, 3) %}{{ i }},{{ loop.length }};{% endfor %}", "2,2;5,2;"),
    ("{{ 'ab' * 3 }}-{{ [0] * 2 }}-{{ 2 ** 10 }}-{{ 1.5 * 2 }}", "ababab-[0, 0]-1024-3.0"),
])
def test_ranges_and_small_operators_behave_as_in_plain_jinja(template, expected):
    assert render(template) == expected


def test_nested_loops_end_at_the_budget_with_a_message_naming_the_setting():
    with pytest.raises(SecurityError, match=r"ran past its 0.2s render budget "
                                            r"\(CHORDAL_RENDER_BUDGET_S\)"):
        render("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}"
               "{% endfor %}", budget_s=0.2)


@pytest.mark.parametrize("template, message", [
    ("{{ 'a' * 10**9 }}", "repeating 1 items 1,000,000,000 times is too much"),
    ("{{ 10**9 * [1, 2] }}", "repeating 2 items 1,000,000,000 times"),
    ("{{ 2 ** 100000000 }}", "exponent 100000000 is too large"),
    ("{{ range(10**9) }}", "range\\(\\) of 1,000,000,000 items"),
])
def test_huge_repetitions_and_powers_are_refused_before_they_are_computed(template, message):
    with pytest.raises(SecurityError, match=message):
        render(template)


def test_compiling_a_template_does_not_fold_a_huge_constant():
    """Jinja folds constant expressions while compiling; a plain sandbox would compute
    `'a' * 10**10` (10 GB) just to check the plan. This one defers it to render time."""
    template = BudgetedEnvironment().from_string("{{ 'a' * 10**10 }}")
    with pytest.raises(SecurityError):
        template.render()
