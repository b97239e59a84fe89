"""Batch files: consumes a JSON Lines file of queries and produces validated `Query`s,
one line at a time, so a 100k-line file never sits in memory; or one InputError naming
the file, line and field of every bad line (up to ten, then a count).

A line (only `question` is required; blank lines are skipped):

    {"question": "…", "id": "q-17", "mode": "rewoo", "domain": "finance",
     "plan": {"steps": […]} or "#E1 = Wikipedia[…] …", "deadline": 120}

- `id`: the query id. Without one the id is `b` + 20 hex digits of SHA-256 over the
  batch name and the line's question, mode, domain and plan (not its deadline), so the
  same line in the same batch always gets the same id: re-enqueueing submits it once.
- `mode`, `deadline` (seconds from enqueue): default to the command's `--mode` and
  `--deadline`.
- `plan`: a JSON plan object or plan text in any syntax; checked here, so a bad plan
  is reported before anything is submitted. Not allowed with mode `react`.
- `domain`: the answer template (generic, finance, legal, medical). With a plan it must
  agree with the plan's own `domain`; without one it is kept on the query and applied
  to the plan the planner writes (shared/journey/planning.py).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from shared.config import MAX_PLAN_CHARS, MAX_STEPS
from shared.errors import InputError, PlanError, quoted
from shared.models import MODES, Query
from shared.plan.parse import parse_plan_with_repairs
from shared.render.answer import DOMAINS

ID_RE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
FIELDS = ("question", "id", "mode", "domain", "plan", "deadline")
MAX_REPORTED = 10
"""How many bad lines one error message lists before summarizing the rest."""


class LineError(ValueError):
    """Raised when one line of a batch file is malformed; the message names the field."""


@dataclass(frozen=True)
class LineDefaults:
    """What a line gets for the fields it leaves out, and the batch its ids belong to."""

    batch: str
    mode: str = "rewoo"
    deadline_s: float = 60.0
    max_steps: int = MAX_STEPS
    max_plan_chars: int = MAX_PLAN_CHARS


@dataclass
class FileCheck:
    """The result of the validation pass over a whole file."""

    queries: int = 0
    """Lines that are queries (blank lines and duplicates excluded)."""
    duplicates: set[int] = field(default_factory=set)
    """Line numbers repeating an earlier line's query id with the same content."""


def derived_id(batch: str, question: str, mode: str, domain: str | None, plan: object) -> str:
    """The id of a line without `id`: stable for the same content in the same batch."""
    content = json.dumps([batch, question, mode, domain, plan], sort_keys=True,
                         ensure_ascii=False, separators=(",", ":"))
    # surrogatepass: a lone surrogate gets an id too, and Query then names its field
    return "b" + hashlib.sha256(content.encode("utf-8", "surrogatepass")).hexdigest()[:20]


def parse_line(text: str, defaults: LineDefaults) -> Query:
    """The Query one line describes; LineError saying which field is wrong and how."""
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as e:
        raise LineError(f"not valid JSON ({e.msg} at column {e.colno}); write one JSON "
                        'object a line, like {"question": "…"}') from None
    except ValueError:  # Python reads integers of at most 4300 digits
        raise LineError("not readable JSON: a number has more than 4300 digits; write it "
                        "shorter, or as a string") from None
    except RecursionError:
        raise LineError('nested too deeply to read; write one flat JSON object a line, '
                        'like {"question": "…"}') from None
    if not isinstance(raw, dict):
        raise LineError(f"expected a JSON object with 'question', got {type(raw).__name__}")
    unknown = sorted(set(raw) - set(FIELDS))
    if unknown:
        raise LineError(f"field {quoted(unknown[0])} is not allowed; allowed fields: "
                        f"{', '.join(FIELDS)}")
    question = raw.get("question")
    if not isinstance(question, str) or not question.strip():
        raise LineError("field 'question' is missing or empty; give the question as text")
    mode = raw.get("mode", defaults.mode)
    if mode not in MODES:
        raise LineError(f"field 'mode' is {quoted(mode)}; use one of {', '.join(MODES)}")
    domain = raw.get("domain")
    if domain is not None and domain not in DOMAINS:
        raise LineError(f"field 'domain' is {quoted(domain)}; use one of {', '.join(DOMAINS)} "
                        "(it chooses the answer template)")
    deadline = raw.get("deadline", defaults.deadline_s)
    if (isinstance(deadline, bool) or not isinstance(deadline, (int, float))
            or (isinstance(deadline, float) and not math.isfinite(deadline)) or deadline <= 0):
        raise LineError(f"field 'deadline' is {quoted(deadline)}; give seconds as a finite "
                        "number above 0")
    plan, repairs = _plan(raw.get("plan"), mode, domain, defaults)
    qid = raw.get("id")
    if qid is None:
        qid = derived_id(defaults.batch, question, mode, domain, raw.get("plan"))
    elif not isinstance(qid, str) or not ID_RE.match(qid):
        raise LineError(f"field 'id' is {quoted(qid)}; use 1-64 letters, digits, _ . or - "
                        "(or leave it out and one is derived from the line)")
    try:
        return Query(id=qid, question=question, mode=mode, domain=domain, plan=plan,
                     repairs=repairs, deadline_s=deadline)
    except ValidationError as e:
        err = e.errors()[0]
        name = {"deadline_s": "deadline"}.get(str(err["loc"][0]), str(err["loc"][0]))
        raise LineError(f"field {name!r}: {err['msg'].removeprefix('Value error, ')}") from None


