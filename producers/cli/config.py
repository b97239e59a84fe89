"""`chordal config`: print every effective setting, secrets masked.

Consumes the environment and `.env` in the working directory (through `Settings`);
produces a table (variable, value, source) or, with `--json`, one object
`{VARIABLE: {"value", "source", "effective"}}`. A setting that does not parse is
reported by its variable, without echoing its value (it may be a secret).
"""

from __future__ import annotations

import json

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from producers.cli.settings_report import env_name, report
from shared.config import Settings
from shared.errors import ConfigError


def config(as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table.")):
    """Print every effective setting (environment, then .env, then defaults), secrets masked."""
    try:
        settings = Settings()
    except ValidationError as e:
        bad = "; ".join(f"{_variable(err['loc'])}: {err['msg']}" for err in e.errors())
        raise ConfigError(f"invalid settings: {bad}; fix the variable (environment or "
                          ".env) and run `chordal config` again") from None
    lines = report(settings)
    if as_json:
        print(json.dumps({ln.variable: ln.model_dump(exclude={"variable"}) for ln in lines},
                         indent=2))
        return
    table = Table("variable", "value", "source", box=None, pad_edge=False)
    for ln in lines:
        value = "unset" if ln.value is None else (
            ln.value if isinstance(ln.value, str) else json.dumps(ln.value))
        if ln.effective is not None:
            value += f" ({ln.effective})"
        table.add_row(ln.variable, escape(value), ln.source)
    Console(soft_wrap=True).print(table)


def _variable(loc: tuple) -> str:
    """The variable behind an error location: a field name, or already an alias."""
    name = str(loc[0]) if loc else "settings"
    return env_name(name) if name in Settings.model_fields else name.upper()
