"""The question benchmark's data: each case is reported and compared by its id, so an id
names one case; each filing indexes with its metadata."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from bench.questions import FILINGS, TATQA


@pytest.mark.parametrize("path", [FILINGS / "cases.jsonl", FILINGS / "cases-held-out.jsonl",
                                  TATQA["build"] / "cases.jsonl",
                                  TATQA["held-out"] / "cases.jsonl"],
                         ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_case_id_names_one_case(path):
    ids = Counter(json.loads(line)["id"] for line in path.read_text().splitlines() if line)
    assert not [i for i, n in ids.items() if n > 1]


def test_every_filing_has_its_sidecar_and_no_case_set_shares_an_id():
    assert all(pdf.with_name(pdf.name + ".json").exists() for pdf in FILINGS.glob("*.pdf"))
    ids = [set(json.loads(line)["id"] for line in (FILINGS / name).read_text().splitlines()
               if line) for name in ("cases.jsonl", "cases-held-out.jsonl")]
    assert not ids[0] & ids[1]
