"""A worker at INFO writes a task's retry, not a line per task it ran (Flower shows
those from the task events); at DEBUG Celery writes them all."""

from __future__ import annotations

import logging

import pytest
from celery.app.trace import LOG_RECEIVED, LOG_RETRY, LOG_SUCCESS
from celery.exceptions import Retry
from celery.signals import task_retry

from shared.broker.log_lines import quiet_task_lines

CONTEXT = {"id": "t1", "name": "chordal.get", "return_value": "{}", "runtime": 0.01,
           "args": "()", "kwargs": "{}", "eta": None, "exc": "no plan"}
WORKER = logging.getLogger("test.worker")


class Task:
    name = "chordal.get"


class Request:
    id = "t1"


@pytest.fixture
def celery_loggers():
    strategy, trace = (logging.getLogger("celery.worker.strategy"),
                       logging.getLogger("celery.app.trace"))
    levels = strategy.level, trace.level
    yield strategy, trace
    strategy.setLevel(levels[0])
    trace.setLevel(levels[1])
    task_retry.disconnect(dispatch_uid="chordal.retry_line")


def logged(celery_loggers, caplog) -> list[str]:
    """What a worker's task that was received, succeeded, then retried writes."""
    strategy, trace = celery_loggers
    with caplog.at_level(logging.DEBUG):
        for logger, line in ((strategy, LOG_RECEIVED), (trace, LOG_SUCCESS)):
            if logger.isEnabledFor(logging.INFO):  # as Celery asks, once
                logger.info(line, CONTEXT)
        trace.info(LOG_RETRY, CONTEXT)  # Celery's own, whatever the level
        task_retry.send(sender=Task(), request=Request(), reason=Retry("no plan"))
    return [r.getMessage().strip() for r in caplog.records]


def test_a_worker_at_info_writes_a_retry_once_and_no_line_per_task_it_ran(
        celery_loggers, caplog):
    quiet_task_lines(logging.INFO, WORKER)
    quiet_task_lines(logging.INFO, WORKER)  # a second setup adds nothing
    assert logged(celery_loggers, caplog) == ["Task chordal.get[t1] retry: no plan"]


def test_a_worker_at_debug_writes_each_task_it_received_and_ran(celery_loggers, caplog):
    quiet_task_lines(logging.DEBUG, WORKER)
    assert [line.split("] ")[1].split(" ")[0] for line in logged(celery_loggers, caplog)] \
        == ["received", "succeeded", "retry:"]
