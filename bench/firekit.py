"""The measuring tape of the firing scenarios, shared by every contender's child process.

A child records ``(scheduled, started)`` for every run *inside the job body* (the no-op
executor or the APScheduler job function), so lateness includes everything a scheduler does
between the due instant and handing the run to its executor: deciding, persisting, dispatching.

The measured window starts at the first whole second at least one second after the scheduler
is up (its first fires and any start-up burst are warm-up) and lasts ``seconds``:

- fires/s: runs that *started* inside the window, per second (throughput);
- keep-up: runs *scheduled* inside the window that ran at all, over jobs x seconds;
- lateness p50/p95/p99/max: over the runs scheduled inside the window;
- CPU per 1,000 runs: process CPU time across the window over the runs started in it.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from pathlib import Path
from typing import Any

from bench.harness import percentiles

# A whole second in the past: every contender's grid falls on whole seconds.
ANCHOR = 1_767_225_600.0  # 2026-01-01T00:00:00Z
ANCHOR_ISO = "2026-01-01T00:00:00Z"
DRAIN = 1.5  # seconds after the window, so late runs of its last slots still count
LEAD = 1.0  # seconds of warm-up at least, before the window (the smoke test sets 0)


class Window:
    """The measured window; ``await window.run()`` returns once it is over (plus the drain)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.t0 = math.ceil(time.time()) + LEAD
        self.cpu = 0.0

    @property
    def t1(self) -> float:
        return self.t0 + self.seconds

    async def run(self) -> None:
        # The CPU samples are taken by this coroutine: on a saturated loop they come a little
        # late, which shifts the window, not its length.
        await asyncio.sleep(max(0.0, self.t0 - time.time()))
        begin = time.process_time()
        await asyncio.sleep(max(0.0, self.t1 - time.time()))
        self.cpu = time.process_time() - begin
        await asyncio.sleep(DRAIN)


def summarise(contender: str, jobs: int, window: Window, samples: list[tuple[float, float]],
              extra: dict[str, Any], samples_path: str | None) -> dict[str, Any]:
    """The child's result from its ``(scheduled, started)`` samples."""
    t0, t1 = window.t0, window.t1
    in_window = [start - due for due, start in samples if t0 <= due < t1]
    started = sum(1 for _, start in samples if t0 <= start < t1)
    expected = jobs * window.seconds
    lateness_ms = [1000 * late for late in in_window]
    result: dict[str, Any] = {
        "contender": contender, "jobs": jobs, "seconds": window.seconds,
        "expected": expected, "runs_in_window": len(in_window), "started_in_window": started,
        "fires_per_s": started / window.seconds,
        "keep_up": len(in_window) / expected if expected else 0.0,
        "cpu_s": window.cpu,
        "cpu_per_1k": 1000 * window.cpu / started if started else float("inf"),
        **percentiles(lateness_ms), **extra,
    }
    if samples_path:
        Path(samples_path).write_text(json.dumps([round(v, 3) for v in lateness_ms]))
    return result
