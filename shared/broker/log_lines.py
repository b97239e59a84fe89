"""Log lines of bounded length: consumes log records, produces them with every line of
their message and traceback cut to `MAX_LOG_CHARS`, so that a plan, question or source
a user sent (which error messages quote: a GET's NOT_FOUND names its source) never
makes a log line as long as itself.

`BoundedLines` is the logging filter; the workers put it on their log handlers at
start-up (workers/app.py), where it bounds Celery's own lines too.
"""

from __future__ import annotations

import logging

MAX_LOG_CHARS = 2000
"""Characters of one log line; the rest is replaced by a count of what was cut."""


def clip_line(line: str, limit: int = MAX_LOG_CHARS) -> str:
    """`line` when it is at most `limit` characters, else its start and what was cut."""
    if len(line) <= limit:
        return line
    return f"{line[:limit]}… [{len(line) - limit:,} more characters]"


class BoundedLines(logging.Filter):
    """Cuts every line of a record's message and traceback to `limit` characters."""

    def __init__(self, limit: int = MAX_LOG_CHARS):
        super().__init__()
        self.limit = limit

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if len(message) > self.limit and (cut := self._clip(message)) != message:
            record.msg, record.args = cut, None
        text = record.exc_text  # else the handler formats the traceback itself, unless cut
        if text is None and record.exc_info:
            text = logging.Formatter().formatException(record.exc_info)
        if text and len(text) > self.limit and (cut := self._clip(text)) != text:
            record.exc_text = cut
        return True

    def _clip(self, text: str) -> str:
        return "\n".join(clip_line(line, self.limit) for line in text.split("\n"))
