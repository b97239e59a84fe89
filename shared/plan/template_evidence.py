"""What a model-written answer template may print: consumes a parsed `Plan` and the
question it answers, produces the `PlanProblem`s of a template that states what no
evidence backs.

A template is the one place where a model writes the answer's words itself; the
executors' values and their footnotes are the evidence. A small model (SmolLM2-135M in
bench/real_model) wrote "Battery yield was 9.2%." with no variable in it, and the query
ended `done` with a confident figure that no document gave. So a template an LLM wrote
must print at least one step's variable (`uncited_answer`), and every figure in its
literal text must come from the question or from the plan's own arguments, such as the
92 of a COMPUTE `$Y - 92` (`uncited_figure`). Plans that users give keep their freedom;
the LLM planner (shared/planners/llm.py) sends these problems back like the others.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

import jinja2
from jinja2 import meta, nodes

from shared.models import IfStep, Plan, PlanProblem
from shared.render.sandbox import BudgetedEnvironment

FIGURE_RE = re.compile(r"(?<![A-Za-z\d.,])\d+(?:[.,]\d+)*")
"""A figure written in text: 92, 9.2, 1,234.5; not the 3 of Q3 or the 24 of FY24."""
_NOT_EVIDENCE = ("id", "operation", "output_var", "then", "else_")
"""Step fields whose figures a template may not quote: the model's own words (an IF's
`then` and `else_` print as they were written), not the question's or a tool's."""


def check_template_evidence(plan: Plan, question: str) -> list[PlanProblem]:
    """The problems of `plan.answer` as a template a model wrote for `question`."""
    if plan.answer is None:
        return []  # the domain template prints the step values with their footnotes
    try:
        ast = BudgetedEnvironment().parse(plan.answer)
    except jinja2.TemplateSyntaxError:
        return []  # validate.py reports it as bad_template
    bound = {step.var for step in plan.steps}
    printed = meta.find_undeclared_variables(ast) & bound
    problems = []
    if not printed:
        example = next((s.var for s in reversed(plan.steps) if not isinstance(s, IfStep)),
                       "Y")
        problems.append(PlanProblem(step=None, code="uncited_answer", message=(
            "the answer template prints none of the plan's variables, so nothing it says "
            "comes from a document; print the values the steps find, e.g. "
            f"{{{{ {example} }}}}")))
    allowed = figures(question) | {f for s in plan.steps for f in _step_figures(s)}
    for figure in sorted(_literal_figures(ast) - allowed):
        problems.append(PlanProblem(step=None, code="uncited_figure", message=(
            f"the answer template writes the figure {figure:f} itself, but neither the "
            "question nor any step gives it; a figure in the answer must come from a "
            "step: print that step's variable ({{ NAME }}) instead")))
    return problems


def _literal_figures(ast: nodes.Template) -> set[Decimal]:
    """Figures the template prints as written: its text and printed constants."""
    found: set[Decimal] = set()
    for output in ast.find_all(nodes.Output):
        for child in output.nodes:
            if isinstance(child, nodes.TemplateData):
                found |= figures(child.data)
            elif isinstance(child, nodes.Const) and isinstance(child.value, (str, int, float)):
                found |= figures(str(child.value))
    return found


def _step_figures(step) -> set[Decimal]:
    fields = step.model_dump(exclude=set(_NOT_EVIDENCE), exclude_none=True)
    return {f for value in fields.values() for f in figures(str(value))}


def figures(text: str) -> set[Decimal]:
    """The figures written in `text`, as numbers (1,234.5 and 1234.50 are one figure)."""
    found = set()
    for match in FIGURE_RE.findall(text):
        digits = match.replace(",", "") if re.fullmatch(r"\d{1,3}(,\d{3})+(\.\d+)?", match) \
            else match.replace(",", ".")
        try:
            found.add(Decimal(digits).normalize())
        except InvalidOperation:
            continue  # "1.2.3", a version or a date's parts, is no one figure
    return found
