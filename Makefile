# Chordal: `make run` answers the bundled questions on the embedded stack; `make test`
# runs the whole suite against a real Redis and real Celery workers.
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
export CHORDAL_HOME ?= $(CURDIR)/.chordal

.PHONY: install run test bench bench-llm clean

$(BIN)/python:
	$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Chordal needs Python 3.11+"'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $@

install: $(VENV)/.installed

run: install
	$(BIN)/chordal demo

test: install
	$(BIN)/python -m pytest -q

$(VENV)/.bench-installed: pyproject.toml | $(VENV)/.installed
	$(BIN)/python -m pip install --quiet -e ".[test,bench]"
	touch $@

# Latency, overhead, throughput, scaling and token figures: bench/results/results.md + PNGs.
bench: $(VENV)/.bench-installed
	$(BIN)/python -m bench

# Plan quality and prompt size with a real model (the bundled local one unless
# LLM_ARGS="--llm-base-url URL --llm-model NAME"): bench/results/real_model.md. Slow.
bench-llm: $(VENV)/.bench-installed
	$(BIN)/python -m bench.real_model $(LLM_ARGS)

clean:
	rm -rf $(VENV) .chordal .pytest_cache
