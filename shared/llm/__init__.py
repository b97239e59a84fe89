"""Planning with and without a model: the OpenAI-compatible client (client.py) and its
cluster-wide concurrency cap (limit.py), the planner prompts (prompts.py) with the strict
reply schema derived from the Plan models (schema.py), the LLM planner (planner.py), the
heuristic planner used without an LLM (heuristic.py), and the scripted replay server
behind `chordal fake-llm` (replay.py, replay_script.py)."""
