"""What a worker runs of what it takes off a queue, and the count of what it refused.

Consumes a message as a worker takes it (the raw payload read from Redis, then its
Celery headers and body) and the queue it was taken from; produces a `Refusal` (the
task name as counted, and why) for every message a Chordal worker must not run, and
the counts of refusals in Redis (`naming.refused_key()`: `count_refusal`, read back by
`refused_counts` for `chordal status` and the workers page).

The `producers` ACL user may push anything onto the `plan` queue (shared/access/acl.py
cannot look inside a message), so the worker decides what runs. It runs a message only
when:
- it is a message a kombu producer writes (JSON with its properties and delivery info,
  uncompressed): `kombu_payload`. The transport drops anything else before kombu reads
  it (shared/broker/transport.py): kombu would raise out of the worker's event loop and end
  the worker, and the message, given back by recovery, would end the next one;
- its task is one of its queue's own (`naming.QUEUE_TASKS`): a step sent to `plan`, the
  planner's task sent to `execute`, a Celery built-in (`celery.accumulate`,
  `celery.chord_unlock`, ...) or an unknown name runs on no worker, also not on one that
  consumes every queue (`--role all`);
- it asks for nothing Chordal's own messages never ask for and the `workers` ACL user
  cannot do: a result stored in Celery's result backend (`ignore_result` false: the
  store fails and Celery then never acknowledges the message), or callbacks, errbacks, a
  chain or a chord (the worker would send them, as the `workers` user, to any queue).
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Container
from dataclasses import dataclass

from kombu.utils.encoding import bytes_to_str
from kombu.utils.json import loads

from shared import naming

UNKNOWN = "(unknown)"
"""The name counted for a task name no worker registers (the log line has the name)."""
MALFORMED = "(malformed)"
"""The name counted for what is not a Celery task message at all."""
NOT_A_MESSAGE = "not a Celery task message"
NOT_CHORDAL = "not a Chordal task"
ASKS_RESULT = "asks for its result to be stored"
CARRIES_CANVAS = "carries callbacks, errbacks, a chain or a chord"
BAD_BODY = "its body is not JSON [args, kwargs, options]"
CANVAS_OPTIONS = ("callbacks", "errbacks", "chain", "chord")
"""Options of a Celery message body that make the worker send or join other tasks."""
_HOME = {name: queue for queue, names in naming.QUEUE_TASKS.items() for name in names}


@dataclass(frozen=True)
class Refusal:
    task: str
    """The task name as counted: the message's when a worker registers it, else
    `UNKNOWN` or `MALFORMED`."""
    reason: str


@dataclass(frozen=True)
class Refused:
    """How many messages taken from `queue` were refused for one task and reason."""
    queue: str
    task: str
    reason: str
    count: int


def kombu_payload(item: bytes) -> dict | None:
    """The message `item` (as read from a queue) holds, when it is one kombu can read
    and record: a JSON object whose properties carry a delivery tag and delivery info,
    whose headers are an object without `compression` (a compressed body could unpack
    to gigabytes in the worker; Chordal compresses nothing) and whose body decodes
    as its `body_encoding` says. None for anything else."""
    try:
        payload = loads(bytes_to_str(item))
    except (ValueError, RecursionError):  # not JSON, not UTF-8, or nested past the stack
        return None
    if not isinstance(payload, dict):
        return None
    props, headers, body = payload.get("properties"), payload.get("headers"), payload.get("body")
    if not isinstance(props, dict) or not isinstance(props.get("delivery_tag"), str):
        return None
    info = props.get("delivery_info")
    if not isinstance(info, dict) or not all(isinstance(info.get(k), str)
                                             for k in ("exchange", "routing_key")):
        return None
    if not isinstance(headers or {}, dict) or (headers or {}).get("compression"):
        return None
    if not isinstance(body or "", str):
        return None
    encoding = props.get("body_encoding")
    if encoding == "base64":
        try:
            base64.b64decode(body or "")
        except ValueError:
            return None
    elif encoding not in (None, "utf-8"):  # kombu has no other codec
        return None
    return payload


def refusal(queue: str | None, headers: object, read_body: Callable[[], object],
            registered: Container[str]) -> Refusal | None:
    """Why the message taken from `queue` must not run, or None when it may.
    `read_body` gives the decoded body (None when it cannot be decoded), called only
    once the task name passed; `registered` holds the task names workers register (the
    Celery built-ins among them), counted by name."""
    if not isinstance(headers, dict) or not isinstance(headers.get("task"), str) \
            or not isinstance(headers.get("id"), str):
        return Refusal(MALFORMED, NOT_A_MESSAGE)
    name = headers["task"]
    if name not in naming.QUEUE_TASKS.get(queue or "", ()):
        counted = name if name in _HOME or name in registered else UNKNOWN
        home = _HOME.get(name)
        return Refusal(counted, f"a task of queue {home}" if home else NOT_CHORDAL)
    if headers.get("ignore_result") is False:
        return Refusal(name, ASKS_RESULT)
    body = read_body()
    if not (isinstance(body, (list, tuple)) and len(body) == 3
            and isinstance(body[0], (list, tuple)) and isinstance(body[1], dict)
            and isinstance(body[2], dict)):
        return Refusal(name, BAD_BODY)
    if any(body[2].get(option) for option in CANVAS_OPTIONS):
        return Refusal(name, CARRIES_CANVAS)
    return None


def count_refusal(pipe, queue: str, refused: Refusal) -> None:
    """Add one refusal to the counts, in `pipe` (a redis-py pipeline or client)."""
    pipe.hincrby(naming.refused_key(), f"{queue}|{refused.task}|{refused.reason}", 1)


def refused_counts(raw: dict) -> list[Refused]:
    """The counts as `HGETALL naming.refused_key()` returned them, by queue and task."""
    out = []
    for field, count in raw.items():
        queue, _, rest = bytes_to_str(field).partition("|")
        task, _, reason = rest.rpartition("|")
        out.append(Refused(queue, task, reason, int(count)))
    return sorted(out, key=lambda r: (r.queue, r.task, r.reason))
