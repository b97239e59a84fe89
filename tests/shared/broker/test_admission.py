"""What a worker runs of what it takes (shared/broker/admission.py): real kombu messages as
Celery's producer writes them, next to entries nobody's producer writes."""

from __future__ import annotations

import base64
import json

import pytest
import redis
from kombu import Connection, Queue

from shared.broker import admission
from shared import naming
from shared.broker.admission import Refusal
from shared.broker.app import make_celery
from shared.config import Settings

REGISTERED = {*naming.STEP_TASKS.values(), naming.TASK_PLAN, naming.TASK_FINALIZE,
              naming.TASK_REACT, "celery.accumulate", "celery.chord_unlock"}


def published(redis_server, body: object, **headers) -> bytes:
    """The entry kombu's producer pushes onto `plan` for `body` and `headers`."""
    with Connection(redis_server.url) as conn:
        channel = conn.default_channel
        Queue("plan")(channel).declare()
        conn.Producer(channel).publish(body, routing_key="plan", serializer="json",
                                       headers=headers)
        return channel.client.lpop("plan")


def test_a_message_kombu_wrote_is_read_and_anything_else_is_not(redis_server):
    entry = published(redis_server, [[], {}, {}], task=naming.TASK_PLAN, id="t-1")
    payload = admission.kombu_payload(entry)
    assert payload is not None and payload["headers"]["task"] == naming.TASK_PLAN
    good = json.loads(entry)
    broken = [{**good, "properties": {**good["properties"], "delivery_tag": 7}},
              {**good, "properties": {**good["properties"], "delivery_info": {}}},
              {**good, "headers": ["task"]},
              {**good, "headers": {**good["headers"], "compression": "application/x-gzip"}},
              {**good, "body": "%%% not base64 ==="},
              {**good, "properties": {**good["properties"], "body_encoding": "rot13"}}]
    for entry in [b"not json", b"\xff\xfe", b"[1, 2]", b"[" * 100_000, b'{"properties": {}}',
                  *(json.dumps(b).encode() for b in broken)]:
        assert admission.kombu_payload(entry) is None, entry[:80]


@pytest.mark.parametrize("queue, name, home", [
    ("plan", naming.TASK_EXTRACT, "execute"),
    ("execute", naming.TASK_PLAN, "plan"),
    ("finalize", naming.TASK_REACT, "react"),
    ("react", naming.TASK_FINALIZE, "finalize"),
    (None, naming.TASK_PLAN, "plan"),  # a delivery the transport did not mark
])
def test_a_chordal_task_runs_only_from_its_own_queue(queue, name, home):
    headers = {"task": name, "id": "t-1"}
    assert admission.refusal(queue, headers, lambda: [[], {}, {}], REGISTERED) == \
        Refusal(name, f"a task of queue {home}")
    assert admission.refusal(home, headers, lambda: [[], {}, {}], REGISTERED) is None


@pytest.mark.parametrize("queue", naming.TASK_QUEUES)
def test_a_celery_built_in_runs_from_no_queue(queue):
    headers = {"task": "celery.accumulate", "id": "t-1"}
    assert admission.refusal(queue, headers, lambda: [[1, 2], {}, {}], REGISTERED) == \
        Refusal("celery.accumulate", admission.NOT_CHORDAL)


def test_an_unknown_name_is_counted_as_unknown_so_the_counts_stay_few():
    headers = {"task": "x" * 10_000, "id": "t-1"}
    assert admission.refusal("plan", headers, lambda: None, REGISTERED) == \
        Refusal(admission.UNKNOWN, admission.NOT_CHORDAL)


@pytest.mark.parametrize("headers, body, why", [
    ({"task": naming.TASK_PLAN, "id": "t", "ignore_result": False}, [[], {}, {}],
     admission.ASKS_RESULT),
    ({"task": naming.TASK_PLAN, "id": "t"}, [[], {}, {"callbacks": [{"task": "x"}]}],
     admission.CARRIES_CANVAS),
    ({"task": naming.TASK_PLAN, "id": "t"}, [[], {}, {"chord": {"task": "x"}}],
     admission.CARRIES_CANVAS),
    ({"task": naming.TASK_PLAN, "id": "t"}, None, admission.BAD_BODY),
    ({"task": naming.TASK_PLAN, "id": "t"}, {"args": []}, admission.BAD_BODY),
    ({"task": naming.TASK_PLAN}, [[], {}, {}], admission.NOT_A_MESSAGE),
    (None, [[], {}, {}], admission.NOT_A_MESSAGE),
])
def test_the_planners_own_task_is_refused_when_it_asks_for_what_chordal_never_sends(
        headers, body, why):
    refused = admission.refusal("plan", headers, lambda: body, REGISTERED)
    assert refused is not None and refused.reason == why


def test_the_messages_chordal_sends_pass(redis_server):
    """As a producer sends a query and the planner a step (workers/canvas.py)."""
    app = make_celery(Settings(redis_url=redis_server.url))
    app.send_task(naming.TASK_PLAN, args=({"id": "q"},), queue=naming.QUEUE_PLAN,
                  ignore_result=True)
    app.send_task(naming.TASK_GET, args=({"query_id": "q"},))
    r = redis.Redis.from_url(redis_server.url)
    for queue in (naming.QUEUE_PLAN, naming.QUEUE_EXECUTE):
        payload = admission.kombu_payload(r.rpop(queue))
        body = json.loads(base64.b64decode(payload["body"]))
        assert admission.refusal(queue, payload["headers"], lambda: body, REGISTERED) is None


def test_the_counts_read_back_by_queue_task_and_reason(redis_server):
    r = redis.Redis.from_url(redis_server.url)
    for queue, refused in [("plan", Refusal(naming.TASK_EXTRACT, "a task of queue execute")),
                           ("plan", Refusal(naming.TASK_EXTRACT, "a task of queue execute")),
                           ("execute", Refusal(admission.MALFORMED, admission.NOT_A_MESSAGE))]:
        admission.count_refusal(r, queue, refused)
    assert admission.refused_counts(r.hgetall(naming.refused_key())) == [
        admission.Refused("execute", admission.MALFORMED, admission.NOT_A_MESSAGE, 1),
        admission.Refused("plan", naming.TASK_EXTRACT, "a task of queue execute", 2)]
