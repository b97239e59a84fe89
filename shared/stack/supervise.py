"""Keep a running Stack running: what `chordal up` does until Ctrl-C.

Consumes a started `Stack` and a `RunStore` on its Redis; produces, once a second, a
sweep of the queries past their deadline, and rides out what would otherwise end the
stack:

- **Redis unreachable** (a restart, a network blip, a wrong password after a config
  change): the workers are kept (Celery reconnects them by itself), the sweep is retried
  with backoff (1 s doubling to `MAX_BACKOFF_S`), the outage and its end are logged with
  how long it lasted;
- **the embedded Redis died** (killed, out of memory): it is started again on its own
  AOF in the same home, so queued tasks and run records come back; as the AOF may lack
  the last second of writes (acknowledgements among them), every message delivered
  before the restart and not acknowledged is given back at once (shared/broker/recovery.py),
  not after the visibility timeout; logged;
- **the local model server died** (`chordal up --local-llm`): it is started again on the
  same model and port, and logged;
- **a worker died**: it is started again with the same role, and logged.

Nothing here stops a worker; only Ctrl-C (or SIGTERM) does, through the Stack.
"""

from __future__ import annotations

import time
from typing import Callable

import redis

from shared.errors import StackError
from shared.broker.outage import REDIS_DOWN
from shared.stack.embedded import Stack
from shared.stack.process import ChildProcess
from shared.broker.recovery import restore_unacked_before
from shared.stack.workers import WorkerProcess, control_app
from shared.stores.runs import RunStore
from shared.access.urls import mask_url

SWEEP_EVERY_S = 1.0
MAX_BACKOFF_S = 10.0


class Supervisor:
    """`step()` once per loop turn; `say(text)` logs a line, `warn(text)` a problem."""

    def __init__(self, stack: Stack, store: RunStore, say: Callable[[str], None],
                 warn: Callable[[str], None]):
        self.stack, self.store, self.say, self.warn = stack, store, say, warn
        self.backoff = SWEEP_EVERY_S
        self.down_since: float | None = None

    def run(self) -> None:
        """Supervise until KeyboardInterrupt or SystemExit (the Stack's signal handlers)."""
        while True:
            time.sleep(self.step())

    def step(self) -> float:
        """One turn: Redis, the local model server, workers, sweep. Returns the seconds to
        wait before the next."""
        self._redis()
        self._restarted(self.stack.local_llm, "the local model server")
        self._workers()
        try:
            for qid in self.store.sweep_expired():
                self.warn(f"query {qid} passed its deadline: marked failed")
        except redis.RedisError as exc:
            if self.down_since is None:
                self.down_since = time.monotonic()
                self.warn(f"Redis does not answer ({type(exc).__name__}: {mask_url(str(exc))}); the workers "
                          "are kept and reconnect by themselves; retrying with backoff")
            self.backoff = min(self.backoff * 2, MAX_BACKOFF_S)
            return self.backoff
        if self.down_since is not None:
            self.say(f"Redis answers again after {time.monotonic() - self.down_since:.1f} s;"
                     " carrying on")
            self.down_since = None
        self.backoff = SWEEP_EVERY_S
        return self.backoff

    def _restarted(self, child: ChildProcess | None, what: str, on: str = "") -> bool:
        """Start `child` again (`on` what, for the log) if it died; whether it was. A
        failure is only warned of: the next turn tries again."""
        if child is None or child.alive:
            return False
        code = child.returncode
        started = time.monotonic()
        try:
            child.start()
        except StackError as exc:
            self.warn(f"{what} exited (code {code}) and could not be started again: {exc}; "
                      "trying again shortly")
            return False
        self.say(f"{what} exited (code {code}); started again{on} (pid {child.pid}) in "
                 f"{time.monotonic() - started:.1f} s")
        return True

    def _redis(self) -> None:
        if not self._restarted(self.stack.redis, "the embedded Redis", " on its AOF"):
            return
        try:
            app = control_app(self.stack.worker_url)
            try:
                with app.connection_for_write() as conn:
                    given = restore_unacked_before(conn.default_channel, time.time())
            finally:
                app.close()
        except REDIS_DOWN as exc:
            self.warn(f"could not give back the unacknowledged messages: {mask_url(str(exc))}")
            return
        if given:
            self.say(f"gave back {given} messages the crash may have left unacknowledged "
                     "(their tasks run again, as after any redelivery)")

    def _workers(self) -> None:
        for i, worker in enumerate(self.stack.workers):
            if worker.alive:
                continue
            fresh = WorkerProcess(worker.role, worker.settings, concurrency=worker.concurrency,
                                  pool=worker.pool, env=worker.extra_env, app=worker.app)
            fresh.start()
            self.stack.workers[i] = fresh
            self.warn(f"the {worker.role} worker {worker.name} exited (code "
                      f"{worker.returncode}); started {fresh.name} (pid {fresh.pid}); its "
                      f"log was {worker.log_path}")
