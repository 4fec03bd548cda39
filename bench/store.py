"""Cost of recording a run (start + finish) in the state store, next to a whole-file JSON store.

For each job count, the SQLite store is seeded with that many jobs (and a little history per
job), then runs are recorded on random jobs exactly as the daemon records them: a start (one
transaction: run row + running marker) and a finish (one transaction: outcome + job update +
marker cleared), each committed with ``synchronous=FULL``. The per-tick batch form (many starts in
one transaction, then many finishes in one) is measured as well.

The peer is the simplest durable alternative: the same jobs kept in one JSON file, rewritten
atomically (temp file, fsync, rename) on every start and every finish.

    .venv/bin/python bench/store.py                      # 1,000 / 10,000 / 100,000 jobs
    .venv/bin/python bench/store.py --jobs 1000,10000 --runs 200

Targets (issue 4): per-run cost at 100,000 jobs within 1.5x of the cost at 1,000; at least 20x
cheaper than the whole-file JSON rewrite at 10,000 jobs.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from reconciler.model.state import JobState, RunFinish, RunStart, RunStatus
from reconciler.store import StateWriter

T0 = 1_767_225_600.0
ROUNDS = 15
JSON_ROUNDS = 3


@dataclass(frozen=True)
class Result:
    jobs: int
    sqlite_us: float  # per run, one transaction per start and per finish
    batched_us: float  # per run, one transaction per tick of --batch starts / finishes
    json_us: float  # per run, two whole-file atomic rewrites


def _job(n: int) -> JobState:
    return JobState(f"job-{n:06d}", anchor=T0, next_nominal_at=T0 + 60 * (n % 1440),
                    next_effective_at=T0 + 60 * (n % 1440) + n % 300, spec_hash=f"sha256:{n:x}",
                    source_revision="a1b2c3d", first_reconciled_at=T0)  # fmt: skip


class RunIds:
    """Fresh run ids and instants, so every recorded run is a new row."""

    def __init__(self) -> None:
        self.n = 0

    def start(self, job: str) -> RunStart:
        self.n += 1
        at = T0 + self.n
        return RunStart(f"{job}/{self.n}", job, f"occ-{job}-{self.n}", at, at)

    def finish(self, start: RunStart) -> RunFinish:
        status: RunStatus = "ok" if self.n % 5 else "error"
        return RunFinish(start.run_id, start.job, start.started_at + 2, status,
                         error=None if status == "ok" else "exit 1", summary="done")  # fmt: skip


def _seed(writer: StateWriter, jobs: int, history: int, ids: RunIds) -> list[str]:
    names = [_job(n).name for n in range(jobs)]
    for chunk in range(0, jobs, 10_000):
        writer.put_jobs([_job(n) for n in range(chunk, min(jobs, chunk + 10_000))])
    for _ in range(history):
        for chunk in range(0, jobs, 10_000):
            starts = [ids.start(name) for name in names[chunk : chunk + 10_000]]
            writer.start_runs(starts)
            writer.finish_runs([ids.finish(start) for start in starts])
    return names


class SqliteStore:
    """One seeded store of ``jobs`` jobs, measured a round at a time."""

    def __init__(self, root: Path, jobs: int, history: int) -> None:
        self.jobs = jobs
        self.rng = random.Random(jobs)
        self.ids = RunIds()
        self.writer = StateWriter.open(root / f"state-{jobs}", now=T0)
        self.names = _seed(self.writer, jobs, history, self.ids)
        self.single: list[float] = []
        self.batched: list[float] = []

    def round(self, runs: int, batch: int) -> None:
        """Record ``runs`` runs one by one, then one tick of ``batch`` runs; keep the means."""
        begin = time.perf_counter()
        for _ in range(runs):
            start = self.ids.start(self.rng.choice(self.names))
            self.writer.start_run(start)
            self.writer.finish_run(self.ids.finish(start))
        self.single.append((time.perf_counter() - begin) / runs)
        picked = self.rng.sample(self.names, min(batch, self.jobs))
        starts = [self.ids.start(name) for name in picked]
        begin = time.perf_counter()
        self.writer.start_runs(starts)
        self.writer.finish_runs([self.ids.finish(start) for start in starts])
        self.batched.append((time.perf_counter() - begin) / len(starts))


def measure_sqlite(
    root: Path, counts: Sequence[int], runs: int, batch: int, history: int
) -> dict[int, tuple[float, float]]:
    """Per-run seconds (one by one, batched) for each job count.

    The stores are measured in interleaved rounds, and each figure is the median of its rounds'
    means: this machine is shared, and a burst of someone else's I/O then hits every store
    alike instead of skewing the ratio between them.
    """
    stores = [SqliteStore(root, jobs, history) for jobs in counts]
    try:
        for _ in range(ROUNDS):
            for store in stores:
                store.round(max(1, runs // ROUNDS), batch)
    finally:
        for store in stores:
            store.writer.close()
    return {
        store.jobs: (statistics.median(store.single), statistics.median(store.batched))
        for store in stores
    }


def measure_json(root: Path, jobs: int, runs: int) -> float:
    """The whole-file JSON store: every start and every finish rewrites every job atomically."""
    rng = random.Random(jobs)
    ids = RunIds()
    store = {job.name: asdict(job) for job in (_job(n) for n in range(jobs))}
    path = root / f"jobs-{jobs}.json"

    def save() -> None:
        temp = path.with_suffix(".tmp")
        # json.dumps, not json.dump: only the one-shot form uses the C encoder; be fair to it.
        text = json.dumps(store)
        with open(temp, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)

    def record(count: int) -> None:
        for _ in range(count):
            start = ids.start(rng.choice(list(store)))
            store[start.job]["running"] = {"run_id": start.run_id, "started_at": start.started_at}
            save()
            finish = ids.finish(start)
            entry = store[start.job]
            entry.update(running=None, last_started_at=start.started_at,
                         last_finished_at=finish.finished_at,
                         last_status=finish.status)  # fmt: skip
            save()

    save()
    means = []
    for _ in range(JSON_ROUNDS):
        begin = time.perf_counter()
        record(runs)
        means.append((time.perf_counter() - begin) / runs)
    return statistics.median(means)


def _report(results: Sequence[Result], argv: Sequence[str]) -> str:
    lines = [
        f"command: .venv/bin/python bench/store.py {' '.join(argv)}".rstrip(),
        "",
        "| jobs | SQLite per run (start + finish, 2 tx) | SQLite per run, batched tick "
        "| JSON whole-file per run (2 rewrites) | JSON / SQLite |",
        "|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        lines.append(
            f"| {r.jobs:,} | {r.sqlite_us:,.0f} µs | {r.batched_us:,.0f} µs "
            f"| {r.json_us:,.0f} µs | {r.json_us / r.sqlite_us:,.1f}x |"
        )
    by_jobs = {r.jobs: r for r in results}
    lines.append("")
    if 1_000 in by_jobs and 100_000 in by_jobs:
        growth = by_jobs[100_000].sqlite_us / by_jobs[1_000].sqlite_us
        verdict = "meets" if growth <= 1.5 else "MISSES"
        lines.append(f"- per-run cost 100,000 jobs / 1,000 jobs: {growth:.2f}x ({verdict} <= 1.5x)")
    if 10_000 in by_jobs:
        r = by_jobs[10_000]
        gain = r.json_us / r.sqlite_us
        verdict = "meets" if gain >= 20 else "MISSES"
        lines.append(f"- JSON rewrite / SQLite at 10,000 jobs: {gain:.1f}x ({verdict} >= 20x)")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", default="1000,10000,100000", help="job counts, comma-separated")
    parser.add_argument("--runs", type=int, default=500, help="runs recorded one by one per count")
    parser.add_argument("--json-runs", type=int, default=None,
                        help="runs per round for the JSON peer (default: fewer for big stores)")
    parser.add_argument("--batch", type=int, default=100, help="runs per batched tick")
    parser.add_argument("--history", type=int, default=2, help="runs of history seeded per job")
    parser.add_argument("--dir", default=None, help="where to put the stores (default: a tmp dir)")
    args = parser.parse_args(args_list)
    counts = [int(part) for part in args.jobs.split(",")]
    with tempfile.TemporaryDirectory(dir=args.dir) as scratch:
        sqlite = measure_sqlite(Path(scratch), counts, args.runs, args.batch, args.history)
        results = []
        for jobs in counts:
            json_runs = args.json_runs or max(1, min(20, 100_000 // jobs))
            json_cost = measure_json(Path(scratch), jobs, json_runs)
            results.append(Result(jobs, sqlite[jobs][0] * 1e6, sqlite[jobs][1] * 1e6,
                                  json_cost * 1e6))  # fmt: skip
    print(_report(results, args_list))
    return 0


if __name__ == "__main__":
    sys.exit(main())
