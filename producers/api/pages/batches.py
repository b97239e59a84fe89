"""The Batches page's data: consumes the batch store and the batch counters; produces,
per batch, the `BatchStatus` that `chordal status --json` prints (the same counters, so
the numbers agree) and its failed queries grouped by reason and error code (counted as
they fail, shared/stores/batch_counts.py). The queries of one group are found by reading the
batch's records (`failed_in_group`, the drill-down page only).

A failure's reason is its error up to the first colon, numbers written `N` ("deadline
exceeded while executing", "ReAct iteration N"); its code is the codes of the plan
problems it names (`undefined_variable, bad_pattern`), else the first step error code or
exception name in the error (`REDELIVERY_CAP`, `ValueError`), else `-`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from producers.batch.follow import BatchStatus, status_of, tally_batch
from shared.stores.batch_counts import read_counts, reason_and_code
from shared.stores.batches import BatchStore

SHOWN_IDS = 500
"""Queries a failure group's page lists (it says how many more there are)."""


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


def _rows(batches: BatchStore, ids: list[str]) -> list[tuple[str, str, str, str]]:
    """(id, reason, code, error) of each failed query."""
    rows = batches.fields(ids, ("error", "problems"))
    return [(qid, *reason_and_code(error, problems), error or "")
            for qid, (error, problems) in zip(ids, rows)]


def batch_view(batches: BatchStore, name: str) -> BatchView:
    """The batch's status and its failure groups, largest first, from its counters."""
    counts = read_counts(batches.r, name)
    groups = [FailureGroup(reason, code, n, example)
              for (reason, code), (n, example) in counts.failures.items() if n]
    ordered = sorted(groups, key=lambda g: (-g.count, g.reason, g.code))
    return BatchView(status_of(batches, name, counts), ordered)


def failed_in_group(batches: BatchStore, name: str, reason: str,
                    code: str) -> tuple[list[tuple[str, str]], int]:
    """(id, error) of the first `SHOWN_IDS` failed queries of the group, and how many
    the group holds."""
    tally = tally_batch(batches, name)
    members = [(qid, error) for qid, r, c, error in _rows(batches, tally.failed)
               if (r, c) == (reason, code)]
    return members[:SHOWN_IDS], len(members)
