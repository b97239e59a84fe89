"""The cluster-wide LLM concurrency limit on a real Redis, with real threads and processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import uuid

import pytest
import redis

from shared.errors import LLMError
from shared.llm.limit import ConcurrencyLimit

from .conftest import in_flight

HOLDER = """
import sys, time, redis
from shared.llm.limit import ConcurrencyLimit
limit = ConcurrencyLimit(redis.Redis.from_url(sys.argv[1]), 1, lease_s=1.0, key=sys.argv[2])
with limit.slot(5):
    print("held", flush=True)
    time.sleep(60)
"""


@pytest.fixture
def make_limit(redis_server):
    """Build limits that share one fresh key (as workers share `llm_slots_key()`)."""
    key = f"test:llm-slots:{uuid.uuid4().hex}"
    client = redis.Redis.from_url(redis_server.url)

    def make(limit: int, lease_s: float = 30.0) -> ConcurrencyLimit:
        return ConcurrencyLimit(client, limit, lease_s=lease_s, key=key)

    yield make
    client.delete(key)


def test_no_more_than_the_limit_hold_slots_at_once_across_clients(make_limit):
    peak, holding, lock = [0], [0], threading.Lock()

    def call(limit: ConcurrencyLimit) -> None:
        with limit.slot(timeout_s=30):
            with lock:
                holding[0] += 1
                peak[0] = max(peak[0], holding[0])
            time.sleep(0.1)
            with lock:
                holding[0] -= 1

    threads = [threading.Thread(target=call, args=(make_limit(2),)) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert peak[0] == 2
    assert in_flight(make_limit(2)) == 0


def test_acquire_gives_up_after_its_timeout_naming_the_setting_to_raise(make_limit):
    limit = make_limit(1)
    with limit.slot(timeout_s=1):
        with pytest.raises(LLMError, match=r"no LLM slot came free within 0.1s: 1 calls are "
                                           r"in flight .*CHORDAL_LLM_MAX_CONCURRENCY=1"):
            make_limit(1).acquire(timeout_s=0.1)


def test_a_released_slot_is_free_at_once(make_limit):
    limit = make_limit(1)
    token = limit.acquire(timeout_s=1)
    assert limit.try_acquire() is None
    limit.release(token)
    assert limit.try_acquire() is not None


def test_a_slot_held_longer_than_its_lease_is_kept_by_renewal(make_limit):
    limit = make_limit(1, lease_s=0.3)
    with limit.slot(timeout_s=1):
        time.sleep(1.0)  # three leases long
        assert in_flight(limit) == 1 and limit.try_acquire() is None


def test_an_unrenewed_lease_expires_and_frees_its_slot(make_limit):
    limit = make_limit(1, lease_s=0.3)
    assert limit.try_acquire() is not None  # taken and never renewed nor released
    assert limit.try_acquire() is None
    assert limit.acquire(timeout_s=3) is not None


def test_a_crashed_workers_slot_frees_itself_when_its_lease_runs_out(make_limit, redis_server):
    limit = make_limit(1)
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, redis_server.url, limit.key],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        assert limit.try_acquire() is None
        os.kill(holder.pid, signal.SIGKILL)  # a worker dying mid-call never releases
        holder.wait(5)
        assert limit.acquire(timeout_s=5) is not None  # its 1 s lease ran out
    finally:
        if holder.poll() is None:
            os.kill(holder.pid, signal.SIGKILL)
            holder.wait(5)
