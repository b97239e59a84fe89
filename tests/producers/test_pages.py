"""The pages over HTTP: the API app (producers/api/app.py) in this process, on a real Redis
with no workers, its records written the way the workers write them. Login, sessions,
CSRF, the security headers, and the escaping of everything a question, a plan, a model
or a document can put on a page."""

from __future__ import annotations

import re
import time
from html.parser import HTMLParser

import pytest
from fastapi.testclient import TestClient

from producers.api.app import create_app
from shared.broker.admission import Refusal, count_refusal
from shared.stores.batches import BatchStore
from shared.config import Settings
from shared.models import (Answer, Evidence, Footnote, LLMCall, Plan, PlanProblem, Query,
                           ReactIteration, StepResult)

TOKEN = "page-token-7d1e-2b9c-4a6f-81e3-c5d0f7a9"
SCRIPT = "<script>window.pwned=1</script>"
PAYLOADS = [SCRIPT, '"><img src=x onerror=alert(1)>', "javascript:alert(1)",
            "<svg onload=alert(1)>", "</textarea><a href=\"javascript:alert(1)\">x</a>"]
HOSTILE = " ".join(PAYLOADS)


@pytest.fixture
def app(redis_server, bare_store):
    settings = Settings(redis_url=redis_server.url, api_token=TOKEN,
                        flower_url="http://127.0.0.1:5555")
    return create_app(settings, sweep_s=None)


def client(app, base_url: str = "http://127.0.0.1") -> TestClient:
    return TestClient(app, base_url=base_url, follow_redirects=False)


def log_in(c: TestClient, token: str = TOKEN, next_path: str = "/ui/batches"):
    form = c.get("/ui/login", params={"next": next_path})
    csrf = re.search(r'name="csrf" value="([^"]+)"', form.text).group(1)
    return c.post("/ui/login", data={"csrf": csrf, "token": token, "next": next_path})


def csrf_of(page: str) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', page).group(1)


class Tags(HTMLParser):
    """Every start tag of a page with its attributes, and the text inside <script>."""

    def __init__(self, html: str):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.script_text, self._in_script = "", False
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag == "script"

    def handle_endtag(self, tag):
        self._in_script = False

    def handle_data(self, data):
        if self._in_script:
            self.script_text += data


def assert_nothing_runs(html: str) -> None:
    page = Tags(html)
    scripts = [a for t, a in page.tags if t == "script"]
    assert all((a.get("src") or "").startswith("/ui/static/") for a in scripts), scripts
    assert not page.script_text.strip()
    for tag, attrs in page.tags:
        assert not [k for k in attrs if k.startswith("on")], (tag, attrs)
        assert "style" not in attrs, (tag, attrs)
        for k in ("href", "src", "action", "formaction", "xlink:href"):
            value = (attrs.get(k) or "").strip().lower()
            assert not value.startswith(("javascript:", "data:", "vbscript:")), (tag, attrs)
    assert SCRIPT not in html and "<img src=x" not in html and "<svg onload" not in html


def hostile_query(store) -> str:
    """A run of a hostile question over a hostile document, stored as the workers store it."""
    plan = Plan.model_validate({"domain": "finance", "steps": [
        {"id": "E1", "operation": "GET", "source": f"{SCRIPT} Report", "output_var": "$R"},
        {"id": "E2", "operation": "EXTRACT", "source": "$R", "pattern": r"rate (\d+)",
         "output_var": "$Y"},
        {"id": "E3", "operation": "GET", "source": "missing", "output_var": "$M"}],
        "answer": f"{SCRIPT} {{{{ Y }}}}"})
    store.create(Query(id="hostile", question=HOSTILE, plan=plan))
    store.save_plan("hostile", plan)
    doc = Evidence(doc_id="d<script>", title=HOSTILE, url="javascript:alert(1)", date=SCRIPT,
                   period=SCRIPT, match="title_match")
    now = time.time()
    store.put_step("hostile", StepResult(
        action_id="hostile:E1", step_id="E1", operation="GET", status="ok", value=HOSTILE,
        document=doc, note=HOSTILE, worker=SCRIPT, started_at=now, finished_at=now))
    store.put_step("hostile", StepResult(
        action_id="hostile:E2", step_id="E2", operation="EXTRACT", status="ok", value="42",
        document=doc, quote=f"{SCRIPT} rate 42 javascript:alert(1)", started_at=now,
        finished_at=now, task_id="<script>t</script>"))
    store.put_step("hostile", StepResult(
        action_id="hostile:E3", step_id="E3", operation="GET", status="error",
        error_code="NOT_FOUND", error_message=HOSTILE, started_at=now, finished_at=now))
    store.add_llm_call("hostile", LLMCall(purpose=SCRIPT, model=HOSTILE, error=HOSTILE,
                                          status="error", started_at=now))
    store.put_iteration("hostile", ReactIteration(n=1, thought=HOSTILE, tool=SCRIPT,
                                                  tool_input=HOSTILE, observation=HOSTILE,
                                                  feedback=HOSTILE, finished_at=now))
    store.finish("hostile", Answer(
        text=f"{HOSTILE} 42[1]", missing=[HOSTILE], complete=False,
        footnotes=[Footnote(number=1, evidence=doc, variables=["Y"])]))
    return "hostile"


