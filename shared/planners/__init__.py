"""Planners: a question in, a checked `Plan` out. The LLM planner (llm.py) asks a model
with the prompts of prompts.py; the heuristic planner (heuristic.py), used without a
model, reads the question (question.py, metric.py), ranks and cites its documents
(sources.py), and reads a value from a sentence (reading.py, anchor.py) or a cell from a
table (rows.py, table_plan.py)."""
