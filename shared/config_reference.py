"""The configuration reference, made from `Settings`: consumes its fields (type,
constraints, default, attribute docstring) and produces docs/configuration.md, one row a
setting, so the page says what the code reads. `python -m shared.config_reference`
rewrites the page; tests/shared/test_config_reference.py fails while it is stale.

Defaults are shown as a user would write them; a URL's password never appears (`***`),
and neither does a secret's value.
"""

from __future__ import annotations

import re
import sys
import types
import typing
from pathlib import Path

import annotated_types
from pydantic import SecretStr
from pydantic.fields import FieldInfo

from shared.config import Settings
from shared.access.urls import mask_url

PAGE = Path(__file__).resolve().parent.parent / "docs" / "configuration.md"
COMMAND = "python -m shared.config_reference"

INTRO = f"""\
# Configuration

Every setting is an environment variable, or a line in `.env` in the working directory;
the environment wins over `.env`, and `.env` over the default. `chordal config` prints
every effective setting and where it came from. Passwords in URLs and secrets are never
printed: every message, log line and `chordal config` shows `***`.

<!-- Made from shared/config.py (Settings) by `{COMMAND}`: edit the docstrings there. -->
"""

BOUNDS = ((annotated_types.Ge, "ge", "≥"), (annotated_types.Gt, "gt", ">"),
          (annotated_types.Le, "le", "≤"), (annotated_types.Lt, "lt", "<"))


def env_name(name: str, field: FieldInfo) -> str:
    """The variable a field is read from."""
    alias = field.validation_alias
    return alias if isinstance(alias, str) else f"CHORDAL_{name.upper()}"


def type_name(annotation) -> str:
    """A field's type in a user's words: `int`, `path`, `a` \\| `b`, optional dropped."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return type_name(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return " or ".join(type_name(a) for a in typing.get_args(annotation) if a is not type(None))
    if origin is typing.Literal:
        return " \\| ".join(f"`{a}`" for a in typing.get_args(annotation))
    if origin is list:
        return f"list of {type_name(typing.get_args(annotation)[0])}s"
    names = {bool: "bool", int: "int", float: "float", str: "string", Path: "path",
             SecretStr: "secret"}
    return names.get(annotation, getattr(annotation, "__name__", str(annotation)))


def bounds(field: FieldInfo) -> str:
    """The field's numeric and length limits: `≥ 60, ≤ 100000`."""
    found = []
    for item in field.metadata:
        for kind, attribute, sign in BOUNDS:
            if isinstance(item, kind):
                found.append(f"{sign} {getattr(item, attribute)}")
        if isinstance(item, annotated_types.MinLen) and item.min_length:
            found.append("not empty" if item.min_length == 1
                         else f"at least {item.min_length} characters")
    return ", ".join(found)


def default_text(value) -> str:
    """A default as a user would set it; unset for None, a secret or a URL's password
    masked."""
    if value is None or value == []:
        return "unset"
    if isinstance(value, SecretStr):
        return "`***`"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = str(value)
    if "://" in text:
        text = mask_url(text)
    return f"`{text}`"


def cell(text: str) -> str:
    """Text fit for one table cell: one line, pipes escaped, a setting named by its
    field (`visibility_timeout_s`) named by its variable."""
    text = re.sub(r"`([a-z_]+)`", lambda m: f"`{env_name(m[1], Settings.model_fields[m[1]])}`"
                  if m[1] in Settings.model_fields else m[0], text)
    return " ".join(text.split()).replace("|", "\\|")


def rows() -> list[tuple[str, str, str, str]]:
    """(variable, type, default, meaning) of every setting, in the order Settings lists them."""
    out = []
    for name, field in Settings.model_fields.items():
        kind = type_name(field.annotation)
        limit = bounds(field)
        out.append((f"`{env_name(name, field)}`", kind + (f" ({limit})" if limit else ""),
                    default_text(field.get_default(call_default_factory=True)),
                    cell(field.description or "")))
    return out


def markdown() -> str:
    """docs/configuration.md as it should read."""
    lines = [INTRO, "| variable | type | default | meaning |", "|---|---|---|---|"]
    lines += [f"| {' | '.join(row)} |" for row in rows()]
    return "\n".join(lines) + "\n"


def main() -> int:
    PAGE.write_text(markdown())
    print(f"wrote {PAGE} ({len(Settings.model_fields)} settings)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
