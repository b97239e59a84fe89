"""The cell sweep's questions and judgement, on a table of its own through a real store."""

from __future__ import annotations

import json
from decimal import Decimal

from bench.cell_sweep import answer, judge, questions
from shared.ingest import load_jsonl
from shared.search import SqliteSearch

ROWS = [["", "Years Ended December 31,", ""], ["", "2019", "2018"],
        ["Net revenue", "$ 50,000", "$ 45,000"], ["Cost of revenue", "20,000", "18,000"],
        ["Other", "1", "2"], ["Other", "3", "4"], ["Gross margin", "60%", ""]]


def corpus(tmp_path):
    path = tmp_path / "corpus.jsonl"
    path.write_text(json.dumps({"id": "d1", "title": "Kelovap annual report 2019",
                                "content": "Results.", "tables": [{"rows": ROWS}]}) + "\n")
    return path


def test_each_plain_cell_is_asked_for_and_rows_repeated_are_left_out(tmp_path):
    asked = list(questions(corpus(tmp_path), "cell"))
    assert [(a.question.split(", according")[0], a.truth) for a in asked] == [
        ("What was the net revenue in 2019", 50000), ("What was the net revenue in 2018", 45000),
        ("What was the cost of revenue in 2019", 20000),
        ("What was the cost of revenue in 2018", 18000), ("What was the gross margin in 2019", 60)]
    change = list(questions(corpus(tmp_path), "change"))
    assert [(a.question.split(" between")[0], a.truth) for a in change] == [
        ("What was the change in net revenue", 5000), ("What was the change in cost of revenue",
                                                        2000)]
    # the comparative, worded either way round, is the newer year less the older
    compare = {a.question.split(", according")[0]: a.truth
               for a in questions(corpus(tmp_path), "compare")}
    assert set(compare.values()) == {5000, 2000} and len(compare) == 2
    assert all(q in (f"How much higher was the {n} in 2019 than in 2018",
                     f"How much lower was the {n} in 2018 than in 2019")
               for q in compare for n in ("net revenue", "cost of revenue") if n in q)
    assert list(questions(corpus(tmp_path), "date")) == []  # its columns are years
    # the change asked of the newer year alone, of two years that follow each other
    grew = [(a.question.split(", according")[0], a.truth)
            for a in questions(corpus(tmp_path), "grew")]
    assert grew == [("How much did the net revenue grow in 2019", 5000),
                    ("How much did the cost of revenue grow in 2019", 2000)]


def test_a_total_is_asked_for_without_its_total_where_no_row_has_that_name(tmp_path):
    path = tmp_path / "corpus.jsonl"
    rows = [["", "2019", "2018"], ["Other assets(1)", "18,111", "9,521"],
            ["Total other assets", "140,964", "111,749"], ["Product", "5", "4"],
            ["Total revenue", "$ 50", "$ 45"]]
    path.write_text(json.dumps({"id": "d1", "title": "Kelovap annual report 2019",
                                "content": "Results.", "tables": [{"rows": rows}]}) + "\n")
    # "Total other assets" is not asked as "other assets": a row is named so (its mark aside)
    assert [(a.question.split(", according")[0], a.truth) for a in questions(path, "bare")] == [
        ("How much did the revenue grow in 2019", 5)]


def test_an_answer_is_judged_against_the_table(tmp_path):
    backend = SqliteSearch(tmp_path / "search.db")
    try:
        backend.add(load_jsonl(corpus(tmp_path)))
        got = answer("What was the cost of revenue in 2018, according to Kelovap's annual "
                     "report?", backend)
        missing = answer("What was the goodwill in 2018, according to Kelovap's annual "
                         "report?", backend)
    finally:
        backend.close()
    assert got == Decimal("18000") and judge("cell", got, Decimal("18000")) == "right"
    assert judge("cell", got, Decimal("20000")) == "wrong"
    assert isinstance(missing, str) and judge("cell", missing, Decimal(1)) == "not found"
    assert judge("change", Decimal("5000.004"), Decimal("5000")) == "right"


def test_a_fall_is_asked_of_a_row_that_fell_only(tmp_path):
    path = tmp_path / "corpus.jsonl"
    rows = [["", "2019", "2018", "2016"], ["Net revenue", "$ 50", "$ 45", "$ 30"],
            ["Cost of revenue", "20", "28", "30"], ["Other", "7", "", "9"]]
    path.write_text(json.dumps({"id": "d1", "title": "Kelovap annual report 2019",
                                "content": "Results.", "tables": [{"rows": rows}]}) + "\n")
    # the older less the newer, of two years that follow each other ("Other": 2016 to 2019)
    assert [(a.question.split(", according")[0], a.truth) for a in questions(path, "fell")] == [
        ("How much did the cost of revenue fall in 2019", 8)]


def test_a_ratio_is_asked_of_a_row_whose_older_figure_is_not_zero(tmp_path):
    path = tmp_path / "corpus.jsonl"
    rows = [["", "2019", "2018"], ["Net revenue", "$ 50", "$ 40"], ["Other", "7", "0"]]
    path.write_text(json.dumps({"id": "d1", "title": "Kelovap annual report 2019",
                                "content": "Results.", "tables": [{"rows": rows}]}) + "\n")
    assert [(a.question.split(", according")[0], a.truth) for a in questions(path, "ratio")] \
        == [("What was the ratio of the net revenue in 2019 to 2018", Decimal("1.25"))]
