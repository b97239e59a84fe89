"""TAT-QA turned into bench data: consumes TAT-QA's dev.json (the build set) and
test_gold.json (the held-out set) — tables and paragraphs from real annual reports,
with questions and answers written by people (Zhu et al., ACL 2021; CC BY 4.0) — and
produces, under bench/data/tatqa/<build|held-out>/, a corpus.jsonl and a cases.jsonl.

A document per context: its table as rows of cells (`tables`), its paragraphs and the
table laid out in columns as content. TAT-QA keeps a context's paragraphs in order but
not where its table stood: the table is put after the one paragraph that introduces it
("The following table presents …:"), whose last sentence is its caption (`title`), as a
filing prints them; first, without a caption, when no paragraph or several do. TAT-QA does not say which company a context is
from, so each gets an invented name (from its table's id, always the same), and its
title is "<Name> annual report <newest year of its table>"; each question names it the
way a user would: "…, according to <Name>'s annual report?".

Cases, one of three sets:
- `single-cell`: the answer is a figure written in exactly one cell of the table
  (answer type span, from the table or the table and its text);
- `arithmetic`: the answer is arithmetic over the table's cells (every number of its
  derivation is a cell; the derivation is kept for the build set only, to study misses,
  and never reaches a planner);
- `non-figure`: the answer is words, not a figure (a span or several), from anywhere:
  the planner must never answer it with a figure.
Questions of other kinds (counts, arithmetic over numbers the text states) are left out.

`python -m bench.tatqa DEV.json TEST_GOLD.json` (re)writes both sets; the bench reads the
committed files and never fetches.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from decimal import Decimal, InvalidOperation
from pathlib import Path

import regex

from bench.gold import figure

OUT = Path(__file__).resolve().parent / "data" / "tatqa"
SETS = {"build": "dev.json", "held-out": "test_gold.json"}
_CONSONANTS = "bcdfgklmnprstvz"
_VOWELS = "aeiou"
_YEAR = regex.compile(r"(?<!\d)(?:19|20)\d{2}(?!\d)")
_NUMBER = regex.compile(r"\d[\d,]*(?:\.\d+)?|\.\d+")
_CONSTANTS = {Decimal(1), Decimal(2), Decimal(3), Decimal(4), Decimal(5), Decimal(100)}
"""Numbers a derivation uses that are not cells: the count of an average, 100, 1."""


def company(uid: str) -> str:
    """An invented, pronounceable company name, the same for the same table id."""
    digest = hashlib.sha256(uid.encode()).digest()
    letters = []
    for i in range(3):
        letters.append(_CONSONANTS[digest[2 * i] % len(_CONSONANTS)])
        letters.append(_VOWELS[digest[2 * i + 1] % len(_VOWELS)])
    letters.append(_CONSONANTS[digest[6] % len(_CONSONANTS)])
    return "".join(letters).capitalize()


def layout(rows: list[list[str]]) -> str:
    """The table as text in columns, as a PDF's text layer writes it."""
    width = max(len(r) for r in rows)
    cells = [[c.strip() for c in r] + [""] * (width - len(r)) for r in rows]
    sizes = [max(len(r[i]) for r in cells) for i in range(width)]
    return "\n".join("   ".join(c.ljust(sizes[i]) for i, c in enumerate(r)).rstrip()
                     for r in cells)


def document(context: dict, name: str) -> dict:
    rows = context["table"]["table"]
    head = " ".join(" ".join(r) for r in rows[:3])
    years = [int(y) for y in _YEAR.findall(head)]
    title = f"{name} annual report" + (f" {max(years)}" if years else "")
    paragraphs = [p["text"] for p in sorted(context["paragraphs"], key=lambda p: p["order"])]
    table: dict = {"rows": rows}
    at = lead_in(paragraphs)
    if at is None:
        parts = [layout(rows), *paragraphs]
    else:
        table["title"] = last_sentence(paragraphs[at])
        parts = [*paragraphs[:at + 1], layout(rows), *paragraphs[at + 1:]]
    return {"id": f"tatqa-{context['table']['uid'][:8]}", "title": title,
            "content": "\n\n".join(parts), "source_type": "official_report",
            "tables": [table]}


_LEAD = regex.compile(r"(?i)\bfollow|\btables?\b|\bbelow\b")


def lead_in(paragraphs: list[str]) -> int | None:
    """The paragraph that introduces the table, as a filing prints it just above: the one
    ending in a colon that says "following", "table" or "below" ("The following table
    presents sales by geographic area (in thousands):"); None when none or several do
    (TAT-QA gives the paragraphs in order but not where the table stood)."""
    found = [i for i, p in enumerate(paragraphs)
             if p.strip().endswith(":") and _LEAD.search(p)]
    return found[0] if len(found) == 1 else None


