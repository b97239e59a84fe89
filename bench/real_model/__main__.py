"""`python -m bench.real_model`: plan quality and prompt size with a real model.

Against `--llm-base-url URL --llm-model NAME` (any OpenAI-compatible endpoint), or, with
neither, the bundled local model started here (shared/stack/local_llm.py) and stopped by
its PID. Starts its own embedded Redis and workers (bench/harness.py) under
bench/results/real-model-home; writes bench/results/real_model.md and .json and prints
the tables.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import time
from pathlib import Path

import redis

from shared.config import Settings
from shared.evaluation import load_cases
from shared.llm.client import LLMClient
from shared.planners.prompts import PROMPT_VARIANTS, plan_messages
from shared.ingest import load_jsonl
from shared.search import open_backend
from shared.stack.embedded import Stack
from shared.stack.local_llm import LocalLLM

from bench.figures import CORPUS, bench_documents
from bench.harness import Phase, ReplayLLM
from bench.real_model import planning, table
from bench.run import free_port

HERE = Path(__file__).resolve().parent
RESULTS = HERE.parent / "results"


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.real_model")
    parser.add_argument("--llm-base-url", help="an OpenAI-compatible endpoint (…/v1)")
    parser.add_argument("--llm-model", help="the model name it serves")
    parser.add_argument("--limit", type=int, help="only the first N cases")
    parser.add_argument("--cases", type=Path, default=HERE / "cases.jsonl")
    parser.add_argument("--forms", default="auto,json_object",
                        help="structured-output forms to compare (auto: negotiated, the "
                        "strict schema where the server takes one; json_object: no schema)")
    parser.add_argument("--variants", default=",".join(PROMPT_VARIANTS),
                        help="prompt variants, run with the first form only")
    parser.add_argument("--react", type=int, default=3,
                        help="cases also answered by a real ReAct loop (0: none)")
    parser.add_argument("--attempts", type=int, default=3)
    parser.add_argument("--ctx", type=int, default=3072,
                        help="the local model's context: it bounds a reply, and SmolLM2 "
                        "under the grammar often writes until the context is full")
    args = parser.parse_args()
    if bool(args.llm_base_url) != bool(args.llm_model):
        parser.error("give both --llm-base-url and --llm-model, or neither (local model)")
    cases = load_cases(args.cases)[: args.limit]
    forms, variants = args.forms.split(","), args.variants.split(",")
    home = RESULTS / "real-model-home"
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    base = Settings(_env_file=None, home=home, redis_port=free_port(), redis_url=None,
                    search_db=home / "search.db", get_cache_s=0, query_timeout_s=900,
                    llm_base_url=args.llm_base_url, llm_model=args.llm_model,
                    llm_timeout_s=300, llm_max_retries=1, local_llm_port=free_port(),
                    local_llm_ctx=args.ctx)
    backend = open_backend(base)
    backend.add(load_jsonl(CORPUS))
    backend.add(bench_documents())
    started = time.monotonic()
    with contextlib.ExitStack() as stack:
        if not args.llm_base_url:
            model = stack.enter_context(LocalLLM(base).start())
            log(model.describe())
            base = model.client_settings(base)
        stack.enter_context(Stack(base, roles=()))
        r = redis.Redis.from_url(base.effective_redis_url)
        counter = planning.TokenCounter(base.llm_base_url, base.llm_model)
        groups: dict[tuple[str, str], list[dict]] = {}
        runs = [(forms[0], v) for v in variants] + [(f, variants[0]) for f in forms[1:]]
        for form, variant in runs:
            client = LLMClient(base.model_copy(update={"llm_json_form": form}), r)
            log(f"planning {len(cases)} cases: form {form}, prompt {variant}")
            rows = [planning.plan_case(c, client, backend, variant, args.attempts,
                                       base.max_steps) for c in cases]
            label = next((row["form"] for row in rows if row["form"]), form)
            groups[(f"{form} ({label})" if form == "auto" else form, variant)] = rows
        with Phase(base) as phase:
            log("running the plans on the workers")
            for rows in groups.values():
                planning.execute(phase, cases, rows)
            log(f"ReAct on {args.react} cases")
            react = planning.react_tokens(phase, cases[: args.react],
                                          groups[next(iter(groups))])
        log("counting prompt tokens")
        prompt_tokens = {v: counter.prompt(plan_messages("", [], base.max_steps, v)[:1])
                         for v in PROMPT_VARIANTS}
        replay = ReplayLLM(home / "replay", free_port(), 0.0).start()
        try:
            with Phase(base.model_copy(update={"llm_base_url": f"{replay.base_url}/v1",
                                               "llm_model": "replay",
                                               "llm_max_retries": 0})) as phase:
                ratios = planning.fanout_tokens(phase, replay, counter,
                                                list(PROMPT_VARIANTS), base.max_steps)
        finally:
            replay.stop()
    backend.close()
    lines = [f"## Plan quality with a real model ({base.llm_model} at {base.llm_base_url})",
             "", f"{len(cases)} cases from {args.cases.name} "
             f"({sum(c.abstain for c in cases)} must abstain); up to {args.attempts} "
             "attempts with the checks' feedback; answers judged by shared/evaluation.py "
             "after real workers ran the plan (a case whose planning failed answered "
             "nothing: right only if it must abstain).", "",
             *table.quality_table(groups, args.attempts), "",
             "## Prompt size (tokens by the server's tokenizer)", "",
             "ReWOO at k=4: the fan-out question's planner request with this system prompt "
             "plus the replayed 4-GET plan; ReAct: the 4 actions and finish as the workers "
             "sent them (bench/figures.py).", "",
             *table.prompt_table(prompt_tokens, ratios), "",
             "## ReWOO vs a real ReAct loop (same model, same questions)", "",
             *table.react_table(react)]
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "real_model.md").write_text("\n".join(lines) + "\n")
    (RESULTS / "real_model.json").write_text(json.dumps(
        {"groups": {f"{k[0]} | {k[1]}": v for k, v in groups.items()},
         "prompt_tokens": prompt_tokens, "ratios": ratios, "react": react}, indent=1))
    print("\n".join(lines))
    log(f"done in {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
