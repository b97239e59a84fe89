"""The pages in a real browser: headless Chromium from Debian's `chromium` and
`chromium-driver` packages, driven by Selenium with the system binaries (nothing is
downloaded), against `chordal api` on a running stack. Skipped, saying why, where
/usr/bin/chromium or /usr/bin/chromedriver is missing (`.ci/run` installs both).

The stack is this module's own (Redis, planner, executor, finalizer and react workers,
built like the `pipeline` fixture): its workers import page_tools.py, whose gated GET
holds a query in `executing` until the test lets it go, and its corpus holds a hostile
document. Each page's screenshot is saved under the test's tmp_path, for review; with
CHORDAL_UPDATE_SCREENSHOTS=1 it is also copied to docs/screenshots/, the ones docs/http.md shows.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from pathlib import Path

import pytest

from shared.config import Settings
from shared.search import open_backend
from shared.ingest import load_jsonl
from shared.search.document import Document
from shared.stack.embedded import Stack

from .conftest import TOKEN, ApiServer
from ..conftest import DATA, Pipeline, free_port

CHROMIUM, DRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
pytestmark = [pytest.mark.integration, pytest.mark.skipif(
    not (CHROMIUM.exists() and DRIVER.exists()),
    reason="no /usr/bin/chromium or /usr/bin/chromedriver: apt-get install chromium "
           "chromium-driver (.ci/run does) to run the browser tests")]
webdriver = pytest.importorskip("selenium.webdriver", reason="pip install -e '.[test]' (selenium)")
from selenium.common.exceptions import (NoAlertPresentException,  # noqa: E402
                                        StaleElementReferenceException)
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

HERE = Path(__file__).resolve().parent
SHOTS = HERE.parents[1] / "docs" / "screenshots"
FLOWER = "http://127.0.0.1:5555"
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--window-size=1360,1000")
PLANS = HERE.parents[1] / "shared" / "data" / "plans"
TESLA = json.loads((PLANS / "tesla_yield.json").read_text())
TWO_BRANCH = json.loads((PLANS / "two_branch.json").read_text())
PWN = "<script>window.pwned=true</script>"
HOSTILE_DOC = Document(
    title=f"Zorblax {PWN} Filing", date="2024-02-01", url="javascript:alert(document.cookie)",
    content=f"The zorblax quotient was 42.5 percent {PWN} <img src=x onerror=\"window.pwned=true\">.")
QUESTIONS = [q for q in (DATA / "questions.txt").read_text().splitlines() if q.strip()]


@pytest.fixture(scope="module")
def stack(tmp_path_factory) -> Pipeline:
    home = tmp_path_factory.mktemp("pages-home")
    settings = Settings(home=home, redis_port=free_port(), redis_url=None,
                        search_db=home / "search.db", tool_modules=["page_tools"])
    backend = open_backend(settings)
    backend.add(load_jsonl(DATA / "corpus.jsonl") + [HOSTILE_DOC])
    backend.close()
    env = {"PYTHONPATH": os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")]))}
    with Stack(settings, env=env) as running:
        p = Pipeline(settings.model_copy(update={"redis_url": running.redis_url}))
        p.stack = running
        p.api = ApiServer({**p.env(), "CHORDAL_FLOWER_URL": FLOWER}, home / "api.log").start()
        try:
            yield p
        finally:
            p.api.stop()


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (*FLAGS, f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(str(DRIVER)), options=options)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


def wait_for(driver, condition, timeout: float = 60, what: str = ""):
    """`condition(driver)` once truthy; a page part redrawn while it looked is looked at again."""
    return WebDriverWait(driver, timeout, poll_frequency=0.1,
                         ignored_exceptions=(StaleElementReferenceException,)).until(
        lambda d: condition(d), message=what)


def log_in(driver, stack: Pipeline, path: str = "/ui/batches") -> None:
    """Open `path`, through the login form when the browser has no session."""
    driver.get(stack.api.base_url + path)
    if "/ui/login" in driver.current_url:
        driver.find_element(By.NAME, "token").send_keys(TOKEN)
        driver.find_element(By.CSS_SELECTOR, "form[action='/ui/login'] button").click()
        wait_for(driver, lambda d: "/ui/login" not in d.current_url, what="login")
    assert driver.current_url.endswith(path)


def screenshot(driver, tmp_path: Path, name: str) -> Path:
    """The whole page as `tmp_path/name.png` (copied to docs/screenshots/ when
    CHORDAL_UPDATE_SCREENSHOTS=1: a test run leaves the checkout as it found it)."""
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(1360, min(max(height + 40, 700), 4000))
    path = tmp_path / f"{name}.png"
    driver.save_screenshot(str(path))
    driver.set_window_size(1360, 1000)
    if os.environ.get("CHORDAL_UPDATE_SCREENSHOTS") == "1":
        SHOTS.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, SHOTS / f"{name}.png")
    return path


def text(driver, css: str) -> str:
    return driver.find_element(By.CSS_SELECTOR, css).text


def submit(stack: Pipeline, body: dict) -> str:
    status, _, reply = stack.api.request("POST", "/queries", body)
    assert status == 202, reply
    return reply["queries"][0]["id"]


@pytest.fixture(scope="module")
def batch(stack, tmp_path_factory) -> str:
    """A finished batch: five answered questions, one ReAct query that fails (no LLM)
    and two queries failed at their deadline while a gated step held them."""
    folder = tmp_path_factory.mktemp("pages-batch")
    never = folder / "never-opened"
    gated = {**TESLA, "steps": [{**TESLA["steps"][0], "source": f"[gate {never} 4] Tesla Q3 "
                                 "2023 Financial Report"}, *TESLA["steps"][1:]]}
    lines = [{"question": q} for q in QUESTIONS]
    lines += [{"question": QUESTIONS[0], "mode": "react"}]
    lines += [{"question": f"{QUESTIONS[0]} (held {n})", "plan": gated, "deadline": 1}
              for n in (1, 2)]
    path = folder / "demo.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    sent = stack.cli("enqueue", str(path), "--batch", "pages-demo")
    assert sent.returncode == 0, sent.stderr
    waited = stack.cli("wait", "--batch", "pages-demo", "--timeout", "120")
    assert "0 unfinished of 8" in waited.stdout, waited.stdout + waited.stderr
    return "pages-demo"


def test_logging_in_with_the_token_opens_the_pages_and_logging_out_closes_them(
        stack, browser, tmp_path):
    browser.delete_all_cookies()
    browser.get(stack.api.base_url + "/ui/workers")
    assert "/ui/login?next=/ui/workers" in browser.current_url
    screenshot(browser, tmp_path, "login")
    browser.find_element(By.NAME, "token").send_keys(TOKEN + "-wrong")
    browser.find_element(By.CSS_SELECTOR, "form[action='/ui/login'] button").click()
    problem = wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".problem"),
                       what="the login page's answer to a wrong token")
    assert "Wrong token" in problem[0].text
    log_in(browser, stack, "/ui/workers")
    cookie = browser.get_cookie("chordal_session")
    assert cookie["httpOnly"] is True and cookie["sameSite"] == "Strict"
    browser.find_element(By.CSS_SELECTOR, "form.logout button").click()
    wait_for(browser, lambda d: d.current_url.endswith("/ui/login"), what="logout")
    browser.get(stack.api.base_url + "/ui/batches")
    assert "/ui/login" in browser.current_url


def test_a_link_from_another_site_opens_the_page_of_a_logged_in_browser(stack, browser):
    log_in(browser, stack, "/ui/workers")
    target = stack.api.base_url + "/ui/workers"
    browser.get(f"data:text/html,<a id=away href='{target}'>Chordal</a>")
    browser.find_element(By.ID, "away").click()
    wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "table.queues"),
             what="the workers page, without the login form")
    assert browser.current_url == target


def test_the_batch_page_shows_the_numbers_chordal_status_prints(stack, batch, browser, tmp_path):
    shown = stack.cli("status", "--batch", batch, "--json")
    assert shown.returncode == 0, shown.stderr
    status = json.loads(shown.stdout)
    log_in(browser, stack, f"/ui/batches/{batch}")
    for field in ("total", "unfinished"):
        assert text(browser, f"[data-field={field}]") == str(status[field])
    for field in ("answers_per_s", "p50_s", "p95_s"):
        element = browser.find_element(By.CSS_SELECTOR, f"[data-field={field}]")
        assert float(element.get_attribute("data-value")) == status[field]
        assert element.text.split()[0] == f"{status[field]:.2f}"
    for state, count in status["counts"].items():
        assert text(browser, f"[data-count={state}]") == str(count)
    assert (status["counts"]["done"], status["counts"]["failed"]) == (5, 3)
    groups = {row.find_elements(By.TAG_NAME, "td")[1].text: row
              for row in browser.find_elements(By.CSS_SELECTOR, "table.failures tr")[1:]}
    assert set(groups) == {"a ReAct loop needs an LLM", "deadline exceeded while executing"}
    screenshot(browser, tmp_path, "batches")
    groups["deadline exceeded while executing"].find_element(By.TAG_NAME, "a").click()
    links = wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "table.failed a"))
    assert len(links) == 2
    screenshot(browser, tmp_path, "failed")
    links[0].click()
    assert wait_for(browser, lambda d: text(d, "#status")) == "failed"
    assert "deadline exceeded while executing" in text(browser, ".failed-reason")


def test_the_workers_page_shows_what_chordal_status_prints(stack, batch, browser, tmp_path):
    stack.cli("wait", "--batch", batch)
    log_in(browser, stack, "/ui/workers")
    for _ in range(20):  # tasks held change as the last ones are acknowledged: compare
        printed = stack.cli("status", "--batch", batch).stdout  # one settled moment
        line = re.search(r"workers alive, by queue consumed: (.*); (\d+) tasks held", printed)
        browser.refresh()
        if text(browser, "[data-field=held]") == line[2]:
            break
        time.sleep(0.5)
    alive = dict(item.rsplit(" ", 1) for item in line[1].split(", "))
    for queue, count in alive.items():
        assert text(browser, f"tr[data-queue={queue}] [data-field=live]") == count
    assert text(browser, "[data-field=held]") == line[2]
    assert text(browser, "[data-field=silent]") == "0"
    nodes = [td.text for td in browser.find_elements(By.CSS_SELECTOR, "table.instances td:first-child")]
    assert {n.split("-")[0] for n in nodes} == {"planner", "executor", "finalizer", "react"}
    screenshot(browser, tmp_path, "workers")


def test_a_query_page_follows_its_run_from_executing_to_done_without_a_reload(
        stack, browser, tmp_path):
    gate = tmp_path / "open"
    steps = [dict(s) for s in TWO_BRANCH["steps"]]
    steps[0]["source"] = f"[gate {gate} 60] {steps[0]['source']}"
    query_id = submit(stack, {"question": "How much more revenue did Tesla report than "
                                          "Northwind Motors in Q3 2023?",
                              "plan": {**TWO_BRANCH, "steps": steps}})
    log_in(browser, stack, f"/ui/queries/{query_id}")
    wait_for(browser, lambda d: text(d, "#status") == "executing", what="executing")
    nodes = browser.find_elements(By.CSS_SELECTOR, "svg.graph g.node")
    assert [n.get_attribute("data-step") for n in nodes] == ["E1", "E2", "E3", "E4", "E5"]
    wait_for(browser, lambda d: d.find_element(
        By.CSS_SELECTOR, "g.node[data-step=E1]").get_attribute("data-status") == "sent")
    browser.execute_script("window.chordalSamePage = 'yes'")
    screenshot(browser, tmp_path, "query-running")
    gate.touch()
    wait_for(browser, lambda d: text(d, "#status") == "done", what="done without a reload")
    wait_for(browser, lambda d: d.find_element(By.ID, "query").get_attribute("data-settled") == "yes")
    assert browser.execute_script("return window.chordalSamePage") == "yes"
    assert len(browser.find_elements(By.CSS_SELECTOR, "svg.timeline g.row[data-step]")) == 5
    statuses = {n.get_attribute("data-step"): n.get_attribute("data-status")
                for n in browser.find_elements(By.CSS_SELECTOR, "svg.graph g.node")}
    assert statuses == dict.fromkeys(["E1", "E2", "E3", "E4", "E5"], "ok")
    rows = browser.find_elements(By.CSS_SELECTOR, "table.steps tr[data-step]")
    workers = [r.find_elements(By.TAG_NAME, "td")[5].text for r in rows]
    assert len(rows) == 5 and all(w.startswith("executor-") for w in workers), workers
    flower = [a.get_attribute("href") for a in browser.find_elements(By.CSS_SELECTOR, "a.flower")]
    assert len(flower) == 5 and all(h.startswith(f"{FLOWER}/task/") for h in flower)
    assert "Northwind Motors" in text(browser, ".answer")
    screenshot(browser, tmp_path, "query")


def test_a_footnote_opens_its_document_and_the_sentence_with_the_value_marked(
        stack, browser, tmp_path):
    query_id = submit(stack, {"question": "What was Tesla's battery yield rate in Q3 2023?",
                              "plan": TESLA})
    record = stack.store.wait(query_id, 60)
    assert record.status == "done", record.error
    evidence = record.answer.footnotes[0].evidence
    log_in(browser, stack, f"/ui/queries/{query_id}")
    note = browser.find_element(By.ID, "fn-1")
    assert note.get_attribute("open") is None
    browser.find_element(By.CSS_SELECTOR, "a.fn-ref[href='#fn-1']").click()
    wait_for(browser, lambda d: note.get_attribute("open") is not None, what="footnote opens")
    assert note.find_element(By.CSS_SELECTOR, ".fn-title").text == evidence.title
    assert note.find_element(By.CSS_SELECTOR, ".fn-period").text == evidence.period
    assert note.find_element(By.CSS_SELECTOR, ".fn-date").text == evidence.date
    assert note.find_element(By.CSS_SELECTOR, ".fn-url a").get_attribute("href") == evidence.url
    marked = note.find_element(By.CSS_SELECTOR, "blockquote.quote mark")
    assert marked.text == record.steps[1].value == "91.7" and marked.is_displayed()
    assert "battery yield rate" in note.find_element(By.CSS_SELECTOR, "blockquote.quote").text.lower()
    screenshot(browser, tmp_path, "footnote")


def test_a_hostile_document_and_question_run_no_script_in_the_browser(stack, browser):
    plan = {"steps": [
        {"id": "E1", "operation": "GET", "source": HOSTILE_DOC.title, "output_var": "$D"},
        {"id": "E2", "operation": "EXTRACT", "source": "$D",
         "pattern": r"zorblax quotient was (\d+\.\d+) percent", "output_var": "$Q"}],
        "answer": f"The quotient {PWN} was {{{{ Q }}}} <img src=x onerror=window.pwned=true>."}
    question = f"What was the zorblax quotient? {PWN} <a href=\"javascript:window.pwned=true\">x</a>"
    query_id = submit(stack, {"question": question, "plan": plan})
    record = stack.store.wait(query_id, 60)
    assert record.status == "done" and record.answer.footnotes, record
    log_in(browser, stack, f"/ui/queries/{query_id}")
    browser.find_element(By.CSS_SELECTOR, "a.fn-ref").click()
    assert PWN in text(browser, "h1.question") and PWN in text(browser, ".answer")
    assert "javascript:alert(document.cookie)" in text(browser, ".fn-url")
    assert browser.execute_script("return window.pwned") is None
    assert browser.execute_script(
        "return document.querySelectorAll('[href^=\"javascript:\" i], img, iframe').length") == 0
    with pytest.raises(NoAlertPresentException):
        browser.switch_to.alert.text
