"""Hostile plans end to end through real workers: code smuggled into COMPUTE, Jinja
templates reaching for Python internals or burning the finalizer, a catastrophic regex. Each is refused by the
plan checker (the query fails before anything runs, naming the problem) or contained
at run time (a step error code, or the sandbox's refusal in the answer); nothing runs.
"""

from __future__ import annotations

import pytest

from shared.search.document import Document

from .conftest import assert_one_outcome, plan, wait_all

pytestmark = pytest.mark.faults
HOSTILE_TITLE = "Hostile Regex Bait"
HOSTILE = Document(title=HOSTILE_TITLE, content="a" * 40 + "! plus the battery yield rate",
                   date="2023-09-30")

REFUSED_BY_THE_CHECKER = {  # expression -> what the problem says
    "__import__('os').system('id')": "calling __import__('os').system is not allowed",
    "open('/etc/passwd')": "calling open is not allowed",
}
CONTAINED_AT_RUN_TIME = {"9 ** 9 ** 9": "OUT_OF_RANGE"}
ALSO_REFUSED = ["().__class__.__bases__", "(lambda: 1)()", "$Y.__class__"]
TEMPLATES = {
    "{{ ''.__class__.__mro__[1].__subclasses__() }}": "access to attribute '__class__' of 'str' object is unsafe",
    "{{ cycler.__init__.__globals__ }}": "access to attribute '__init__' of 'type' object is unsafe",
    "{{ Y.__class__.__init__.__globals__ }}":
        "access to attribute '__init__' of 'StrictUndefined' object is unsafe",
}

BURNERS = {  # template -> what the answer says (render budget 1 s in the test)
    "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}":
        "the template ran past its 1s render budget (CHORDAL_RENDER_BUDGET_S)",
    "{{ 'a' * 10**9 }}": "repeating 1 items 1,000,000,000 times is too much",
    "{{ 2 ** 100000000 }}": "exponent 100000000 is too large",
    "{% macro f(n) %}{{ f(n) }}{% endmacro %}{{ f(1) }}": "RecursionError",
}


def compute_plan(expression: str) -> dict:
    p = plan()
    p["steps"].append({"id": "E3", "operation": "COMPUTE", "expression": expression,
                       "output_var": "$X"})
    p["answer"] = "X is {{ X }}."
    return p


def test_code_in_compute_is_refused_or_contained_and_never_runs(faulty_stack):
    p = faulty_stack()
    exprs = [*REFUSED_BY_THE_CHECKER, *CONTAINED_AT_RUN_TIME, *ALSO_REFUSED]
    ids = {e: p.submit("compute?", compute_plan(e)).id for e in exprs}
    records = wait_all(p.store, list(ids.values()), 30)
    assert_one_outcome(p.store, records)
    for expr, why in REFUSED_BY_THE_CHECKER.items():
        r = records[ids[expr]]
        assert r.status == "failed" and r.error.startswith("plan is invalid") and r.steps == []
        assert [(pr.step, pr.code) for pr in r.problems] == [("E3", "bad_expression")]
        assert why in r.problems[0].message
    for expr in ALSO_REFUSED:
        r = records[ids[expr]]
        assert r.status == "failed" and r.steps == [], (expr, r.status, r.steps)
        assert [pr.code for pr in r.problems] == ["bad_expression"], (expr, r.problems)
    for expr, code in CONTAINED_AT_RUN_TIME.items():
        r = records[ids[expr]]
        assert r.status == "done" and r.steps[-1].error_code == code
        assert f"step E3 (COMPUTE) failed with {code}" in r.answer.text


def test_templates_reaching_for_python_internals_are_stopped_by_the_sandbox(faulty_stack):
    p = faulty_stack()
    ids = {}
    for template in TEMPLATES:
        hostile = plan()
        hostile["answer"] = template
        ids[template] = p.submit("template?", hostile).id
    records = wait_all(p.store, list(ids.values()), 30)
    assert_one_outcome(p.store, records)
    for template, why in TEMPLATES.items():
        r = records[ids[template]]
        assert r.status == "done" and all(s.status == "ok" for s in r.steps)
        assert f"the plan's answer template failed: {why}" in r.answer.text
        assert "<class" not in r.answer.text and "__builtins__" not in r.answer.text


