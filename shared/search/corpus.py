"""Corpus files: consumes a JSONL file (one document object a line), produces a list of
validated Documents, or one InputError listing every bad line so nothing half-loads (a
file without a document is an error too: nothing would be indexed).

A line looks like:
    {"title": "...", "content": "...", "date": "2023-09-30", "url": "https://...",
     "source_type": "official_report", "id": "optional-stable-id"}
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from shared.errors import InputError, quoted

from .document import FIELDS, Document

MAX_REPORTED = 10
"""How many bad lines one error message lists before summarizing the rest."""


def load_jsonl(path: str | Path) -> list[Document]:
    """Every document in the JSONL file at `path`; InputError naming file, line and field
    of each bad line when any line is bad."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{path}: no such file; give the path of a JSONL corpus file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"{path}: cannot be read as UTF-8 text ({e})") from None
    docs: list[Document] = []
    problems: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            docs.append(_document(line))
        except ValueError as e:  # JSONDecodeError and ValidationError are ValueErrors
            problems.extend(f"{path.name} line {number}: {p}" for p in _describe(e))
    if problems:
        shown = problems[:MAX_REPORTED]
        if len(problems) > MAX_REPORTED:
            shown.append(f"… and {len(problems) - MAX_REPORTED} more problems")
        head = f"{path}: nothing loaded; fix these lines and retry"
        raise InputError("\n".join([head, *shown]))
    if not docs:
        raise InputError(f"{path}: no documents in the file; write one JSON object a line, "
                         'like {"title": "…", "content": "…"}')
    return docs


def _document(line: str) -> Document:
    try:
        record = json.loads(line)
    except RecursionError:
        raise ValueError("nested too deeply to read; write one flat JSON object a line") from None
    if not isinstance(record, dict):
        raise ValueError(f"expected a JSON object with 'title' and 'content', got {type(record).__name__}")
    return Document.model_validate(record)


def _describe(error: ValueError) -> list[str]:
    """One sentence per problem, naming the field and what to do."""
    if isinstance(error, json.JSONDecodeError):
        return [f"not valid JSON ({error.msg} at column {error.colno}); write one object per line"]
    if not isinstance(error, ValidationError):
        return [str(error)]
    sentences = []
    for e in error.errors():
        field = ".".join(str(part) for part in e["loc"])
        if not field:  # about the whole object: a key that is not UTF-8 is the one case
            sentences.append("a field name holds a lone surrogate, which UTF-8 cannot carry; "
                             "write field names and text as UTF-8" if e["type"] == "string_unicode"
                             else e["msg"].removeprefix("Value error, "))
        elif e["type"] == "missing":
            sentences.append(f"field '{field}' is required")
        elif e["type"] == "extra_forbidden":
            sentences.append(f"field {quoted(field)} is not allowed; use only {', '.join(FIELDS)}")
        elif e["type"] == "string_type":
            sentences.append(f"field '{field}' must be a string, got {quoted(e['input'])}")
        else:
            sentences.append(f"field '{field}': {e['msg'].removeprefix('Value error, ')}")
    return sentences
