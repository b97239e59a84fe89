"""The real-model section of the benchmark: plan quality and prompt size measured with a
real model behind any OpenAI-compatible endpoint (without one, the bundled local model).

`python -m bench.real_model` (`make bench-llm`) runs it; `make bench` does not. Modules:
`cases.jsonl` (questions on shared/data/corpus.jsonl with the values they must find, a
few that must abstain; shared/evaluation.py's format), `planning.py` (plan every case
with the real planner, record each reply; execute the plans on real workers; count
tokens with the server's tokenizer), `table.py` (pure: the shares and the markdown).
"""