def test_a_page_without_a_session_sends_the_browser_to_the_login_form_and_back(app):
    c = client(app)
    away = c.get("/ui/queries/q-1?x=1")
    assert away.status_code == 303
    assert away.headers["location"] == "/ui/login?next=/ui/queries/q-1%3Fx%3D1"
    back = log_in(c, next_path="/ui/workers")
    assert back.status_code == 303 and back.headers["location"] == "/ui/workers"
    assert c.get("/ui/workers").status_code == 200


def test_a_link_from_another_site_reloads_the_page_once_to_send_the_strict_cookie(app):
    page = client(app).get("/ui/queries/q-1", headers={"Sec-Fetch-Site": "cross-site"})
    assert page.status_code == 200 and '<meta http-equiv="refresh" content="0">' in page.text
    again = client(app).get("/ui/queries/q-1", headers={"Sec-Fetch-Site": "same-origin"})
    assert again.status_code == 303 and again.headers["location"].startswith("/ui/login")


def test_the_session_cookie_is_httponly_strict_and_secure_except_over_http_to_loopback(app):
    local = log_in(client(app)).headers["set-cookie"]
    assert "chordal_session=" in local and "HttpOnly" in local
    assert "SameSite=strict" in local and "Secure" not in local.split("chordal_login")[0]
    remote = log_in(client(app, "https://chordal.example")).headers["set-cookie"]
    assert "Secure" in remote.split("chordal_login")[0]


def test_a_login_over_plain_http_to_another_host_is_refused_saying_to_use_https(app):
    page = log_in(client(app, "http://chordal.example"))
    assert page.status_code == 400 and "Log in over https" in page.text
    assert "chordal_session" not in page.headers.get("set-cookie", "")


def test_a_wrong_token_gets_the_form_again_with_401_and_no_session(app):
    c = client(app)
    page = log_in(c, token=TOKEN + "x")
    assert page.status_code == 401 and "Wrong token" in page.text
    assert "chordal_session" not in page.headers.get("set-cookie", "")
    assert c.get("/ui/batches").status_code == 303


def test_a_login_without_the_forms_own_csrf_value_is_refused(app):
    c = client(app)
    c.get("/ui/login")
    page = c.post("/ui/login", data={"csrf": "forged", "token": TOKEN})
    assert page.status_code == 400 and "log in again" in page.text
    assert c.get("/ui/batches").status_code == 303


def test_a_login_never_sends_the_browser_to_another_site(app):
    for target in ("//evil.example/", "https://evil.example/", "/\\evil.example", "/queries/x"):
        assert log_in(client(app), next_path=target).headers["location"] == "/ui/batches"


def test_logout_needs_the_sessions_csrf_token_then_ends_the_session(app):
    c = client(app)
    log_in(c)
    page = c.get("/ui/batches")
    assert c.post("/ui/logout", data={"csrf": "forged"}).status_code == 403
    assert c.get("/ui/batches").status_code == 200
    out = c.post("/ui/logout", data={"csrf": csrf_of(page.text)})
    assert out.status_code == 303 and out.headers["location"] == "/ui/login"
    assert c.get("/ui/batches").status_code == 303