def test_templates_that_would_burn_the_finalizer_are_cut_short_and_the_answer_says_so(
        faulty_stack):
    p = faulty_stack(render_budget_s=1)
    ids = {}
    for template in BURNERS:
        hostile = plan()
        hostile["answer"] = "Yield {{ Y }}. " + template
        ids[template] = p.submit("burn?", hostile).id
    records = wait_all(p.store, list(ids.values()), 60)
    assert_one_outcome(p.store, records)
    for template, why in BURNERS.items():
        r = records[ids[template]]
        assert r.status == "done", (template, r.error)
        assert "the plan's answer template failed:" in r.answer.text and why in r.answer.text
        assert "Battery yield rate" in r.answer.text  # the domain template shows the value
    other = p.ask("after the burners", plan())  # the finalizer is free again
    assert other.answer.text.startswith("Battery yield was 9")


UNBOUNDED = {  # template -> what the answer says (budget 2 s, 128 MB in the test)
    # loops that never touch range(), so only killing their process ends them
    "{% for a in 'x'*100000 %}{% for b in 'x'*100000 %}{% endfor %}{% endfor %}":
        "the template ran past its 2s render budget (CHORDAL_RENDER_BUDGET_S); its render "
        "process was stopped",
    "{% set ns = namespace(x=10**1000) %}{% for i in range(16) %}{% set ns.x = ns.x * ns.x %}"
    "{% endfor %}{{ ns.x|string|length }}": "ran past its 2s render budget",
    # about 1 GB each
    "{{ (('a'*10000)|replace('a', 'a'*100000))|length }}": "needed more than its 128 MB",
    "{{ 'x'|center(10**9)|length }}": "needed more than its 128 MB (CHORDAL_RENDER_MEMORY_MB)",
    "{{ '%0999999999d'|format(1)|length }}": "needed more than its 128 MB",
    "{% set ns = namespace(s='a'*100000) %}{% for i in range(14) %}{% set ns.s = ns.s ~ ns.s %}"
    "{% endfor %}{{ ns.s|length }}": "needed more than its 128 MB",
}


def test_hostile_templates_in_a_batch_do_not_delay_the_normal_queries_behind_them(faulty_stack):
    """Two of each unbounded template, then normal queries: the finalizer's two threads
    are free again within the budget, so the normal queries meet their deadlines."""
    p = faulty_stack(render_budget_s=2, render_memory_mb=128)
    hostile = {}
    for template in [*UNBOUNDED, *UNBOUNDED]:
        bad = plan()
        bad["answer"] = "Yield {{ Y }}. " + template
        hostile[p.submit("burn?", bad).id] = template
    normal = [p.submit(f"normal {i}", plan(), deadline_s=45).id for i in range(3)]
    records = wait_all(p.store, [*hostile, *normal], 90)
    assert_one_outcome(p.store, records)
    for qid in normal:
        r = records[qid]
        assert r.status == "done", r.error
        assert r.answer.text.startswith("Battery yield was 9")
    for qid, template in hostile.items():
        r = records[qid]
        assert r.status == "done", (template, r.error)
        assert f"the plan's answer template failed: " in r.answer.text
        assert UNBOUNDED[template] in r.answer.text, (template, r.answer.text)
        assert "Battery yield rate" in r.answer.text  # the domain template shows the value


def test_a_catastrophic_regex_times_out_as_a_step_error_and_the_worker_goes_on(faulty_stack):
    p = faulty_stack(documents=[HOSTILE])
    hostile = plan(HOSTILE_TITLE)
    hostile["steps"][0].pop("temporal_scope")
    hostile["steps"][1]["pattern"] = r"(a|aa)+$"
    hostile["steps"][1].pop("fallback")
    bad = p.submit("regex?", hostile)
    fine = p.submit("yield?", plan())
    records = wait_all(p.store, [bad.id, fine.id], 30)
    assert_one_outcome(p.store, records)
    r = records[bad.id]
    assert r.status == "done" and r.steps[0].status == "ok"
    assert r.steps[1].error_code == "PATTERN_TIMEOUT", r.steps[1]
    assert records[fine.id].answer.text.startswith("Battery yield was 9")
