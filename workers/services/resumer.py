"""ReAct resumer, a worker bootstep of every worker that consumes the `react` queue:
every `CHORDAL_REACT_LEASE_S / 2` seconds, send again the loops whose iteration lease
expired, i.e. whose worker died mid-iteration (shared/react/leases.py)."""

from __future__ import annotations

from shared import naming
from shared.react.leases import resume_stalled
from workers.app import log, run_store, settings
from workers.react import leases, send
from workers.services.loop import LoopStep


class ReactResumer(LoopStep):
    label = "ReAct resumer"
    thread = "react-resumer"
    wait_first = True

    def include_if(self, w) -> bool:
        return naming.QUEUE_REACT in (w.app.amqp.queues.consume_from or {})

    def interval_s(self) -> float:
        return settings().react_lease_s / 2

    def tick(self) -> None:
        for query_id, n in resume_stalled(run_store(), leases(), send,
                                          settings().react_max_iterations):
            log.warning("ReAct loop of %s stalled (its worker died?): sent iteration %s "
                        "again", query_id, n)
