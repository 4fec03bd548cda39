"""record: the cost of recording one run at 1,000 vs 100,000 jobs, vs a whole-file JSON store.

    .venv/bin/python -m bench.record                           # 1,000 and 100,000 jobs
    .venv/bin/python -m bench.record --jobs 100,2000 --runs 60 --reps 1   # a quick look

The measurement is ``bench/store.py``'s (its docstring says exactly what a recorded run is);
this wraps it in the side-by-side form: each repetition runs the SQLite store (all sizes,
interleaved in one process) and then the JSON whole-file store, each in a fresh interpreter.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench.harness import Rounds, alternate, emit, run_child

CONTENDERS = ("sqlite", "json")


def child(name: str, counts: list[int], runs: int, history: int) -> dict[str, Any]:
    from bench.store import measure_json, measure_sqlite

    result: dict[str, Any] = {"contender": name}
    with tempfile.TemporaryDirectory(prefix="bench-record-") as scratch:
        if name == "sqlite":
            costs = measure_sqlite(Path(scratch), counts, runs, 100, history)
            for jobs, (single, batched) in costs.items():
                result[f"per_run_us_{jobs}"] = single * 1e6
                result[f"batched_us_{jobs}"] = batched * 1e6
        else:
            for jobs in counts:
                # A whole-file rewrite of 100,000 jobs takes about a second: few runs suffice.
                json_runs = max(1, min(20, 100_000 // jobs))
                result[f"per_run_us_{jobs}"] = measure_json(Path(scratch), jobs, json_runs) * 1e6
    lo, hi = min(counts), max(counts)
    result["per_run_us"] = result[f"per_run_us_{hi}"]
    result["growth"] = result[f"per_run_us_{hi}"] / result[f"per_run_us_{lo}"]
    return result


def run(counts: list[int], runs: int, history: int, reps: int,
        log: Callable[[str], None] | None = None) -> Rounds:
    def one(name: str, rep: int) -> dict[str, Any]:
        args = ["--child", name, "--jobs", ",".join(map(str, counts)), "--runs", str(runs),
                "--history", str(history)]
        return run_child("bench.record", args, timeout=600)

    return alternate(CONTENDERS, reps, one, log)


def markdown(rounds: Rounds, counts: list[int], command: str) -> list[str]:
    lo, hi = min(counts), max(counts)
    reps = len(rounds.runs["sqlite"])
    lines = [f"Command: `{command}` ({reps} repetitions, medians; per run = its start and its "
             "finish, each a durable commit).", "",
             "| jobs | SQLite per run | SQLite per run, batched tick of 100 "
             "| JSON whole-file per run | JSON / SQLite |", "|---:|---:|---:|---:|---:|"]
    for jobs in counts:
        sqlite = rounds.median("sqlite", f"per_run_us_{jobs}")
        batched = rounds.median("sqlite", f"batched_us_{jobs}")
        whole = rounds.median("json", f"per_run_us_{jobs}")
        lines.append(f"| {jobs:,} | {sqlite:,.0f} µs | {batched:,.0f} µs | {whole:,.0f} µs "
                     f"| {whole / sqlite:,.0f}x |")
    growth = [run["growth"] for run in rounds.runs["sqlite"]]
    json_growth = [run["growth"] for run in rounds.runs["json"]]
    lines += ["", f"- SQLite per-run cost {hi:,} / {lo:,} jobs, per repetition: "
              + ", ".join(f"{g:.2f}x" for g in growth) + "; JSON whole-file: "
              + ", ".join(f"{g:,.0f}x" for g in json_growth) + "."]
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parse = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parse.add_argument("--jobs", default="1000,100000", help="job counts, comma-separated")
    parse.add_argument("--runs", type=int, default=300, help="single runs per SQLite store")
    parse.add_argument("--history", type=int, default=2, help="runs of history per job")
    parse.add_argument("--reps", type=int, default=3)
    parse.add_argument("--child", choices=CONTENDERS, help=argparse.SUPPRESS)
    args = parse.parse_args(argv)
    counts = [int(part) for part in args.jobs.split(",")]
    if args.child:
        emit(child(args.child, counts, args.runs, args.history))
        return 0
    rounds = run(counts, args.runs, args.history, args.reps, print)
    argv_text = " ".join(sys.argv[1:] if argv is None else argv)
    print("\n".join(markdown(rounds, counts, f".venv/bin/python -m bench.record {argv_text}"
                                             .strip())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
