"""The engine's own overhead, two ways (issue 5):

1. virtual clock: 10,000 interval jobs every 1 s with a no-op executor; runs per CPU second;
2. real clock: 1,000 jobs every second, every run durably recorded (synchronous=FULL);
   scheduling lateness (actual start minus effective fire) p50/p99/max.

    .venv/bin/python -m bench.engine [--virtual-jobs 10000] [--virtual-seconds 30]
                                     [--real-jobs 1000] [--real-seconds 20]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from typing import Any

from reconciler.clock import SystemClock
from reconciler.core.jobview import DesiredJob
from reconciler.executors.base import RunContext, RunResult
from reconciler.model.job import ScheduledJob
from reconciler.runtime.events import CollectingSink
from reconciler.runtime.service import Service, ServiceConfig
from reconciler.runtime.virtual import LoopClock, run_virtual
from reconciler.store import StateWriter


class NoOp:
    async def execute(self, context: RunContext) -> RunResult:
        return RunResult("ok")


def interval_jobs(count: int, anchor: str) -> dict[str, DesiredJob]:
    jobs: dict[str, DesiredJob] = {}
    for index in range(count):
        spec: dict[str, Any] = {
            "apiVersion": "reconciler.dev/v1", "kind": "ScheduledJob",
            "metadata": {"name": f"job-{index:05d}"},
            "spec": {"schedule": {"every": "1s", "anchor": anchor},
                     "run": {"command": ["true"]}, "catchUp": {"policy": "latest"}},
        }
        job = DesiredJob.of(ScheduledJob.model_validate(spec))
        jobs[job.name] = job
    return jobs


def virtual(jobs: int, seconds: int) -> None:
    start = 1_767_600_000.0  # 2026-01-05T08:00:00Z
    desired = interval_jobs(jobs, "2026-01-05T08:00:00Z")
    sink = CollectingSink()

    async def scenario() -> float:
        with tempfile.TemporaryDirectory() as state, \
                StateWriter.open(state, now=start, durable=False) as writer:
            service = Service(writer, LoopClock(asyncio.get_running_loop(), start), NoOp(),
                              ServiceConfig(max_concurrent_runs=jobs), sink)
            await service.start(desired)
            stop = asyncio.Event()
            cpu = time.process_time()
            timer = asyncio.ensure_future(service.run_forever(stop))
            await asyncio.sleep(seconds)
            stop.set()
            await timer
            await service.shutdown(5)
            return time.process_time() - cpu

    cpu = run_virtual(scenario())
    runs = len(sink.finished)
    print(f"virtual: {jobs} jobs every 1 s for {seconds} s: {runs} runs in {cpu:.2f} CPU s "
          f"= {runs / cpu:,.0f} runs per CPU second (expected runs {jobs * seconds:,})")


def real(jobs: int, seconds: int) -> None:
    clock = SystemClock()
    start = float(int(clock.now()) + 2)
    anchor = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(start))
    desired = interval_jobs(jobs, anchor)
    sink = CollectingSink()

    async def scenario() -> None:
        with tempfile.TemporaryDirectory() as state, \
                StateWriter.open(state, now=clock.now()) as writer:
            service = Service(writer, clock, NoOp(), ServiceConfig(max_concurrent_runs=jobs),
                              sink)
            await service.start(desired)
            stop = asyncio.Event()
            timer = asyncio.ensure_future(service.run_forever(stop))
            await asyncio.sleep(start + seconds + 0.5 - clock.now())
            stop.set()
            await timer
            await service.shutdown(5)

    cpu = time.process_time()
    asyncio.run(scenario())
    cpu = time.process_time() - cpu
    lateness = sorted(run.started_at - run.scheduled_at for run in sink.started
                      if run.scheduled_at is not None)
    expected = jobs * seconds
    def pct(p: float) -> float:
        return lateness[min(len(lateness) - 1, int(p * len(lateness)))] * 1000
    print(f"real: {jobs} jobs every 1 s for {seconds} s, durable: {len(lateness):,} runs "
          f"({100 * len(lateness) / expected:.1f}% of {expected:,} expected), "
          f"{len(sink.skips):,} skipped; lateness p50 {pct(0.5):.0f} ms, "
          f"p99 {pct(0.99):.0f} ms, max {lateness[-1] * 1000:.0f} ms; "
          f"CPU {cpu:.1f} s; median run record {statistics.median(lateness) * 1000:.0f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--virtual-jobs", type=int, default=10_000)
    parser.add_argument("--virtual-seconds", type=int, default=30)
    parser.add_argument("--real-jobs", type=int, default=1_000)
    parser.add_argument("--real-seconds", type=int, default=20)
    args = parser.parse_args()
    virtual(args.virtual_jobs, args.virtual_seconds)
    real(args.real_jobs, args.real_seconds)


if __name__ == "__main__":
    main()