def _plan(source: object, mode: str, domain: str | None, defaults: LineDefaults):
    if source is None:
        return None, []
    if mode == "react":
        raise LineError("field 'plan' is given but mode is 'react', which runs no plan; "
                        "drop the plan or use mode rewoo or auto")
    if not isinstance(source, (dict, str)):
        raise LineError(f"field 'plan' is {type(source).__name__}; give a JSON plan object "
                        "or plan text (ReWOO or LLMCompiler)")
    try:
        plan, repairs = parse_plan_with_repairs(source, max_steps=defaults.max_steps,
                                                max_chars=defaults.max_plan_chars)
    except PlanError as e:
        first = e.problems[0] if e.problems else None
        detail = f" ({getattr(first, 'step', None) or 'plan'}: {first.message})" if first else ""
        raise LineError(f"field 'plan': {e.message}{detail}") from None
    if domain and plan.domain not in ("generic", domain):
        raise LineError(f"field 'domain' is {domain!r} but the plan says {plan.domain!r}; "
                        "drop one or make them agree")
    return plan, repairs


def _lines(path: Path) -> Iterator[tuple[int, str | None]]:
    """(line number, text) for each non-blank line; text None when it is not UTF-8."""
    try:
        f = path.open("rb")
    except FileNotFoundError:
        raise InputError(f"{path}: no such file; give the path of a JSONL file of "
                         "queries") from None
    except OSError as e:
        raise InputError(f"{path}: cannot be read ({e.strerror})") from None
    with f:
        for number, raw in enumerate(f, start=1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                yield number, None
                continue
            if text.strip():
                yield number, text


def check_file(path: str | Path, defaults: LineDefaults) -> FileCheck:
    """Validate every line without keeping them; InputError listing the bad lines.

    Keeps only a digest per query id, to tell a repeated line (skipped) from two
    different lines claiming one id (an error)."""
    path = Path(path)
    check, seen, problems = FileCheck(), {}, []
    for number, text in _lines(path):
        try:
            if text is None:
                raise LineError("is not UTF-8 text; save the file as UTF-8")
            query = parse_line(text, defaults)
        except LineError as e:
            problems.append(f"{path.name} line {number}: {e}")
            continue
        digest = hashlib.blake2b(query.model_dump_json(exclude={"id"}).encode(),
                                 digest_size=8).digest()
        first = seen.setdefault(query.id, (number, digest))
        if first[0] == number:
            check.queries += 1
        elif first[1] == digest:
            check.duplicates.add(number)
        else:
            problems.append(f"{path.name} line {number}: field 'id' {query.id!r} is already "
                            f"used by line {first[0]} for a different query; give each "
                            "query its own id")
    if problems:
        shown = problems[:MAX_REPORTED]
        if len(problems) > MAX_REPORTED:
            shown.append(f"… and {len(problems) - MAX_REPORTED} more bad lines")
        raise InputError("\n".join([f"{path}: nothing submitted; fix these lines and retry",
                                    *shown]))
    if not check.queries:
        raise InputError(f"{path}: no queries in the file; write one JSON object a line, "
                         'like {"question": "…"}')
    return check


def read_queries(path: str | Path, defaults: LineDefaults,
                 skip: set[int] = frozenset()) -> Iterator[tuple[int, Query]]:
    """(line number, Query) for each line of a file `check_file` accepted, except the
    line numbers in `skip` (its duplicates)."""
    for number, text in _lines(Path(path)):
        if number not in skip:
            yield number, parse_line(text, defaults)
