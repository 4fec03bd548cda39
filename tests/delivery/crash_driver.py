"""The delivery path of the daemon, as a process to kill: 50 jobs finish a run every second,
each result enqueued in the transaction that records the run, and an outbox worker sends.

Usage: ``python -m tests.delivery.crash_driver STATE_DIR URL [--drain]``. Prints ``ready`` once
the state is open. With ``--drain`` it starts no runs and exits once nothing is pending.
"""

from __future__ import annotations

import asyncio
import sys
import time

from reconciler.delivery.outbox import OutboxPolicy, OutboxWorker
from reconciler.delivery.plan import plan_deliveries
from reconciler.delivery.sender import Sender
from reconciler.executors.base import RunResult
from reconciler.executors.secrets import SecretResolver
from reconciler.model.job import ScheduledJob
from reconciler.model.state import RunFinish, RunRecord, RunStart
from reconciler.store import StateWriter
from tests.delivery.helpers import job

JOBS = 50
# Fast retries: the test kills the process every second or so, not every 5 s.
POLICY = OutboxPolicy(first_retry=0.2, max_retry_delay=1.0, concurrency=16)


def finish_second(writer: StateWriter, jobs: list[ScheduledJob], second: int) -> None:
    """Phase 1 for every job's run of ``second``, then phase 3 with its delivery: two
    transactions, so a kill between them leaves started runs that never finished."""
    pairs = [(spec, RunRecord(f"{spec.name}-{second}", f"occ-{spec.name}-{second}", spec.name,
                              float(second), float(second), float(second) + 0.5, "ok"))
             for spec in jobs]
    pairs = [(spec, r) for spec, r in pairs if writer.run(r.run_id) is None]  # same-second restart
    with writer.transaction() as tx:
        for _, r in pairs:
            tx.start_run(RunStart(r.run_id, r.job, r.occurrence_key, r.scheduled_at,
                                  r.started_at))
    with writer.transaction() as tx:
        for spec, r in pairs:
            plan = plan_deliveries(spec, {}, r, RunResult("ok", summary=r.run_id))
            tx.finish_run(RunFinish(r.run_id, r.job, float(second) + 0.5, "ok",
                                    delivery_status=plan.status, deliveries=plan.deliveries))


async def main(state: str, url: str, drain: bool) -> None:
    writer = StateWriter.open(state, now=time.time())
    sender = Sender(SecretResolver({}), timeout=2.0)
    worker = OutboxWorker(writer, sender, POLICY)
    jobs = [job(f"job-{n:02d}", delivery={"webhook": {"url": url}}) for n in range(JOBS)]
    print("ready", flush=True)
    last = None
    while True:
        second = int(time.time())
        if not drain and second != last:
            finish_second(writer, jobs, second)
            last = second
        due = await worker.run_once(time.time())
        if drain and due is None:
            break
        await asyncio.sleep(0.02)
    await sender.aclose()
    writer.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], "--drain" in sys.argv[3:]))
