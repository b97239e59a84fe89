"""Fixtures for the planners' tests: the LLM planner talks to the replay server through
the client settings of tests/shared/llm/conftest.py."""

from ..llm.conftest import fake_llm, llm_settings  # noqa: F401 - the fixtures, reused
