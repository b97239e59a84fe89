"""The Diagnosis: what `chordal debug` says about one failed or empty step — its code,
the likely cause and a suggested fix — and the causes and fixes of the error codes that
need no closer look at the run."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from shared.models import Candidate


class Diagnosis(BaseModel):
    model_config = ConfigDict(extra="forbid")

    step: str | None
    """Step id; None for the whole plan."""
    code: str
    """The step's error code (`NO_MATCH`, …), `EMPTY`, or `NO_RESULT`."""
    cause: str
    """What most likely went wrong."""
    suggestion: str
    """What to change."""
    sentence: str | None = None
    """NO_MATCH: the document sentence nearest the pattern's keywords."""
    pattern: str | None = None
    """NO_MATCH, PATTERN_TIMEOUT: a pattern checked with `regex` to work."""
    titles: list[str] = []
    """NOT_FOUND: the nearest titles in the search store, best first."""
    root: str | None = None
    """INPUT_FAILED: the step whose failure started the chain."""
    candidates: list[Candidate] = []
    """NOT_FOUND, AMBIGUOUS (GET): the documents considered and why each was refused."""
    rows: list[str] = []
    """NOT_FOUND, AMBIGUOUS (EXTRACT by row): the table rows nearest the one asked for,
    each with its table, page, document and the periods of its columns."""

    def render(self) -> str:
        """The diagnosis as `chordal debug` prints it."""
        lines = [f"{self.step or 'plan'} [{self.code}]", f"  cause: {self.cause}"]
        if self.sentence:
            lines.append(f"  nearest sentence: {self.sentence}")
        for c in self.candidates:
            lines.append(f"  {c.verdict}: {c.title!r} (period {c.period or 'none'}, published "
                         f"{c.date or 'undated'}): {c.reason}")
        for row in self.rows:
            lines.append(f"  nearest row: {row}")
        lines.append(f"  fix:   {self.suggestion}")
        return "\n".join(lines)


FIXES: dict[str, tuple[str, str]] = {
    "REDELIVERY_CAP": (
        "the worker running this step died every time it was delivered (out of memory, "
        "killed, or crashed in native code): ",
        "read the executor worker's log around this action_id; give it more memory or a "
        "lower --concurrency, and make the step lighter (smaller top_k, tighter pattern)"),
    "TIME_LIMIT": (
        "the step ran past the task time limit and was stopped: ",
        "make the step cheaper (smaller top_k, a tighter pattern), or raise "
        "CHORDAL_TASK_TIME_LIMIT_S while keeping it below CHORDAL_VISIBILITY_TIMEOUT_S"),
    "BAD_PATTERN": ("the pattern cannot run: ",
                    "fix the regular expression; it needs exactly one capture group (…)"),
    "NOT_A_VALUE": ("what the pattern captured is not a value of its kind: ",
                    "capture the figure itself (a group that starts with a digit, like "
                    "(\\d[\\d,]*(?:\\.\\d+)?)) and spell out the words right before it, so "
                    "a year, a page number or a footnote mark cannot come first"),
    "CURRENCY_MISMATCH": ("the expression mixes amounts in two currencies: ",
                          "extract both amounts in one currency, or convert one with a rate "
                          "the plan states"),
    "UNIT_MISMATCH": ("the expression adds or compares an amount of money and a percent: ",
                      "take the percent of the amount ($AMOUNT * $PERCENT / 100), or compare "
                      "like with like"),
    "UNCLEAR_ARITHMETIC": ("the arithmetic means different things to different readers of "
                           "its figures: ",
                           "say which is asked: abs($X) for the amount of a figure written in "
                           "parentheses, $NEW - $OLD in points for a change of percentages"),
    "SAME_CELL": ("two variables of the expression hold one table cell: ",
                  "name each row as its table writes it, or give each step the period of "
                  "its column"),
    "NOT_A_DOCUMENT": ("EXTRACT read a value that is not document text: ",
                       "point its source at the output variable of a GET step"),
    "SEARCH_FAILED": ("the search store could not be read: ",
                      "check CHORDAL_HOME (or CHORDAL_ES_URL) and that the store exists"),
    "SEARCH_UNAVAILABLE": ("the search store did not answer, even after retries: ",
                           "check that Elasticsearch at CHORDAL_ES_URL is up and not "
                           "overloaded, or raise CHORDAL_ES_TIMEOUT_S; then ask again"),
    "TOOL_CRASHED": ("the tool raised an unexpected error (a bug in Chordal): ",
                     "report it with the step and this message"),
    "OUT_OF_RANGE": ("the result is too large or has no real value: ",
                     "check the inputs' magnitudes and the expression"),
    "BAD_EXPRESSION": ("the expression cannot be evaluated: ",
                       "use numbers, $VARS, + - * / and comparisons"),
    "MISSING_INPUT": ("a variable of the expression has no value: ",
                      "make sure the step that binds it runs before this one"),
    "NOT_A_CONDITION": ("the condition yields a number, not true or false: ",
                        "compare the value, e.g. `$GAP < 0`"),
    "NOT_A_LIST": ("FILTER read a single value, not a list: ",
                   "point its source at a SEARCH, a GET with top_k above 1, or a MERGE list"),
    "NO_CRITERIA": ("FILTER has nothing to filter by: ", "set \"condition\" or \"pattern\""),
    "BAD_RULE": ("ARBITRATE does not know a prefer rule: ", "use one of the rules it lists"),
    "EMPTY": ("the step succeeded but produced no value",
              "check the step's inputs and conditions"),
    "EMPTY_FILTER": ("FILTER kept no item: its condition or pattern rejects all of them",
                     "loosen the condition or pattern, or check the list it filters"),
    "EMPTY_MERGE": ("MERGE had no value to combine: every source failed or was empty",
                    "fix the steps it merges (see their diagnoses)"),
    "EMPTY_EXTRACT": ("the pattern's capture group matched an empty string",
                      "make the capture group require at least one character, e.g. (\\d+)"),
}
"""Code -> (cause, placed before the step's own error message; suggestion)."""
