"""Observations: consumes what a ReAct tool returned (a StepResult, or any value) and
produces the short clean text the model sees next.

- a failed tool becomes `[ERROR] <code>: <message>`, never data; a tool that found
  nothing (NOT_FOUND, NO_MATCH), an empty value and `null` become `[NO_DATA]`;
- HTML loses its tags, scripts and styles; a leading block of HTTP headers is dropped;
- JSON (a dict, a list of dicts, or text holding one) is reduced to its key fields:
  `title: …; date: …; value: …`, ids, links and metadata left out, empty fields skipped;
- documents are introduced by their title and date, so the model knows what it read;
- everything is cut to `limit` characters (settings.react_observation_chars).
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

from shared.models import Evidence, StepResult

NO_DATA = "[NO_DATA]"
ERROR = "[ERROR]"
NOT_FOUND_CODES = frozenset({"NOT_FOUND", "NO_MATCH", "NO_DATA", "EMPTY"})
"""Error codes that mean "nothing there" rather than "the tool broke"."""
EMPTY_TEXTS = frozenset({"", "null", "none", "nil", "n/a", "[]", "{}", '""', "undefined"})
KEY_FIELDS = ("title", "name", "answer", "result", "value", "text", "content", "snippet",
              "summary", "description", "date", "amount", "price", "total", "count", "status")
"""Fields shown first when a JSON object is reduced, in this order."""
NOISE = frozenset({"id", "_id", "uuid", "guid", "url", "uri", "href", "link", "links",
                   "_links", "self", "metadata", "meta", "_meta", "headers", "etag", "icon",
                   "image", "thumbnail", "html", "raw", "created_at", "updated_at", "cursor",
                   "next", "previous", "request_id", "trace_id"})
"""Fields dropped when a JSON object is reduced: they help no reasoning step."""
MAX_ITEMS = 10

_STATUS_LINE = re.compile(r"^HTTP/\d(?:\.\d)?\s+\d{3}\b")
_HEADER = re.compile(r"^[A-Za-z][A-Za-z0-9-]*:\s*\S")
_KNOWN_HEADERS = re.compile(r"^(content-type|content-length|date|server|set-cookie|cache-control"
                            r"|connection|etag|last-modified|x-[a-z-]+|vary|expires)\s*:", re.I)
_HIDDEN = re.compile(r"<(script|style|head|noscript)\b.*?</\1\s*>|<!--.*?-->", re.S | re.I)
_TAG = re.compile(r"</?[A-Za-z][^<>]*>|<![^<>]*>")
_BLOCK_TAG = re.compile(r"</?(p|div|br|li|tr|h[1-6]|section|article|table|ul|ol)\b[^<>]*>", re.I)


def error_observation(code: str, message: str, limit: int = 500) -> str:
    """What the model sees for a failed tool: `[NO_DATA]` when nothing was found."""
    if code in NOT_FOUND_CODES:
        reason = (message or "").split(";")[0].strip()
        return cut(f"{NO_DATA} {reason}".strip(), limit)
    return cut(f"{ERROR} {code}: {' '.join((message or '').split())}".strip(), limit)


def observe(result: StepResult, limit: int = 500) -> str:
    """The observation of one stored tool result."""
    if result.status != "ok":
        return error_observation(result.error_code or "TOOL_FAILED", result.error_message or "",
                                 limit)
    docs = list(result.documents) or ([result.document] if result.document else [])
    value = result.value
    if isinstance(value, list) and value and len(docs) == len(value) and \
            all(isinstance(v, str) for v in value):
        lines = [f"{i}. {_label(d)}{clean_text(v)}" for i, (v, d) in
                 enumerate(zip(value[:MAX_ITEMS], docs), 1)]
        return cut("\n".join(lines), limit) if lines else NO_DATA
    text = render_value(value)
    if text == NO_DATA:
        return NO_DATA
    if result.operation == "GET" and result.document is not None:
        text = _label(result.document) + text
    return cut(text, limit)


def _label(doc: Evidence | None) -> str:
    if doc is None:
        return ""
    period = f", period {doc.period}" if doc.period else ""
    return f"[{doc.title}{period}{', published ' + doc.date if doc.date else ''}] "


def render_value(value: Any) -> str:
    """Any tool value as clean text; `[NO_DATA]` when it holds nothing."""
    if value is None or value == [] or value == {}:
        return NO_DATA
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        text = reduce_json(value)
    else:
        raw = strip_headers(str(value)).strip()
        parsed = _json_in(raw)
        text = reduce_json(parsed) if parsed is not None else clean_text(raw)
    return NO_DATA if text.strip().lower() in EMPTY_TEXTS else text


def _json_in(text: str) -> Any:
    if not text or text[0] not in "[{":
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, (dict, list)) else None


def clean_text(text: str) -> str:
    """`text` without HTTP headers, HTML tags and entities, with whitespace collapsed."""
    text = strip_headers(text)
    if _TAG.search(text):
        text = _HIDDEN.sub(" ", text)
        text = _BLOCK_TAG.sub("\n", text)
        text = _TAG.sub(" ", text)
        text = html.unescape(text)
    lines = (" ".join(line.split()) for line in text.splitlines())
    return "\n".join(line for line in lines if line)


def strip_headers(text: str) -> str:
    """`text` without a leading HTTP status line and header block."""
    lines = text.lstrip().splitlines()
    if not lines:
        return text
    status = bool(_STATUS_LINE.match(lines[0]))
    i = 1 if status else 0
    known = 0
    while i < len(lines) and _HEADER.match(lines[i]):
        known += bool(_KNOWN_HEADERS.match(lines[i]))
        i += 1
    if status or (known >= 1 and i >= 2 and (i == len(lines) or not lines[i].strip())):
        return "\n".join(lines[i:]).strip()
    return text


def reduce_json(value: Any) -> str:
    """A JSON value as `key: value; …`: key fields first, noise and empties dropped."""
    if isinstance(value, list):
        items = [reduce_json(v) for v in value[:MAX_ITEMS]]
        items = [i for i in items if i and i != NO_DATA]
        if not items:
            return NO_DATA
        if all(not isinstance(v, (dict, list)) for v in value):
            return ", ".join(items)
        return "\n".join(f"{n}. {item}" for n, item in enumerate(items, 1))
    if isinstance(value, dict):
        pairs = _flat(value, "")
        if not pairs:
            return NO_DATA
        rank = {k: i for i, k in enumerate(KEY_FIELDS)}
        pairs.sort(key=lambda kv: rank.get(kv[0].rsplit(".", 1)[-1].lower(), len(rank)))
        return "; ".join(f"{k}: {v}" for k, v in pairs)
    if value is None:
        return NO_DATA
    return clean_text(str(value)) if isinstance(value, str) else json.dumps(value)


def _flat(obj: dict, prefix: str) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    for key, v in obj.items():
        if str(key).lower() in NOISE or v is None or v == "" or v == [] or v == {}:
            continue
        path = f"{prefix}{key}"
        if isinstance(v, dict):
            pairs += _flat(v, path + ".")
        elif isinstance(v, list):
            shown = reduce_json(v)
            if shown != NO_DATA:
                pairs.append((path, shown.replace("\n", " ")))
        else:
            pairs.append((path, render_value(v)))
    return pairs


def cut(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters, at a word boundary, marked with …"""
    if len(text) <= limit:
        return text
    head = text[: max(1, limit - 2)]
    if " " in head[limit // 2:]:
        head = head.rsplit(" ", 1)[0]
    return head.rstrip() + " …"
