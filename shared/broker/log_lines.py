"""Log lines of bounded length: consumes log records, produces them with every line of
their message and traceback cut to `MAX_LOG_CHARS`, so that a plan, question or source
a user sent (which error messages quote: a GET's NOT_FOUND names its source) never
makes a log line as long as itself.

`BoundedLines` is the logging filter; the workers put it on their log handlers at
start-up (workers/app.py), where it bounds Celery's own lines too.

`quiet_task_lines` leaves out the two lines Celery writes at INFO for every task a
worker runs ("Task … received", "Task … succeeded in …"): Flower shows the same from
the task events, and building, formatting and writing them is about 5% of a worker's
CPU. Celery's warnings and failures stay, and so do Chordal's own lines; a task's retry,
which Celery writes at INFO beside its success, is written in the same words by Chordal
(from Celery's `task_retry` signal). A worker started at DEBUG keeps Celery's lines.
"""

from __future__ import annotations

import logging

from celery.app.trace import LOG_RETRY
from celery.signals import task_retry

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


def quiet_task_lines(level: int, log: logging.Logger) -> None:
    """Leave out Celery's per-task INFO lines (the module docstring) of a worker that
    logs at `level`, unless that is DEBUG or finer; its retries are written to `log`."""
    if level <= logging.DEBUG:
        return
    # Celery reads these levels once, as the worker starts: it then builds no such line
    for name in ("celery.worker.strategy", "celery.app.trace"):
        logging.getLogger(name).setLevel(logging.WARNING)

    def retried(sender=None, request=None, reason=None, **_) -> None:
        log.info(LOG_RETRY.strip(), {"id": getattr(request, "id", None),
                                     "name": getattr(sender, "name", None),
                                     "exc": str(reason)})
    task_retry.connect(retried, weak=False, dispatch_uid="chordal.retry_line")
