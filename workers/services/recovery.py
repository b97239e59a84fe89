"""Dead-worker recovery, a consumer bootstep: every `CHORDAL_WORKER_DEAD_AFTER_S / 5`
seconds, give back the messages of every worker whose heartbeat is that old
(shared/broker/recovery.py `recover_dead_workers`; one transaction per message, so many workers
recovering at once give each back once).

It waits until this worker has beaten steadily for a whole `dead_after_s` (the
heartbeat's `steady_for`): after a Redis outage every live worker's heartbeat is stale,
and each gets that long to beat again.
"""

from __future__ import annotations

from shared.broker.recovery import recover_dead_workers
from workers.app import log
from workers.services.heartbeat import Heartbeat
from workers.services.loop import LifelongStep


class Recovery(LifelongStep):
    label = "recovery"
    thread = "chordal-recovery"
    requires = (Heartbeat,)

    def __init__(self, c, **kwargs):
        super().__init__(c, **kwargs)
        self.app, self.conn = c.app, None

    def create(self, c):
        self.heartbeat = c.blueprint.steps[Heartbeat.name]
        return super().create(c)

    def tick(self) -> None:
        dead_after_s = self.heartbeat.presence.dead_after_s
        if self.heartbeat.steady_for() < dead_after_s:
            return
        try:
            self.conn = self.conn or self.app.connection_for_write()
            for held in recover_dead_workers(self.conn.default_channel, dead_after_s):
                log.warning("worker %s died holding %s %s: gave it back to queue %s",
                            held.instance, held.task, held.task_id, held.queue)
        except Exception:  # a fresh connection next time
            self._release()
            raise

    def shutdown(self, c) -> None:
        super().shutdown(c)
        self._release()

    def _release(self) -> None:
        conn, self.conn = self.conn, None
        if conn is not None:
            conn.release()