def test_a_session_reads_the_json_routes_and_events_but_a_post_needs_its_csrf_header(app, bare_store):
    bare_store.create(Query(id="q-json", question="q"))
    bare_store.fail("q-json", "stopped")
    c = client(app)
    log_in(c)
    assert c.get("/queries/q-json").json()["status"] == "failed"
    events = c.get("/queries/q-json/events")
    assert events.status_code == 200 and "event: end" in events.text
    refused = c.post("/queries", json={"question": "q"})
    assert refused.status_code == 403 and "X-CSRF-Token" in refused.json()["detail"]
    csrf = csrf_of(c.get("/ui/batches").text)
    accepted = c.post("/queries", json={"id": "q-posted", "question": "q"},
                      headers={"X-CSRF-Token": csrf})
    assert accepted.status_code == 202, accepted.text


def test_a_session_made_before_the_token_changed_is_not_accepted(redis_server, bare_store):
    old = create_app(Settings(redis_url=redis_server.url, api_token=TOKEN), sweep_s=None)
    c = client(old)
    log_in(c)
    cookie = c.cookies.get("chordal_session")
    new = client(create_app(Settings(redis_url=redis_server.url, api_token=TOKEN[::-1]),
                            sweep_s=None))
    new.cookies.set("chordal_session", cookie)
    assert new.get("/ui/batches").status_code == 303
    assert new.get("/queries/x").status_code == 401


