"""docs/configuration.md is what shared/config_reference.py makes of `Settings`: every
setting by its variable, with its default and meaning, and no password in it."""

from pydantic import SecretStr

from shared import config_reference
from shared.config import Settings


def test_the_configuration_page_is_current():
    assert config_reference.PAGE.read_text() == config_reference.markdown(), (
        "docs/configuration.md differs from shared/config.py's Settings: run "
        f"`{config_reference.COMMAND}` and commit the page")


def test_every_setting_has_a_row_with_its_variable_and_a_meaning():
    page = config_reference.markdown()
    for name, field in Settings.model_fields.items():
        variable = config_reference.env_name(name, field)
        [row] = [line for line in page.splitlines() if line.startswith(f"| `{variable}` |")]
        assert row.split(" | ")[-1].strip(" |"), f"{variable} has no description: give it a docstring"
    assert "| `OPENAI_API_KEY` | secret | unset |" in page
    assert "| `CHORDAL_VISIBILITY_TIMEOUT_S` | int (≥ 60) | `3600` |" in page


def test_a_default_never_shows_a_password_or_a_secret():
    assert config_reference.default_text("redis://:hunter2@redis-host:6379/0") == \
        "`redis://:***@redis-host:6379/0`"
    assert "hunter2" not in config_reference.default_text("https://u:hunter2@es:9200")
    assert config_reference.default_text(SecretStr("hunter2")) == "`***`"
    assert config_reference.default_text(None) == "unset"
