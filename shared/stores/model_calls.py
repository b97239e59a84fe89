"""A query's model calls and ReAct iterations in the run store: consumes `LLMCall`s (each
adds its tokens to the query's usage) and `ReactIteration`s (first write of a number
wins); reads them back in order. `RunStore` inherits it.

    chordal:llm:{qid}      list  LLMCall JSON per model call (tokens summed in usage_*)
    chordal:react:{qid}    hash  n -> ReactIteration JSON (first write wins)
    chordal:run:{qid}      iterated: 1 once an iteration is stored
"""

from __future__ import annotations

from shared import naming
from shared.models import LLMCall, ReactIteration

ITERATED = "iterated"
"""Run-hash field, set as the query's first iteration is stored: its readers read the
iterations only when it (or the claim of iteration 1) is there."""


class ModelCalls:
    """The run store's model-call and iteration methods (`self.r`, `self.ttl_s`)."""

    def add_llm_call(self, query_id: str, call: LLMCall) -> None:
        """Append an LLM call and add its tokens to the query's usage."""
        key, run = naming.llm_calls_key(query_id), naming.run_key(query_id)
        with self.r.pipeline() as p:
            p.rpush(key, call.model_dump_json())
            p.expire(key, self.ttl_s)
            p.hincrby(run, "usage_prompt_tokens", call.prompt_tokens)
            p.hincrby(run, "usage_completion_tokens", call.completion_tokens)
            p.hincrby(run, "usage_calls", 1)
            p.execute()

    def llm_calls(self, query_id: str) -> list[LLMCall]:
        return [LLMCall.model_validate_json(c)
                for c in self.r.lrange(naming.llm_calls_key(query_id), 0, -1)]

    def put_iteration(self, query_id: str, it: ReactIteration) -> ReactIteration:
        """Store an iteration unless one with its number exists; return the stored one.
        The run hash says the query has iterations (`ITERATED`)."""
        key = naming.iterations_key(query_id)
        with self.r.pipeline() as p:
            p.hsetnx(key, str(it.n), it.model_dump_json())
            p.hget(key, str(it.n))
            p.expire(key, self.ttl_s)
            p.hsetnx(naming.run_key(query_id), ITERATED, 1)
            _, stored, *_ = p.execute()
        return ReactIteration.model_validate_json(stored)

    def iterations(self, query_id: str) -> list[ReactIteration]:
        raw = self.r.hgetall(naming.iterations_key(query_id))
        return sorted((ReactIteration.model_validate_json(v) for v in raw.values()),
                      key=lambda it: it.n)
