"""Plan quality with a real model: consumes the cases, an `LLMClient` on the endpoint, the
search store and a running bench `Phase`; produces one row per case (each reply parsed
or not, the attempt whose plan passed the checks, planning seconds, tokens as the
server counted them, the verdict once real workers ran the plan) and the token counts
of prompt variants and of ReWOO vs ReAct at k = 4, counted by the server's tokenizer.

The plan comes from the planner itself (`llm_plan`, the conversation and feedback the
planner worker uses) with every reply kept; the workers then run it as a given plan.
"""

from __future__ import annotations

import json
import urllib.request

from shared.errors import LLMError, PlanError
from shared.evaluation import Case, judge
from shared.llm.client import LLMClient, LLMReply
from shared.planners.llm import llm_plan, read_reply
from shared.planners.prompts import system_prompt
from shared.journey.planning import candidate_documents
from shared.search import SearchBackend

from bench.figures import get_plan, react_script
from bench.harness import Phase, ReplayLLM

FANOUT_K = 4


class RecordingClient:
    """An LLMClient that keeps every reply (the run store keeps only calls)."""

    def __init__(self, client: LLMClient):
        self.client = client
        self.max_tokens = client.max_tokens
        """The reply cap the planner names when a reply was cut there."""
        self.replies: list[LLMReply] = []
        self.failed: list = []

    def chat(self, messages: list[dict], *, purpose: str, json_schema: dict | None = None,
             stop: list[str] | None = None, deadline: float | None = None) -> LLMReply:
        try:
            reply = self.client.chat(messages, purpose=purpose, json_schema=json_schema,
                                     stop=stop, deadline=deadline)
        except LLMError as exc:
            self.failed.append(exc.call)
            raise
        self.replies.append(reply)
        return reply


def parses(content: str) -> bool:
    """Whether a planner reply is JSON (or plan text) the planner can read at all."""
    try:
        read_reply(content)
    except PlanError as exc:
        return not any(getattr(p, "code", None) == "bad_json" or
                       (isinstance(p, dict) and p.get("code") == "bad_json")
                       for p in exc.problems)
    return True


def plan_case(case: Case, client: LLMClient, backend: SearchBackend, variant: str,
              attempts: int, max_steps: int) -> dict:
    """Plan `case` with the real planner; the row of what happened."""
    recorder = RecordingClient(client)
    plan, error = None, None
    try:
        plan, _ = llm_plan(case.question, recorder, attempts=attempts, max_steps=max_steps,
                           documents=candidate_documents(case.question, backend),
                           prompt=variant)
    except (PlanError, LLMError) as exc:
        error = str(exc)[:300]
    calls = [r.call for r in recorder.replies] + [c for c in recorder.failed if c]
    return {"id": case.id, "variant": variant,
            "form": next((c.json_form for c in calls if c.json_form), None),
            "parsed": [parses(r.content) for r in recorder.replies],
            "valid_attempt": len(recorder.replies) if plan else None,
            "planning_s": sum(c.latency_ms for c in calls) / 1000 if calls else None,
            "tokens": sum(c.prompt_tokens + c.completion_tokens for c in calls),
            "plan": plan.model_dump(mode="json", exclude_none=True) if plan else None,
            "replies": [r.content[:400] for r in recorder.replies], "error": error}


def execute(phase: Phase, cases: list[Case], rows: list[dict]) -> None:
    """Run each row's plan on the workers and add its verdict (`outcome`, `detail`); a
    case the planner failed is judged without a record: it answered nothing."""
    by_id = {c.id: c for c in cases}
    sent = [(row, phase.submit(by_id[row["id"]].question, row["plan"]) if row["plan"]
             else None) for row in rows]
    for row, query in sent:
        record = phase.wait(query, 300) if query else None
        verdict = judge(by_id[row["id"]], record)
        row["outcome"], row["detail"] = verdict.outcome, verdict.detail[:300]


class TokenCounter:
    """Token counts by the endpoint's own tokenizer: the usage of a one-token reply."""

    def __init__(self, base_url: str, model: str):
        self.url, self.model = base_url.rstrip("/") + "/chat/completions", model

    def prompt(self, messages: list[dict]) -> int:
        body = json.dumps({"model": self.model, "messages": messages, "max_tokens": 1,
                           "temperature": 0}).encode()
        req = urllib.request.Request(self.url, data=body,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=300) as response:
            return json.loads(response.read())["usage"]["prompt_tokens"]

    def completion(self, messages: list[dict], content: str) -> int:
        """Tokens of `content` as the reply to `messages` (the chat template's few
        tokens around an assistant turn included)."""
        return (self.prompt([*messages, {"role": "assistant", "content": content}])
                - self.prompt(messages))


def fanout_tokens(phase: Phase, replay: ReplayLLM, counter: TokenCounter,
                  variants: list[str], max_steps: int) -> dict[str, dict]:
    """Per prompt variant: ReWOO and ReAct tokens for the bench's k = 4 fan-out question
    (bench/figures.py: the same replayed plan and actions), each request the workers
    sent recounted by the real tokenizer; ReWOO with its system prompt swapped."""
    question = f"Fetch the {FANOUT_K} reports and summarise them."
    plan_reply = json.dumps(get_plan(FANOUT_K))
    replay.load([{"match": None, "content": plan_reply}])
    phase.ask(question)
    rewoo_request = replay._request("GET", "/_log")[0]["messages"]
    script = react_script(FANOUT_K)
    replay.load(script)
    phase.ask(question, mode="react")
    react = 0
    for request, entry in zip(replay._request("GET", "/_log"), script):
        react += counter.prompt(request["messages"]) + counter.completion(
            request["messages"], entry["content"])
    out = {}
    for variant in variants:
        messages = [{"role": "system", "content": system_prompt(max_steps, variant)},
                    *rewoo_request[1:]]
        out[variant] = {"rewoo": counter.prompt(messages)
                        + counter.completion(messages, plan_reply), "react": react}
    return out


def react_tokens(phase: Phase, cases: list[Case], rows: list[dict]) -> list[dict]:
    """A real ReAct loop on each case next to the ReWOO planning tokens of `rows`."""
    by_id = {r["id"]: r for r in rows}
    out = []
    for case in cases:
        record = phase.ask(case.question, mode="react")
        out.append({"id": case.id, "rewoo_tokens": by_id[case.id]["tokens"],
                    "rewoo_calls": len(by_id[case.id]["parsed"]),
                    "react_tokens": record.usage.get("prompt_tokens", 0)
                    + record.usage.get("completion_tokens", 0),
                    "react_calls": len(record.llm_calls), "react_status": record.status})
    return out