def test_the_bearer_token_opens_the_pages_too(app):
    c = client(app)
    assert c.get("/ui/workers", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
    assert c.get("/ui/workers", headers={"Authorization": "Bearer nope"}).status_code == 401


def test_the_workers_page_lists_the_messages_workers_refused_with_why(app, bare_store):
    assert "Messages refused" not in client(app).get(
        "/ui/workers", headers={"Authorization": f"Bearer {TOKEN}"}).text  # none yet
    for refused in (Refusal("chordal.extract", "a task of queue execute"),) * 2 + (
            Refusal("(malformed)", f"not a message {SCRIPT}"),):
        count_refusal(bare_store.r, "plan", refused)  # as workers/consumer.py counts
    html = client(app).get("/ui/workers", headers={"Authorization": f"Bearer {TOKEN}"}).text
    row = re.search(r'<tr data-refused="plan chordal.extract">(.*?)</tr>', html, re.S).group(1)
    assert "a task of queue execute" in row and '<td data-field="count">2</td>' in row
    assert_nothing_runs(html)


def test_every_page_carries_a_content_security_policy_without_inline_scripts(app, bare_store):
    hostile_query(bare_store)
    c = client(app)
    log_in(c)
    for path in ("/ui/login", "/ui/batches", "/ui/workers", "/ui/queries/hostile",
                 "/ui/queries/hostile/live", "/ui/queries/none", "/"):
        response = c.get(path)
        csp = response.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "unsafe-inline" not in csp, path
        assert "default-src 'none'" in csp and "frame-ancestors 'none'" in csp
        assert response.headers["x-content-type-options"] == "nosniff"


def test_a_hostile_question_document_and_model_output_are_shown_as_text(app, bare_store):
    qid = hostile_query(bare_store)
    c = client(app)
    log_in(c)
    html = c.get(f"/ui/queries/{qid}").text
    assert_nothing_runs(html)
    assert html.count("&lt;script&gt;window.pwned=1&lt;/script&gt;") >= 10
    assert "javascript:alert(1)</span> (not a web address: not linked)" in html
    assert "<mark>42</mark>" in html
    assert_nothing_runs(c.get(f"/ui/queries/{qid}/live").text)


def test_a_hostile_failure_reason_is_escaped_on_the_batch_and_failure_pages(app, bare_store):
    batches = BatchStore(bare_store.r, 3600)
    batches.create("b<x>", [(1, Query(id="f1", question=HOSTILE)),
                            (2, Query(id="f2", question="fine"))])
    bare_store.fail("f1", f"{SCRIPT}: NOT_FOUND {HOSTILE}",
                    problems=[PlanProblem(step="E1", code=SCRIPT, message=HOSTILE)])
    c = client(app)
    log_in(c)
    page = c.get("/ui/batches").text
    assert_nothing_runs(page)
    link = re.search(r'href="(/ui/batches/[^"]+/failed\?[^"]+)"', page).group(1)
    failed = c.get(link.replace("&amp;", "&"))
    assert failed.status_code == 200 and 'href="/ui/queries/f1"' in failed.text
    assert_nothing_runs(failed.text)


def test_llm_calls_and_react_iterations_are_listed_with_tokens_and_latency(app, bare_store):
    bare_store.create(Query(id="q-react", question="Northwind's revenue?", mode="react"))
    bare_store.add_llm_call("q-react", LLMCall(purpose="react 1", model="replay",
                                               prompt_tokens=412, completion_tokens=37,
                                               latency_ms=812.4, started_at=time.time()))
    bare_store.put_iteration("q-react", ReactIteration(
        n=1, thought="Fetch the report.", tool="get", tool_input="Northwind Q3 2023",
        observation="Northwind Motors reported total revenue of $9.84 billion", duration_ms=95,
        finished_at=time.time()))
    c = client(app)
    log_in(c)
    html = c.get("/ui/queries/q-react").text
    assert re.search(r"<td>react 1</td><td>replay</td><td>412</td><td>37</td>\s*<td>812 ms</td>", html)
    assert "<td>R1</td><td>Fetch the report.</td>" in html and "get(Northwind Q3 2023)" in html
    assert "A ReAct loop has no plan" in html


def test_without_a_token_the_pages_open_without_a_login(redis_server, bare_store):
    open_app = create_app(Settings(redis_url=redis_server.url, api_token=None),
                          insecure=True, sweep_s=None)
    c = client(open_app)
    page = c.get("/ui/batches")
    assert page.status_code == 200 and "no login (--insecure, loopback)" in page.text
    assert c.get("/ui/login").headers["location"] == "/ui/batches"


def test_the_query_box_in_the_header_opens_the_query_by_its_id(app):
    c = client(app)
    log_in(c)
    assert c.get("/ui/queries", params={"id": " q 1/x "}).headers["location"] == "/ui/queries/q%201%2Fx"


def test_an_unknown_query_or_batch_is_a_404_page_naming_it(app):
    c = client(app)
    log_in(c)
    for path, name in (("/ui/queries/nope-1", "nope-1"), ("/ui/batches/nope-2", "nope-2")):
        page = c.get(path)
        assert page.status_code == 404 and f"&#39;{name}&#39;" in page.text


def test_the_cancel_buttons_work_only_with_the_sessions_csrf_token(app, bare_store):
    BatchStore(bare_store.r, 3600).create("cx", [(1, Query(id="cx1", question="a")),
                                                 (2, Query(id="cx2", question="b"))])
    bare_store.finish("cx2", Answer(text="42"))
    bare_store.create(Query(id="cx-one", question="c"))
    assert client(app).post("/ui/batches/cx/cancel").status_code == 303  # to the login
    c = client(app)
    log_in(c)
    page = c.get("/ui/batches/cx").text
    assert 'action="/ui/batches/cx/cancel"' in page and "Cancel its 1 unfinished" in page
    for form in ({}, {"csrf": "forged"}):
        refused = c.post("/ui/batches/cx/cancel", data=form)
        assert refused.status_code == 403 and "CSRF" in refused.text
    assert bare_store.status("cx1") == "queued"
    done = c.post("/ui/batches/cx/cancel", data={"csrf": csrf_of(page)})
    assert done.status_code == 200 and "cancelled 1, already finished 1" in done.text
    assert (bare_store.status("cx1"), bare_store.status("cx2")) == ("cancelled", "done")
    assert "unfinished queries</button>" not in c.get("/ui/batches/cx").text

    query_page = c.get("/ui/queries/cx-one").text
    assert 'action="/ui/queries/cx-one/cancel"' in query_page
    assert c.post("/ui/queries/cx-one/cancel", data={"csrf": "forged"}).status_code == 403
    assert bare_store.status("cx-one") == "queued"
    back = c.post("/ui/queries/cx-one/cancel", data={"csrf": csrf_of(query_page)})
    assert back.status_code == 303 and back.headers["location"] == "/ui/queries/cx-one"
    after = c.get("/ui/queries/cx-one").text
    assert bare_store.status("cx-one") == "cancelled" and "Cancel this query" not in after
    assert "Why it was cancelled" in after
