"""Rendering answers: consumes a plan and its step results, produces the `Answer`.

    answer.py   render_answer: template choice, context, footnotes, gaps
    cited.py    values that remember their footnotes and print with markers
    chain.py    what a step's value rests on: inputs, documents, root failures
    period.py   the period a value speaks for and its tense (was / is / will be)
    labels.py   how a sentence names a value, its unit, a legal provision
    redact.py   masking of patient identifiers (domain medical)
    sandbox.py  the Jinja2 sandbox with a render budget and size limits on * and **
    check.py    uncited_numbers: numbers from values that lack a marker
    isolated.py the render in a child process bounded in time and memory
    environment.py  the sandboxed environment both renders use, domain templates compiled once

Names every answer template sees, besides each step variable by bare name (`{{ Y }}`):

    question  the question asked
    values    one item per value shown, each with: var, step, value, shown (the value
              with its unit, long text cut short), kind (number, text, bool, list,
              none), label ("Battery yield rate"), tense, period, title (of the
              documents behind it) and provision (legal: "Article 17", or None)
    missing   one sentence per value that could not be obtained, naming the reason
    tense     "was", "is" or "will be" for the answer as a whole
    period    the period the answer speaks for ("Q3 2023"); "" when none is known
    tenses    variable -> its own tense
    periods   variable -> its own period

Every printed value carries the footnote markers of its documents after each of its
numbers (`91.7[1]%`). Lists print as their items joined by "; ", None as n/a; bools
print as yes/no in the domain templates and stay True/False in a plan's own template.
"""

from .answer import DOMAINS, render_answer, template_name
from .environment import TEMPLATES, environment
from .check import uncited_numbers
from .redact import mask_identifiers

__all__ = ["DOMAINS", "TEMPLATES", "environment", "mask_identifiers", "render_answer",
           "template_name", "uncited_numbers"]
