"""A plan's template renders in a child process bounded in time and memory
(shared/render/isolated.py): real child processes, no Redis."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from shared.render.cited import cite
from shared.render.isolated import Job, Renderer, RenderFailed

BURN_CPU = {  # run far past any budget without touching range() or `*` limits
    "string loops": "{% for a in 'x'*100000 %}{% for b in 'x'*100000 %}{% endfor %}{% endfor %}",
    "squaring": "{% set ns = namespace(x=10**1000) %}{% for i in range(16) %}"
                "{% set ns.x = ns.x * ns.x %}{% endfor %}{{ ns.x|string|length }}",
}
GIGABYTES = {  # each builds about 1 GB
    "replace": "{{ (('a'*10000)|replace('a', 'a'*100000))|length }}",
    "center": "{{ 'x'|center(10**9)|length }}",
    "format": "{{ '%0999999999d'|format(1)|length }}",
    "doubling": "{% set ns = namespace(s='a'*100000) %}{% for i in range(14) %}"
                "{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s|length }}",
}


@pytest.fixture
def renderer():
    r = Renderer(memory_mb=128)
    yield r
    r.close()


def pids(r: Renderer) -> set[int]:
    return {c.process.pid for c in r.idle}


def test_values_keep_their_footnotes_across_the_process_boundary(renderer):
    values = {"X": cite("91.7", (1,)), "L": cite(["4 units", "5"], (2,), [(2,), (3,)])}
    assert (renderer.render("{{ X + 1 }} and {{ L|join(', ') }}", values)
            == "92.7[1] and 4[2] units, 5[3]")


@pytest.mark.parametrize("template", BURN_CPU.values(), ids=BURN_CPU.keys())
def test_a_template_that_burns_cpu_is_killed_at_the_budget_and_the_next_render_works(renderer, template):
    renderer.render("warm", {})
    (first,) = pids(renderer)
    with pytest.raises(RenderFailed, match=r"ran past its 1s render budget "
                                           r"\(CHORDAL_RENDER_BUDGET_S\)"):
        renderer.render(template, {}, budget_s=1)
    with pytest.raises(ProcessLookupError):
        os.kill(first, 0)  # killed and reaped
    assert renderer.render("{{ 6 * 7 }}", {}) == "42"
    assert first not in pids(renderer)


@pytest.mark.parametrize("template", GIGABYTES.values(), ids=GIGABYTES.keys())
def test_a_template_that_allocates_gigabytes_fails_on_its_memory_limit(renderer, template):
    with pytest.raises(RenderFailed, match=r"needed more than its 128 MB "
                                           r"\(CHORDAL_RENDER_MEMORY_MB\)"):
        renderer.render(template, {}, budget_s=20)
    assert renderer.idle == []  # a process that ran out of memory is not used again
    assert renderer.render("{{ 'ok' }}", {}) == "ok"


def test_user_errors_are_template_failures_and_the_process_is_kept(renderer):
    with pytest.raises(RenderFailed, match="ZeroDivisionError: division by zero"):
        renderer.render("{{ 1 / 0 }}", {})
    with pytest.raises(RenderFailed, match="'Y' is undefined"):
        renderer.render("{{ Y }}", {})
    with pytest.raises(RenderFailed, match="access to attribute '__class__'"):
        renderer.render("{{ ''.__class__ }}", {})
    assert len(renderer.idle) == 1


def test_an_answer_past_the_size_limit_is_refused(renderer):
    with pytest.raises(RenderFailed, match=r"the answer is 2,000,000 characters; at most 1,000,000"):
        renderer.render("{{ 'x'|center(2000000) }}", {})


def test_a_child_outlives_no_dead_worker(renderer):
    """The parent gone (its socket closed mid-render), the child ends by itself soon
    after the budget instead of burning a core for good."""
    renderer.render("warm", {})
    child = renderer.idle.pop()
    child.send(Job(BURN_CPU["string loops"], {}, False, 0.5))
    child.conn.close()
    child.process.wait(10)  # TimeoutExpired if it burned on
    assert child.process.returncode == -signal.SIGALRM


def test_two_renders_at_once_use_two_processes(renderer):
    out = []
    threads = [threading.Thread(target=lambda: out.append(renderer.render("{{ 1 }}", {})))
               for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert out == ["1", "1"] and 1 <= len(renderer.idle) <= 2
    renderer.close()
    assert renderer.idle == []
