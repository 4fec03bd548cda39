"""The APScheduler 3 side of fire-1k, fire-10k and cron-1k, run as a child process.

``AsyncIOScheduler`` with its defaults as a user gets them (coalesce on, one instance per job,
a misfire grace time of 1 s: a run more than 1 s late is dropped and counted as missed) and the
``AsyncIOExecutor``; the job is a coroutine that returns the instant its body ran.

- ``aps-memory``: ``MemoryJobStore``;
- ``aps-sqlite``: ``SQLAlchemyJobStore`` on a SQLite file (SQLite's own defaults: rollback
  journal, ``synchronous=FULL``), which persists each job's next run time after every fire.
  Its jobs are seeded in one transaction before the scheduler starts (adding 10,000 jobs one
  by one costs 10,000 transactions, which is set-up, not the firing being measured).
"""

from __future__ import annotations

import asyncio
import pickle
import tempfile
import time
from datetime import UTC, datetime
from typing import Any

from apscheduler.events import EVENT_JOB_EXECUTED, EVENT_JOB_MAX_INSTANCES, EVENT_JOB_MISSED
from apscheduler.job import Job
from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger
from apscheduler.util import datetime_to_utc_timestamp

from bench.firekit import ANCHOR, Window, summarise

FUNC = "bench.fire_aps:noop"


async def noop() -> float:
    return time.time()


def trigger_of(kind: str) -> BaseTrigger:
    if kind == "cron":
        return CronTrigger(second="*", timezone=UTC)
    return IntervalTrigger(seconds=1, start_date=datetime.fromtimestamp(ANCHOR, UTC),
                           timezone=UTC)


def seed_sqlite(url: str, scheduler: AsyncIOScheduler, count: int, kind: str) -> None:
    """Write ``count`` jobs into a SQLAlchemy job store in one transaction, as the store would."""
    store = SQLAlchemyJobStore(url=url)
    store.start(scheduler, "default")
    now = datetime.now(UTC)
    rows = []
    for index in range(count):
        trigger = trigger_of(kind)
        first = trigger.get_next_fire_time(None, now)
        job = Job(scheduler, id=f"job-{index:06d}", func=FUNC, trigger=trigger,
                  executor="default", args=(), kwargs={}, name=f"job-{index:06d}",
                  misfire_grace_time=1, coalesce=True, max_instances=1, next_run_time=first)
        rows.append({"id": job.id, "next_run_time": datetime_to_utc_timestamp(first),
                     "job_state": pickle.dumps(job.__getstate__(), store.pickle_protocol)})
    with store.engine.begin() as conn:
        conn.execute(store.jobs_t.insert(), rows)
    store.shutdown()


class Probe:
    def __init__(self) -> None:
        self.samples: list[tuple[float, float]] = []
        self.missed: list[float] = []  # scheduled instants of runs dropped as missed
        self.max_instances = 0

    def __call__(self, event: Any) -> None:
        if event.code == EVENT_JOB_EXECUTED:
            self.samples.append((event.scheduled_run_time.timestamp(), event.retval))
        elif event.code == EVENT_JOB_MISSED:
            self.missed.append(event.scheduled_run_time.timestamp())
        else:
            self.max_instances += 1


async def _fire(contender: str, count: int, seconds: float, kind: str, scratch: str
                ) -> tuple[Window, Probe]:
    scheduler = AsyncIOScheduler(timezone=UTC)
    probe = Probe()
    scheduler.add_listener(probe, EVENT_JOB_EXECUTED | EVENT_JOB_MISSED
                           | EVENT_JOB_MAX_INSTANCES)
    if contender == "aps-sqlite":
        url = f"sqlite:///{scratch}/jobs.sqlite"
        seed_sqlite(url, scheduler, count, kind)
        scheduler.add_jobstore(SQLAlchemyJobStore(url=url), "default")
    else:
        for index in range(count):
            scheduler.add_job(noop, trigger_of(kind), id=f"job-{index:06d}")
    scheduler.start()
    window = Window(seconds)
    await window.run()
    # Pause first and let dispatched runs end, so shutdown does not cancel them mid-flight.
    scheduler.pause()
    await asyncio.sleep(0.2)
    scheduler.shutdown(wait=False)
    await asyncio.sleep(0)
    return window, probe


def child(contender: str, count: int, seconds: float, kind: str, samples_path: str | None
          ) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-aps-") as scratch:
        window, probe = asyncio.run(_fire(contender, count, seconds, kind, scratch))
    # Dropped runs still cost the store a write: "handled" counts them with the executed ones.
    missed = sum(1 for due in probe.missed if window.t0 <= due < window.t1)
    handled = sum(1 for due, _ in probe.samples if window.t0 <= due < window.t1) + missed
    extra = {"missed": missed, "skipped": probe.max_instances,
             "handled_per_s": handled / window.seconds}
    return summarise(contender, count, window, probe.samples, extra, samples_path)
