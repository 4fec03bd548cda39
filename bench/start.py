"""start-100k: a cold start over 100,000 job specs with existing state, reconciler vs APScheduler 3.

    .venv/bin/python -m bench.start                       # 100,000 jobs, 3 repetitions
    .venv/bin/python -m bench.start --jobs 2000 --reps 1  # a quick look

Each repetition starts from a fresh copy of the same fixture (``bench/start_seed.py``), in a
fresh interpreter. The clock starts when the parent spawns the child, so interpreter start-up
and imports count. *First tick* is the end of the first scheduling pass:

- reconciler: what ``reconciler run`` does before its timer loop: read and validate every spec
  file (``DirectorySource.load``, with the parse cache the previous run left in the state
  directory, so no unchanged file is parsed again), open the state (lock, migrations check),
  ``Service.start`` (load every job's state, reconcile, plan the catch-up), then one ``tick``;
- reconciler-cold: the same with the parse cache deleted, as on the first start after an
  upgrade that changes the cache format: every file is parsed (and the cache written);
- APScheduler: ``AsyncIOScheduler`` over a ``SQLAlchemyJobStore`` on the seeded SQLite file,
  ``start()``, until its first ``_process_jobs`` pass returns. APScheduler loads no job up front
  (it asks the store for due jobs), and it has no spec files to read.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench.harness import Rounds, alternate, emit, peers_available, run_child


def reconciler_child(root: Path, spawned: float, contender: str = "reconciler"
                     ) -> dict[str, Any]:
    marks = {"spawned": spawned, "imported": time.time()}
    from bench.fire_reconciler import CountingSink, StampingNoOp
    from reconciler.clock import SystemClock
    from reconciler.runtime.service import Service
    from reconciler.sources.directory import DirectorySource
    from reconciler.sources.speccache import CACHE_FILE
    from reconciler.store import StateWriter

    clock = SystemClock()
    marks["imported"] = time.time()
    source = DirectorySource(root / "specs", cache_path=root / "state" / CACHE_FILE)
    snapshot = source.load_at_start(clock.now())  # as the daemon's first load
    marks["loaded"] = time.time()
    sink = CountingSink()

    async def go() -> None:
        with StateWriter.open(root / "state", now=clock.now()) as writer:
            marks["opened"] = time.time()
            service = Service(writer, clock, StampingNoOp(), sink=sink)
            await service.start(snapshot.desired)
            marks["started"] = time.time()
            await service.tick()
            marks["ticked"] = time.time()
            await service.shutdown(1)

    asyncio.run(go())
    return {"contender": contender, "jobs": len(snapshot.desired),
            "first_tick_s": marks["ticked"] - spawned, "runs_at_first_tick":
            sink.counts["started"], "skips_at_first_tick": sink.counts["skipped"],
            **_phases(marks, ["spawned", "imported", "loaded", "opened", "started", "ticked"])}


def aps_child(root: Path, spawned: float) -> dict[str, Any]:
    marks = {"spawned": spawned}
    from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
    from apscheduler.schedulers.asyncio import AsyncIOScheduler

    marks["imported"] = time.time()

    class Timed(AsyncIOScheduler):
        done: asyncio.Event | None = None

        def _process_jobs(self) -> Any:
            wait = super()._process_jobs()
            if self.done is not None and not self.done.is_set():
                marks["ticked"] = time.time()
                self.done.set()
            return wait

    async def go() -> None:
        store = SQLAlchemyJobStore(url=f"sqlite:///{root / 'aps.sqlite'}")
        scheduler = Timed(jobstores={"default": store}, timezone="UTC")
        scheduler.done = asyncio.Event()
        scheduler.start()
        marks["started"] = time.time()
        await scheduler.done.wait()
        scheduler.pause()
        await asyncio.sleep(0.2)
        scheduler.shutdown(wait=False)
        await asyncio.sleep(0)

    asyncio.run(go())
    return {"contender": "aps-sqlite", "first_tick_s": marks["ticked"] - spawned,
            **_phases(marks, ["spawned", "imported", "started", "ticked"])}


def _phases(marks: dict[str, float], order: list[str]) -> dict[str, float]:
    return {f"{later}_s": marks[later] - marks[earlier]
            for earlier, later in itertools.pairwise(order)}


def default_contenders(peers: bool) -> list[str]:
    return ["reconciler", "reconciler-cold", *(["aps-sqlite"] if peers else [])]


def run(jobs: int, reps: int, contenders: Sequence[str],
        log: Callable[[str], None] | None = None) -> tuple[Rounds, dict[str, float]]:
    from bench.start_seed import seed
    from reconciler.sources.speccache import CACHE_FILE

    with tempfile.TemporaryDirectory(prefix="bench-start-") as scratch:
        fixture = Path(scratch) / "fixture"
        seeded = seed(fixture, jobs, peers="aps-sqlite" in contenders)
        if log is not None:
            log(f"  seeded {jobs:,} jobs: " + ", ".join(f"{k} {v:.1f}" for k, v in
                                                        seeded.items()))

        def one(name: str, rep: int) -> dict[str, Any]:
            copy = Path(scratch) / f"{name}-{rep}"
            # Each start gets an untouched copy: the previous one moved the state on.
            shutil.copytree(fixture, copy, ignore=shutil.ignore_patterns("*.lock"))
            if name == "reconciler-cold":
                (copy / "state" / CACHE_FILE).unlink()
            try:
                args = ["--child", name, "--dir", str(copy), "--spawned", repr(time.time())]
                return run_child("bench.start", args, timeout=600)
            finally:
                shutil.rmtree(copy, ignore_errors=True)

        return alternate(contenders, reps, one, log), seeded


def markdown(rounds: Rounds, jobs: int, command: str) -> list[str]:
    lines = [f"Command: `{command}` ({jobs:,} jobs, {len(rounds.runs[rounds.contenders[0]])} "
             "repetitions, medians).", "",
             "| contender | first tick | peak RSS | phases (median s) |", "|---|---:|---:|---|"]
    for name in rounds.contenders:
        phases = [k for k in rounds.runs[name][0] if k.endswith("_s") and k != "first_tick_s"]
        text = ", ".join(f"{k[:-2]} {rounds.median(name, k):.2f}" for k in phases)
        lines.append(f"| {name} | {rounds.median(name, 'first_tick_s'):.2f} s "
                     f"| {rounds.median(name, 'rss_mib'):,.0f} MiB | {text} |")
    if "aps-sqlite" in rounds.contenders and "reconciler" in rounds.contenders:
        ratios = rounds.ratios("first_tick_s", "reconciler", "aps-sqlite")
        lines.append("- reconciler / aps-sqlite first tick per repetition: "
                     + ", ".join(f"{x:.1f}x" for x in ratios) + ".")
    if "reconciler-cold" in rounds.contenders:
        lines.append("- reconciler-cold: the same start with `state/spec-cache.json` deleted, "
                     "so every spec file is parsed again (a first start, or one after an "
                     "upgrade that invalidates the parse cache).")
    if "aps-sqlite" in rounds.contenders:
        lines.append("- APScheduler loads no job up front: its first pass asks the store for "
                     "due jobs only. A job that came due since the fixture was written costs it "
                     "an update in its own transaction (the fixture's schedules make those "
                     "rare; see the notes below).")
    if "reconciler" in rounds.contenders:
        run0 = rounds.runs["reconciler"][0]
        lines.append(f"- reconciler's first tick started {run0['runs_at_first_tick']} runs "
                     f"and recorded {run0['skips_at_first_tick']} skips (catch-up of slots "
                     "missed since the fixture was written; at most 5 start at once).")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parse = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parse.add_argument("--jobs", type=int, default=100_000)
    parse.add_argument("--reps", type=int, default=3)
    parse.add_argument("--contenders", default=None,
                       help=",".join(default_contenders(peers=True)))
    parse.add_argument("--child", choices=default_contenders(peers=True),
                       help=argparse.SUPPRESS)
    parse.add_argument("--dir", help=argparse.SUPPRESS)
    parse.add_argument("--spawned", type=float, help=argparse.SUPPRESS)
    args = parse.parse_args(argv)
    if args.child == "aps-sqlite":
        emit(aps_child(Path(args.dir), args.spawned))
        return 0
    if args.child:
        emit(reconciler_child(Path(args.dir), args.spawned, args.child))
        return 0
    default = default_contenders(peers_available())
    contenders = args.contenders.split(",") if args.contenders else default
    rounds, _ = run(args.jobs, args.reps, contenders, print)
    argv_text = " ".join(sys.argv[1:] if argv is None else argv)
    print("\n".join(markdown(rounds, args.jobs, f".venv/bin/python -m bench.start {argv_text}"
                                                .strip())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
