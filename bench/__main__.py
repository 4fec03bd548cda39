"""The side-by-side harness (issue 10): every scenario, reconciler vs its peers, one command.

    make bench                      # installs the bench extra, then runs this
    .venv/bin/python -m bench       # about 14 minutes on 2 cores; rewrites the peers section
                                    # of BENCHMARKS.md and bench/plots/*.png
    .venv/bin/python -m bench --quick --no-write     # tiny sizes, a minute, touches nothing

Scenarios, each also runnable alone: fire-1k and fire-10k (``bench.fire``), cron-1k
(``bench.cron``), start-100k (``bench.start``), record (``bench.record``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import time
from collections.abc import Sequence
from typing import Any

from bench import fire, record, report, start
from bench.harness import ROOT, Rounds, machine, peers_available, versions

SCENARIOS = ("fire-1k", "fire-10k", "cron-1k", "start-100k", "record")
LAST_RUN = ROOT / "bench" / "plots" / "last-run.json"  # every child's result, for --render


def _saved(results: dict[str, Any]) -> dict[str, Any]:
    saved: dict[str, Any] = {}
    for name, value in results.items():
        rounds = value.rounds if isinstance(value, fire.FireOutcome) else value
        saved[name] = {"contenders": rounds.contenders, "runs": rounds.runs}
        if isinstance(value, fire.FireOutcome):
            saved[name]["fire"] = [value.jobs, value.seconds, value.kind]
    return saved


def _merge(blocks: list[tuple[str, list[str]]], header: list[str], results: dict[str, Any],
           wanted: list[str], took: float) -> tuple[list[Any], list[str], dict[str, Any]]:
    """A partial run (``--only``) replaces its scenarios in the saved full run, says so."""
    saved = json.loads(LAST_RUN.read_text())
    fresh = dict(blocks)
    merged_blocks = [(name, fresh.get(name, body)) for name, body in saved["blocks"]]
    merged_blocks += [(name, body) for name, body in blocks if name not in dict(saved["blocks"])]
    merged = {**_results_of(saved["results"]), **results}
    note = (f"{', '.join(wanted)} rerun alone {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC "
            f"(`.venv/bin/python -m bench --only {','.join(wanted)}`, {took / 60:.1f} min).")
    kept = [line for line in saved["header"] if not line.startswith(f"{','.join(wanted)} ")]
    return merged_blocks, [*kept, "", note], merged


def _results_of(saved: dict[str, Any]) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for name, value in saved.items():
        rounds = Rounds(value["contenders"], value["runs"])
        if "fire" in value:
            jobs, seconds, kind = value["fire"]
            results[name] = fire.FireOutcome(name, jobs, seconds, kind, rounds)
        else:
            results[name] = rounds
    return results


def _parser() -> argparse.ArgumentParser:
    parse = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parse.add_argument("--reps", type=int, default=3)
    parse.add_argument("--fire1k-seconds", type=float, default=30)
    parse.add_argument("--fire10k-seconds", type=float, default=10)
    parse.add_argument("--cron-seconds", type=float, default=10)
    parse.add_argument("--start-jobs", type=int, default=100_000)
    parse.add_argument("--record-jobs", default="1000,100000")
    parse.add_argument("--record-runs", type=int, default=150)
    parse.add_argument("--only", default=",".join(SCENARIOS), help="comma-separated scenarios")
    parse.add_argument("--quick", action="store_true", help="tiny sizes (a smoke run)")
    parse.add_argument("--no-write", action="store_true", help="print, do not touch the repo")
    parse.add_argument("--render", action="store_true",
                       help="no runs: rewrite the section from bench/plots/last-run.json "
                            "(after editing bench/analysis.md)")
    return parse


def _quick(args: argparse.Namespace) -> None:
    args.reps, args.fire1k_seconds, args.fire10k_seconds, args.cron_seconds = 1, 2, 2, 2
    args.start_jobs, args.record_jobs, args.record_runs = 2_000, "100,2000", 30


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.render:
        saved = json.loads(LAST_RUN.read_text())
        text = report.section(saved["blocks"], saved["header"], _results_of(saved["results"]))
        report.rewrite(ROOT / "BENCHMARKS.md", text)
        return 0
    if args.quick:
        _quick(args)
    wanted = args.only.split(",")
    peers = peers_available()
    began = time.monotonic()
    results: dict[str, Any] = {}
    blocks: list[tuple[str, list[str]]] = []
    fire_peers = fire.default_contenders()
    scale = 10 if args.quick else 1  # quick: 100 and 1,000 jobs instead of 1,000 and 10,000
    # APScheduler's SQLite store already drops every run of fire-1k, and its scheduling pass
    # blocks the event loop for the whole pass (10,000 fsynced updates: tens of seconds, past
    # any window), so fire-10k and cron-1k compare with the in-memory store only.
    fast_peers = [c for c in fire_peers if c != "aps-sqlite"]
    plan = [("fire-1k", 1000 // scale, args.fire1k_seconds, "interval", fire_peers),
            ("fire-10k", 10_000 // scale, args.fire10k_seconds, "interval", fast_peers),
            ("cron-1k", 1000 // scale, args.cron_seconds, "cron", fast_peers)]
    for name, jobs, seconds, kind, contenders in plan:
        if name not in wanted:
            continue
        print(f"{name}: {jobs:,} jobs, {seconds:g} s, {args.reps} reps, {contenders}",
              flush=True)
        outcome = fire.run(name, jobs, seconds, kind, args.reps, contenders, print)
        module = "bench.cron" if kind == "cron" else "bench.fire"
        flags = f"--jobs {jobs} --seconds {seconds:g} --reps {args.reps}"
        body = fire.markdown(outcome, f".venv/bin/python -m {module} {flags}")
        if not args.no_write:
            path = report.plot(outcome)
            if path is not None:
                body += ["", f"![{name} lateness]({path.relative_to(ROOT)})"]
        results[name] = outcome
        blocks.append((name, body))
    if "start-100k" in wanted:
        contenders = start.default_contenders(peers)
        print(f"start-100k: {args.start_jobs:,} jobs, {args.reps} reps", flush=True)
        rounds, seeded = start.run(args.start_jobs, args.reps, contenders, print)
        results["start-100k"] = rounds
        body = start.markdown(rounds, args.start_jobs, ".venv/bin/python -m bench.start "
                              f"--jobs {args.start_jobs} --reps {args.reps}")
        body.append("- fixture written beforehand (not measured): "
                    + ", ".join(f"{k[:-2]} {v:.1f} s" for k, v in seeded.items()) + ".")
        blocks.append(("start-100k", body))
    if "record" in wanted:
        counts = [int(x) for x in args.record_jobs.split(",")]
        print(f"record: {counts}, {args.reps} reps", flush=True)
        rounds = record.run(counts, args.record_runs, 2, args.reps, print)
        results["record"] = rounds
        blocks.append(("record", record.markdown(
            rounds, counts, f".venv/bin/python -m bench.record --jobs {args.record_jobs} "
            f"--runs {args.record_runs} --reps {args.reps}")))
    took = time.monotonic() - began
    invoked = " ".join(["-m bench", *(sys.argv[1:] if argv is None else argv)])
    header = [f"Command: `make bench` (= `.venv/bin/python {invoked}`), run "
              f"{dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC in {took / 60:.1f} min on "
              f"{machine()}; {versions()}. The machine is shared: compare within a table, "
              "read the per-repetition ratios, not absolute figures."]
    if set(wanted) < set(SCENARIOS) and LAST_RUN.exists() and not (args.quick or args.no_write):
        blocks, header, results = _merge(blocks, header, results, wanted, took)
    text = report.section(blocks, header, results)
    if args.no_write:
        print(text)
    else:
        LAST_RUN.parent.mkdir(parents=True, exist_ok=True)
        LAST_RUN.write_text(json.dumps({"header": header, "blocks": blocks,
                                        "results": _saved(results)}, indent=1))
        report.rewrite(ROOT / "BENCHMARKS.md", text)
        print(text)
        print(f"\nwrote the peers section of BENCHMARKS.md ({took / 60:.1f} min)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
