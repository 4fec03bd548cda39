"""Schedule-math benchmark: our next-fire computation next to raw croniter, and a cold start.

    .venv/bin/python bench/schedule.py [--jobs 100000] [--rounds 5]

1. Microseconds per next-fire computation over a mix of expressions and zones, next to raw
   croniter in the same run: ``croniter(expr, aware_start).get_next(float)`` (what a caller
   without a cache does per computation) and ``get_next`` on a reused iterator (croniter's
   matching alone). Ours is measured at the core (``CronSchedule.next_after``) and through the
   facade the engine calls (``next_fire``, which adds the stagger). Best of ``--rounds``.
2. Cold start: empty caches, then the next fire of ``--jobs`` jobs (80% cron, hundreds of
   distinct expressions over seven zones; intervals; one-shots), as the engine does at startup.

Not part of the test suite; figures go to BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from croniter import croniter

from reconciler.core.cron import cron_schedule
from reconciler.core.cronexpr import parse_cron
from reconciler.core.schedule import ScheduleState, next_fire
from reconciler.core.zones import load_zone
from reconciler.model.schedule import Schedule

MIX = [
    ("*/5 * * * *", "UTC"),
    ("0 * * * *", "America/New_York"),
    ("30 2 * * *", "America/New_York"),
    ("0 17 * * 1-5", "Asia/Shanghai"),
    ("15 9 1 * *", "Europe/Berlin"),
    ("0 0 29 2 *", "UTC"),
    ("45 1 * * *", "Australia/Lord_Howe"),
    ("0 3 * * sun", "Pacific/Chatham"),
    ("0 9-17/2 * * mon-fri", "Asia/Kathmandu"),
    ("@daily", "Europe/Berlin"),
]
ZONES = sorted({zone for _, zone in MIX})
START = datetime(2024, 1, 1, tzinfo=UTC).timestamp()
SPAN = 3 * 365 * 86_400
SAMPLES = 2_000


def _starts(count: int, seed: int = 7) -> list[int]:
    chooser = random.Random(seed)
    return [int(START) + chooser.randrange(SPAN) for _ in range(count)]


def _best_us(action: Callable[[], None], calls: int, rounds: int) -> float:
    action()  # warm-up: caches, zone files, branch predictors
    best = float("inf")
    for _ in range(rounds):
        began = time.perf_counter()
        action()
        best = min(best, time.perf_counter() - began)
    return best / calls * 1e6


def per_call(rounds: int) -> None:
    starts = _starts(SAMPLES)
    print(f"{'expression':<22} {'zone':<20} {'ours':>7} {'facade':>7} {'croniter':>9} "
          f"{'reused':>7} {'ratio':>6} {'vs reused':>9}")
    totals = [0.0, 0.0, 0.0, 0.0]
    for expression, zone_name in MIX:
        figures = _measure(expression, zone_name, starts, rounds)
        totals = [total + figure for total, figure in zip(totals, figures, strict=True)]
        print(_row(expression, zone_name, figures))
    print(_row("mean of the mix", "", [total / len(MIX) for total in totals]))
    print("µs per next fire (best of rounds); ratio = ours / croniter (construct + get_next); "
          "vs reused = ours / get_next on one reused croniter iterator")


def _measure(expression: str, zone_name: str, starts: list[int], rounds: int) -> list[float]:
    zone = ZoneInfo(zone_name)
    cron = cron_schedule(expression, zone_name)
    schedule = Schedule.model_validate({"cron": expression, "timezone": zone_name})
    state = ScheduleState()
    aware = [datetime.fromtimestamp(start, zone) for start in starts]
    iterator = croniter(expression, aware[0])

    def ours() -> None:
        for start in starts:
            cron.next_after(start)

    def facade() -> None:
        for start in starts:
            next_fire("bench-job", schedule, state, start)

    def raw() -> None:
        for moment in aware:
            croniter(expression, moment).get_next(float)

    def reused() -> None:
        for moment in aware:
            iterator.set_current(moment, force=True)
            iterator.get_next(float)

    return [_best_us(action, len(starts), rounds) for action in (ours, facade, raw, reused)]


def _row(expression: str, zone: str, figures: list[float]) -> str:
    ours, facade, raw, reused = figures
    return (f"{expression:<22} {zone:<20} {ours:7.1f} {facade:7.1f} {raw:9.1f} {reused:7.1f} "
            f"{ours / raw:6.2f} {ours / reused:9.2f}")


def _jobs(count: int) -> list[tuple[str, Schedule]]:
    jobs = []
    for index in range(count):
        kind = index % 10
        if kind < 8:
            minute, hour = index % 60, (index // 60) % 24
            spec = {"cron": f"{minute} {hour} * * *" if kind % 2 else f"{minute} * * * *",
                    "timezone": ZONES[index % len(ZONES)]}
        elif kind == 8:
            spec = {"every": f"{5 + index % 55}m"}
        else:
            spec = {"at": f"2027-0{1 + index % 9}-15T09:00:00+08:00"}
        jobs.append((f"job-{index:06d}", Schedule.model_validate(spec)))
    return jobs


def cold_start(count: int) -> None:
    began = time.perf_counter()
    jobs = _jobs(count)
    built = time.perf_counter() - began
    for cache in (parse_cron, cron_schedule, load_zone):
        cache.cache_clear()
    state = ScheduleState(anchor=START)
    began = time.perf_counter()
    fires = [next_fire(name, schedule, state, START + 3600.5) for name, schedule in jobs]
    elapsed = time.perf_counter() - began
    distinct = len({s.cron for _, s in jobs if s.cron is not None})
    print(f"cold start: next fire of {count:,} jobs ({distinct:,} distinct cron expressions, "
          f"{len(ZONES)} zones): {elapsed:.2f} s ({elapsed / count * 1e6:.1f} µs per job; "
          f"{sum(fire is not None for fire in fires):,} fires); building the {count:,} "
          f"Schedule models beforehand took {built:.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    per_call(args.rounds)
    print()
    cold_start(args.jobs)


if __name__ == "__main__":
    main()
