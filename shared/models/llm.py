"""What the run store keeps of LLM calls and ReAct iterations."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict


class LLMCall(BaseModel):
    """One request to the model endpoint (after its retries), for audit and token counts."""

    model_config = ConfigDict(extra="forbid")

    purpose: str
    """`plan` (ReWOO planner, attempt n) or `react` (iteration n)."""
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_ms: float = 0.0
    retries: int = 0
    """Extra HTTP attempts the call needed (429, 5xx, timeouts)."""
    json_form: str | None = None
    """The structured-output form the request used (shared/llm/forms.py: `json_schema`,
    `json_object_schema`, …, `none` when the prompt alone asked for JSON); None when
    it asked for no JSON (and in records written before forms were negotiated)."""
    finish_reason: str | None = None
    """Why the reply ended, as the server said: `stop` (done, or a stop sequence came),
    `length` (cut at CHORDAL_LLM_MAX_TOKENS, by the server or by the client: see
    `cut_by_client`); None for a failed call."""
    cut_by_client: str | None = None
    """Why the client cut a streamed reply short, when the server went past `max_tokens`
    (more pieces of text than that, or more bytes than that many tokens can take); the
    reply is then the text until the cut and `finish_reason` is `length`. None when the
    server ended the reply."""
    status: Literal["ok", "error"] = "ok"
    error: str | None = None
    started_at: float = 0.0
    streamed: bool = False
    """The reply came as a stream (`LLMClient.chat_stream` on an endpoint that streams)."""
    first_token_ms: float | None = None
    """Milliseconds from the request to the first piece of text of a streamed reply;
    None for a whole reply or a stream that sent no text."""
    ended_at: float | None = None
    """Unix time the last token (a stream) or the whole reply arrived; None for a failed
    call (and in records written before it was kept)."""
    tokens_estimated: bool = False
    """The server sent no token counts with its stream (llama-cpp-python does not), and
    asking it for the prompt's count failed: `prompt_tokens` is the messages' characters
    / 4, a lower bound (the chat template the server adds is not counted). Without usage,
    `completion_tokens` is the number of pieces of text the stream sent, one token each
    on llama.cpp-based servers; the prompt is counted by the server with a one-token
    whole reply (shared/llm/client.py)."""


class ReactIteration(BaseModel):
    """One Thought → Action → Observation turn of a ReAct loop."""

    model_config = ConfigDict(extra="forbid")

    n: int
    """1-based iteration number."""
    thought: str = ""
    tool: str | None = None
    """The tool the Action named; None when the Action did not parse."""
    tool_input: Any = None
    observation: str = ""
    """Cleaned observation (`[ERROR] …`, `[NO_DATA]` or text cut to length)."""
    feedback: str | None = None
    """What the loop told the model besides the observation (no valid Action, repeated
    observation, …)."""
    action_id: str | None = None
    """`{query_id}:R{n}` when the tool ran; its StepResult is stored under it."""
    duration_ms: float = 0.0
    finished_at: float = 0.0
