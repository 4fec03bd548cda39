"""The reconciler side of fire-1k, fire-10k and cron-1k, run as a child process.

The real engine on the system clock, with the durable store (``synchronous=FULL``) in a fresh
state directory on the same disk as the repository: every run's start and finish is committed
before the run is considered started or finished. The executor is a no-op registered by the
harness; it notes when its body runs, which is where lateness is measured.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from typing import Any

from bench.firekit import ANCHOR_ISO, Window, summarise
from bench.harness import percentiles
from reconciler import collector
from reconciler.clock import SystemClock
from reconciler.core.jobview import DesiredJob
from reconciler.executors.base import RunContext, RunResult
from reconciler.model.job import ScheduledJob
from reconciler.runtime.service import Service, ServiceConfig
from reconciler.runtime.settings import Settings
from reconciler.store import StateWriter

_OK = RunResult("ok")  # one result for every run: the no-op builds nothing


class StampingNoOp:
    """Does nothing, but notes (scheduled, started) for every run."""

    def __init__(self) -> None:
        self.samples: list[tuple[float, float]] = []
        self.decided: list[tuple[float, float]] = []  # (scheduled, the run record's start)

    async def execute(self, context: RunContext) -> RunResult:
        if context.scheduled_at is not None:
            self.samples.append((context.scheduled_at, time.time()))
            self.decided.append((context.scheduled_at, context.started_at))
        return _OK


class CountingSink:
    """Keeps nothing but counts (a collecting sink would grow the RSS being measured)."""

    def __init__(self) -> None:
        self.counts = {"started": 0, "finished": 0, "skipped": 0, "alerts": 0}
        self.skipped_slots: list[float] = []  # nominal instants of skipped slots

    def reconciled(self, changes: Any, at: float) -> None:
        pass

    def run_started(self, run: Any) -> None:
        self.counts["started"] += 1

    def run_finished(self, run: Any) -> None:
        self.counts["finished"] += 1

    def skipped(self, skip: Any) -> None:
        self.counts["skipped"] += 1
        self.skipped_slots.append(skip.scheduled_at)

    def alert(self, alert: Any) -> None:
        self.counts["alerts"] += 1

    def delivery(self, record: Any) -> None:
        pass


def schedule_of(kind: str) -> dict[str, Any]:
    if kind == "cron":
        # Per-second cron through the real cron path (sixth field opted in, no stagger).
        return {"cron": "* * * * * *", "withSeconds": True}
    return {"every": "1s", "anchor": ANCHOR_ISO}


def desired_jobs(count: int, kind: str) -> dict[str, DesiredJob]:
    jobs: dict[str, DesiredJob] = {}
    for index in range(count):
        spec = {
            "apiVersion": "reconciler.dev/v1", "kind": "ScheduledJob",
            "metadata": {"name": f"job-{index:05d}"},
            "spec": {"schedule": schedule_of(kind), "run": {"command": ["true"]}},
        }
        job = DesiredJob.of(ScheduledJob.model_validate(spec))
        jobs[job.name] = job
    return jobs


async def _fire(count: int, seconds: float, kind: str, state: str
                ) -> tuple[Window, StampingNoOp, CountingSink]:
    clock = SystemClock()
    desired = desired_jobs(count, kind)
    executor, sink = StampingNoOp(), CountingSink()
    with StateWriter.open(state, now=clock.now(), durable=True) as writer:
        # No concurrency cap below the job count: the scheduler, not a limit, is measured.
        config = ServiceConfig(max_concurrent_runs=2 * count,
                               arm_ahead=Settings().arm_ahead.total_seconds())  # the daemon's
        service = Service(writer, clock, executor, config, sink)
        await service.start(desired)
        collector.tune()  # as the daemon does after its start
        collector.settle()
        stop = asyncio.Event()
        timer = asyncio.ensure_future(service.run_forever(stop))
        window = Window(seconds)
        await window.run()
        stop.set()
        await timer
        await service.shutdown(5)
    return window, executor, sink


def child(count: int, seconds: float, kind: str, samples_path: str | None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-reconciler-") as state:
        window, executor, sink = asyncio.run(_fire(count, seconds, kind, state))
    # The record's started_at is the slot for an armed run and the tick's clock reading for a
    # run decided at or after its slot: "decision lateness", as the engine's own metrics
    # report it, shown beside the lateness measured in the run body (what the peers are
    # measured by).
    decided = percentiles([1000 * (start - due) for due, start in executor.decided
                           if window.t0 <= due < window.t1])
    skipped = sum(1 for due in sink.skipped_slots if window.t0 <= due < window.t1)
    extra = {"skipped": sink.counts["skipped"], "missed": skipped,
             **{f"decision_{key}": value for key, value in decided.items()}}
    return summarise("reconciler", count, window, executor.samples, extra, samples_path)
