"""start-100k's fixture: N job specs in YAML files, the state they leave behind, a peer store.

The same N jobs three ways, written once per harness run (not measured):

- ``specs/``: multi-document YAML files of 1,000 jobs each, as a repository would hold them:
  80% cron (eight expressions over five zones without DST surprises, so the load reports no
  warnings), 20% intervals (12 h and 6 h);
- ``state/``: the reconciler state a daemon left after reconciling them, with one run of
  history per job, and the spec parse cache (``spec-cache.json``) its load wrote;
- ``aps.sqlite``: an APScheduler 3 ``SQLAlchemyJobStore`` holding the equivalent jobs.
"""

from __future__ import annotations

import asyncio
import pickle
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

# Daily-ish and hourly-at-most schedules: few jobs come due between writing the fixture and
# the starts a few minutes later, so a start measures loading, not a burst of catch-up work
# (which the first runs of this harness showed swamping APScheduler's first pass).
CRONS = [("0 4 * * *", "UTC"), ("20 3 * * *", "UTC"), ("7 */6 * * *", "UTC"),
         ("30 2 * * *", "Asia/Shanghai"), ("0 17 * * mon-fri", "Asia/Shanghai"),
         ("15 9 1 * *", "Asia/Tokyo"), ("45 1 * * *", "Asia/Kolkata"),
         ("0 9-17/2 * * mon-fri", "Asia/Kathmandu")]
ANCHOR_ISO = "2026-01-01T00:00:00Z"
PER_FILE = 1_000


def schedule(index: int) -> tuple[str, Any, str]:
    """(kind, cron expression or interval minutes, zone) of job ``index``."""
    if index % 10 == 0:
        return "every", 12 * 60, "UTC"
    if index % 10 == 1:
        return "every", 6 * 60, "UTC"
    expr, zone = CRONS[index % len(CRONS)]
    return "cron", expr, zone


def _document(index: int) -> str:
    kind, value, zone = schedule(index)
    if kind == "every":
        when = f"every: {value}m\n    anchor: \"{ANCHOR_ISO}\""
    else:
        when = f"cron: \"{value}\"\n    timezone: {zone}"
    return (f"apiVersion: reconciler.dev/v1\nkind: ScheduledJob\nmetadata:\n"
            f"  name: job-{index:06d}\n  labels: {{team: t{index % 7}}}\nspec:\n"
            f"  description: generated job {index}\n  schedule:\n    {when}\n"
            f"  run:\n    command: [\"true\"]\n  timeout: 5m\n")


def write_specs(root: Path, jobs: int) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for first in range(0, jobs, PER_FILE):
        docs = [_document(i) for i in range(first, min(jobs, first + PER_FILE))]
        (root / f"jobs-{first // PER_FILE:04d}.yaml").write_text("---\n".join(docs))


async def _reconcile(specs: Path, state: Path) -> None:
    from bench.fire_reconciler import CountingSink, StampingNoOp
    from bench.store import RunIds
    from reconciler.clock import SystemClock
    from reconciler.runtime.service import Service
    from reconciler.sources.directory import DirectorySource
    from reconciler.sources.speccache import CACHE_FILE
    from reconciler.store import StateWriter

    clock = SystemClock()
    # In the daemon's order: the state directory exists before the first load, which leaves
    # the spec parse cache in it as a daemon run would.
    with StateWriter.open(state, now=clock.now()) as writer:
        source = DirectorySource(specs, cache_path=state / CACHE_FILE)
        desired = source.load(clock.now()).desired
        await Service(writer, clock, StampingNoOp(), sink=CountingSink()).start(desired)
        ids, names = RunIds(), sorted(desired)
        for first in range(0, len(names), 10_000):  # one run of history per job
            starts = [ids.start(name) for name in names[first:first + 10_000]]
            writer.start_runs(starts)
            writer.finish_runs([ids.finish(start) for start in starts])


def aps_trigger(index: int) -> Any:
    from apscheduler.triggers.cron import CronTrigger
    from apscheduler.triggers.interval import IntervalTrigger

    kind, value, zone = schedule(index)
    if kind == "every":
        return IntervalTrigger(minutes=value, start_date=datetime(2026, 1, 1, tzinfo=UTC),
                               timezone=UTC)
    return CronTrigger.from_crontab(value, timezone=zone)


def seed_aps(path: Path, jobs: int) -> None:
    """The peer's store, written in bulk the way its ``add_job`` would write each row."""
    from apscheduler.job import Job
    from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
    from apscheduler.schedulers.asyncio import AsyncIOScheduler
    from apscheduler.util import datetime_to_utc_timestamp

    scheduler = AsyncIOScheduler(timezone=UTC)
    store = SQLAlchemyJobStore(url=f"sqlite:///{path}")
    store.start(scheduler, "default")
    now = datetime.now(UTC)
    rows = []
    for index in range(jobs):
        trigger = aps_trigger(index)
        first = trigger.get_next_fire_time(None, now) or now + timedelta(days=1)
        job = Job(scheduler, id=f"job-{index:06d}", func="bench.fire_aps:noop", trigger=trigger,
                  executor="default", args=(), kwargs={}, name=f"job-{index:06d}",
                  misfire_grace_time=1, coalesce=True, max_instances=1, next_run_time=first)
        rows.append({"id": job.id, "next_run_time": datetime_to_utc_timestamp(first),
                     "job_state": pickle.dumps(job.__getstate__(), store.pickle_protocol)})
    with store.engine.begin() as conn:
        for first_row in range(0, len(rows), 10_000):
            conn.execute(store.jobs_t.insert(), rows[first_row:first_row + 10_000])
    store.shutdown()


def seed(root: Path, jobs: int, peers: bool) -> dict[str, float]:
    timings: dict[str, float] = {}
    begin = time.perf_counter()
    write_specs(root / "specs", jobs)
    timings["specs_s"] = time.perf_counter() - begin
    begin = time.perf_counter()
    asyncio.run(_reconcile(root / "specs", root / "state"))
    timings["state_s"] = time.perf_counter() - begin
    if peers:
        begin = time.perf_counter()
        seed_aps(root / "aps.sqlite", jobs)
        timings["aps_s"] = time.perf_counter() - begin
    return timings
