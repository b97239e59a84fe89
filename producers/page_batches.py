"""The Batches page's data: consumes the batch store; produces, per batch, the
`BatchStatus` that `chordal status --json` prints (the same `tally_batch`, so the
numbers agree) and its failed queries grouped by reason and error code.

A failure's reason is its error up to the first colon, numbers written `N` ("deadline
exceeded while executing", "ReAct iteration N"); its code is the codes of the plan
problems it names (`undefined_variable, bad_pattern`), else the first step error code or
exception name in the error (`REDELIVERY_CAP`, `ValueError`), else `-`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from producers.batch_follow import BatchStatus, tally_batch
from shared.batch_store import BatchStore

REASON_CHARS = 120
SHOWN_IDS = 500
"""Queries a failure group's page lists (it says how many more there are)."""
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_CODE = re.compile(r"\b(?!CHORDAL_)(?:[A-Z][A-Z0-9]*_[A-Z0-9_]+|[A-Z]\w*(?:Error|Exception|Exceeded))\b")
"""A step error code (`REDELIVERY_CAP`) or an exception name; not a setting's name."""


@dataclass
class FailureGroup:
    reason: str
    code: str
    count: int = 0
    example: str = ""
    """One failed query's whole error."""


@dataclass
class BatchView:
    status: BatchStatus
    failures: list[FailureGroup] = field(default_factory=list)

    @property
    def finished(self) -> int:
        return self.status.finished


def reason_and_code(error: str | None, problems: str | None) -> tuple[str, str]:
    """The group a failed query belongs to (see the module docstring)."""
    error = error or "no reason recorded"
    head = _NUMBER.sub("N", error.split(": ", 1)[0].strip())
    if len(head) > REASON_CHARS:
        head = head[:REASON_CHARS - 1] + "…"
    try:
        codes = [p.get("code") for p in json.loads(problems or "[]") if isinstance(p, dict)]
    except ValueError:
        codes = []
    if any(codes):
        return head, ", ".join(dict.fromkeys(c for c in codes if c))
    found = _CODE.search(error)
    return head, found.group() if found else "-"


def _rows(batches: BatchStore, ids: list[str]) -> list[tuple[str, str, str, str]]:
    """(id, reason, code, error) of each failed query."""
    rows = batches.fields(ids, ("error", "problems"))
    return [(qid, *reason_and_code(error, problems), error or "")
            for qid, (error, problems) in zip(ids, rows)]


def batch_view(batches: BatchStore, name: str) -> BatchView:
    """The batch's status and its failure groups, largest first."""
    tally = tally_batch(batches, name)
    groups: dict[tuple[str, str], FailureGroup] = {}
    for _, reason, code, error in _rows(batches, tally.failed):
        group = groups.setdefault((reason, code), FailureGroup(reason, code, example=error))
        group.count += 1
    ordered = sorted(groups.values(), key=lambda g: (-g.count, g.reason, g.code))
    return BatchView(tally.result(), ordered)


def failed_in_group(batches: BatchStore, name: str, reason: str,
                    code: str) -> tuple[list[tuple[str, str]], int]:
    """(id, error) of the first `SHOWN_IDS` failed queries of the group, and how many
    the group holds."""
    tally = tally_batch(batches, name)
    members = [(qid, error) for qid, r, c, error in _rows(batches, tally.failed)
               if (r, c) == (reason, code)]
    return members[:SHOWN_IDS], len(members)
