"""Every effective setting with its variable and where it came from, secrets masked.

Consumes a `Settings`, the process environment and the `.env` file it was read with;
produces one `SettingLine` per field (variable name, JSON-safe value, source: `env`,
`.env` or `default`, and the effective value when an unset one means something: the
embedded Redis, the search store, the local model's file and threads) for
`chordal config`. Masked: every `SecretStr` (`**********`), and the password of any
URL (`redis://:pass@host` -> `redis://:***@host`, `?password=pass` -> `?password=***`;
shared/access/urls.py), so the output can be pasted anywhere.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dotenv import dotenv_values
from pydantic import BaseModel, SecretStr

from shared.config import Settings
from shared.stack.local_llm import BUNDLED_FILE, server_threads
from shared.access.urls import mask_url

SECRET = "**********"


class SettingLine(BaseModel):
    variable: str
    value: Any
    source: str
    """`env`, `.env` or `default`."""
    effective: Any = None
    """What an unset value amounts to (the embedded Redis URL, the default search store)."""


def env_name(name: str, settings_cls: type[Settings] = Settings) -> str:
    """The variable that sets field `name` (`CHORDAL_HOME`, or an alias like `OPENAI_API_KEY`)."""
    alias = settings_cls.model_fields[name].validation_alias
    prefix = settings_cls.model_config.get("env_prefix", "")
    return alias if isinstance(alias, str) else f"{prefix}{name}".upper()


def shown(value: Any) -> Any:
    """A setting's value as JSON-safe data with every secret masked."""
    if isinstance(value, SecretStr):
        return SECRET
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, str):
        return mask_url(value)
    if isinstance(value, (list, tuple)):
        return [shown(v) for v in value]
    return value


def report(settings: Settings, environ: Mapping[str, str] | None = None,
           env_file: str | Path | None = None) -> list[SettingLine]:
    """One line per setting, in the order `Settings` declares them."""
    environ = {k.upper(): v for k, v in (os.environ if environ is None else environ).items()}
    env_file = env_file or settings.model_config.get("env_file") or ".env"
    dotenv = {k.upper() for k in dotenv_values(env_file)} if Path(env_file).is_file() else set()
    auth = settings.redis_auth
    effective = {"redis_url": f"embedded: {settings.embedded_redis_url}",
                 "redis_auth_dir": str(auth.path) if auth else None,
                 "search_db": str(settings.search_path),
                 "local_llm_gguf": f"bundled: {BUNDLED_FILE} (chordal[local-llm])",
                 "local_llm_threads": server_threads(settings)}
    lines = []
    for name in type(settings).model_fields:
        var = env_name(name, type(settings))
        value = getattr(settings, name)
        source = "env" if var in environ else ".env" if var in dotenv else "default"
        lines.append(SettingLine(variable=var, value=shown(value), source=source,
                                 effective=effective.get(name) if value is None else None))
    return lines