def last_sentence(paragraph: str) -> str:
    """The paragraph's last sentence: the table's caption."""
    return regex.split(r"(?<=[.!?])\s+(?=[A-Z(])", paragraph.strip())[-1]





def _normal(text: str) -> str:
    return regex.sub(r"[\s$€£]", "", text.replace("−", "-"))


def _cells(rows: list[list[str]]) -> list[str]:
    return [c for r in rows for c in r[1:] if c.strip()]


def single_cell(answer: str, rows: list[list[str]]) -> bool:
    """Whether `answer` is a figure written in exactly one cell."""
    q = figure(answer)
    if q is None or q.kind == "date":
        return False
    cells = _cells(rows)
    same = [c for c in cells if _normal(c) == _normal(answer)]
    if not same:
        same = [c for c in cells if (p := figure(c)) is not None and p.amount == q.amount]
    return len(same) == 1


def over_cells(derivation: str, rows: list[list[str]]) -> bool:
    """Whether every number `derivation` uses is a cell of the table."""
    amounts = set()
    for c in _cells(rows):
        if (p := figure(c)) is not None and p.amount is not None:
            amounts.add(abs(p.amount))
    numbers = []
    for n in _NUMBER.findall(derivation or ""):
        try:
            numbers.append(Decimal(n.replace(",", "")))
        except InvalidOperation:
            return False
    cells = [n for n in numbers if n not in _CONSTANTS or n in amounts]
    return bool(cells) and len(cells) >= 2 and all(n in amounts for n in cells)


def not_afigure(question: str, answer) -> bool:
    """Whether the gold answer is words: no part of it is a figure (a year answering
    "which year" is not one either)."""
    items = answer if isinstance(answer, list) else [answer]
    for item in items:
        text = str(item).strip()
        if _YEAR.fullmatch(text) and regex.search(r"\byears?\b", question, regex.I):
            continue
        if figure(text) is not None:
            return False
    return True


def kind_of(q: dict, rows: list[list[str]]) -> str | None:
    answer = q["answer"]
    if q["answer_type"] == "span" and q["answer_from"] in ("table", "table-text") \
            and len(answer) == 1 and single_cell(answer[0], rows) \
            and not not_afigure(q["question"], answer):
        return "single-cell"
    if q["answer_type"] == "arithmetic" and q["answer_from"] in ("table", "table-text") \
            and over_cells(q["derivation"], rows):
        return "arithmetic"
    if q["answer_type"] in ("span", "multi-span") and not_afigure(q["question"], answer):
        return "non-figure"
    return None


def asked(question: str, name: str) -> str:
    """The question as a user asks it of a store of many reports: naming the company."""
    return f"{question.strip().rstrip('?.').rstrip()}, according to {name}'s annual report?"


def convert(source: Path, keep_derivation: bool) -> tuple[list[dict], list[dict]]:
    contexts = json.loads(source.read_text(encoding="utf-8"))
    docs, cases, names = [], [], set()
    for context in contexts:
        name = company(context["table"]["uid"])
        if name in names:  # two tables whose ids give one name: the second takes its id's tail
            name = company(context["table"]["uid"][::-1])
        names.add(name)
        doc = document(context, name)
        docs.append(doc)
        rows = context["table"]["table"]
        for q in sorted(context["questions"], key=lambda q: q["order"]):
            kind = kind_of(q, rows)
            if kind is None:
                continue
            gold = {"answer": q["answer"], "scale": q["scale"],
                    "answer_type": q["answer_type"], "answer_from": q["answer_from"]}
            case = {"id": q["uid"][:12], "set": kind, "question": asked(q["question"], name),
                    "doc": doc["id"], "gold": gold}
            if keep_derivation:
                case["derivation"] = q["derivation"]
            cases.append(case)
    return docs, cases


def write(folder: Path, docs: list[dict], cases: list[dict]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for path, rows in ((folder / "corpus.jsonl", docs), (folder / "cases.jsonl", cases)):
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                        encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.tatqa")
    parser.add_argument("dev", type=Path, help="TAT-QA's dev.json (the build set)")
    parser.add_argument("test_gold", type=Path, help="TAT-QA's test_gold.json (held out)")
    args = parser.parse_args()
    for name, source in (("build", args.dev), ("held-out", args.test_gold)):
        docs, cases = convert(source, keep_derivation=name == "build")
        write(OUT / name, docs, cases)
        counts = {k: sum(c["set"] == k for c in cases)
                  for k in ("single-cell", "arithmetic", "non-figure")}
        print(f"{name}: {len(docs)} documents, cases {counts}")


if __name__ == "__main__":
    main()
