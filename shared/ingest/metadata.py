"""A document file's metadata: consumes the options given on the command line (for one
file) and the sidecar JSON next to a file, produces the fields of its Document (title,
date, period, url, source_type, id), options winning over the sidecar.

The sidecar of `report.pdf` is `report.pdf.json`: the whole file name plus `.json`, so
`report.pdf` and `report.html` side by side each have their own, and a sidecar sorts
next to its file. It holds one JSON object, e.g.
    {"title": "Acme 2023 Form 10-K", "date": "2024-02-20", "period": "FY2023"}

A file's title is never read from its pages: a PDF's own title field holds what wrote
it ("Microsoft Word - q1 final.doc", "Layout 1" on the filings measured) and its first
lines are a cover page or a running header with a page number. Without a given title
a PDF is refused, saying where to give one; an HTML page falls back on its <title>.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from shared.errors import InputError

FIELDS = ("title", "date", "period", "url", "source_type", "id")
"""The fields options and sidecars may give a document read from a file."""
SIDECAR = ".json"
"""Added to a file's whole name to name its sidecar."""


def sidecar_of(path: Path) -> Path:
    return path.with_name(path.name + SIDECAR)


def given_metadata(path: Path, options: dict[str, str | None]) -> dict[str, Any]:
    """The fields given for the file at `path`: its sidecar's, then `options` (those not
    None) over them; InputError naming the sidecar and the field when it is unusable."""
    fields: dict[str, Any] = {}
    sidecar = sidecar_of(path)
    if sidecar.is_file():
        try:
            found = json.loads(sidecar.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as e:
            raise InputError(f"{sidecar}: cannot be read as UTF-8 text ({e})") from None
        except ValueError as e:
            raise InputError(f"{sidecar}: not valid JSON ({e}); write one object like "
                             '{"title": "…", "date": "YYYY-MM-DD"}') from None
        if not isinstance(found, dict):
            raise InputError(f"{sidecar}: expected one JSON object with the document's "
                             f"fields ({', '.join(FIELDS)}), got {type(found).__name__}")
        unknown = sorted(set(found) - set(FIELDS))
        if unknown:
            raise InputError(f"{sidecar}: field {unknown[0]!r} is not allowed; use only "
                             f"{', '.join(FIELDS)}")
        fields.update({k: v for k, v in found.items() if v is not None})
    fields.update({k: v for k, v in options.items() if v is not None})
    return fields


def missing_title(path: Path) -> InputError:
    """The error for a file that has no title to be found by."""
    return InputError(
        f"{path}: no title for this document; give one with --title \"…\" (when indexing "
        f"this one file) or in {sidecar_of(path).name} next to it, e.g. "
        '{"title": "Acme 2023 Form 10-K", "date": "2024-02-20"}. GET finds a document by '
        "its title, and a title is not read from a file's pages")
