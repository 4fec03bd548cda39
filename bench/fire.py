"""fire-1k / fire-10k / cron-1k: N jobs firing every second, reconciler vs APScheduler 3.

    .venv/bin/python -m bench.fire --jobs 1000 --seconds 30          # fire-1k
    .venv/bin/python -m bench.fire --jobs 10000 --seconds 15         # fire-10k
    .venv/bin/python -m bench.fire --kind cron --jobs 1000           # cron-1k (also bench.cron)
    .venv/bin/python -m bench.fire --jobs 50 --seconds 2 --reps 1    # a quick look

Contenders (each repetition runs them in turn, each in a fresh interpreter):
``reconciler`` (durable store, no-op executor), ``aps-memory`` (APScheduler 3.11
``AsyncIOScheduler`` + ``MemoryJobStore``), ``aps-sqlite`` (+ ``SQLAlchemyJobStore`` on SQLite).
What is measured and how: ``bench/firekit.py``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.harness import Rounds, alternate, peers_available, run_child

CONTENDERS = ("reconciler", "aps-memory", "aps-sqlite")


@dataclass
class FireOutcome:
    scenario: str
    jobs: int
    seconds: float
    kind: str
    rounds: Rounds
    samples: dict[str, list[float]] = field(default_factory=dict)  # lateness ms, all reps


def run(scenario: str, jobs: int, seconds: float, kind: str, reps: int,
        contenders: Sequence[str], log: Callable[[str], None] | None = None) -> FireOutcome:
    with tempfile.TemporaryDirectory(prefix="bench-fire-") as scratch:
        def one(name: str, rep: int) -> dict[str, Any]:
            samples = str(Path(scratch) / f"{name}-{rep}.json")
            args = ["--child", name, "--jobs", str(jobs), "--seconds", str(seconds),
                    "--kind", kind, "--samples", samples]
            # Set-up (10,000 pydantic specs, seeding a store) can take a while on a busy box.
            return run_child("bench.fire", args, timeout=3 * seconds + 180)

        rounds = alternate(contenders, reps, one, log)
        outcome = FireOutcome(scenario, jobs, seconds, kind, rounds)
        for name in contenders:
            pooled: list[float] = []
            for rep in range(reps):
                pooled.extend(json.loads((Path(scratch) / f"{name}-{rep}.json").read_text()))
            outcome.samples[name] = pooled
    return outcome


def default_contenders() -> list[str]:
    return list(CONTENDERS) if peers_available() else ["reconciler"]


def _fmt_ms(value: float) -> str:
    return f"{value:,.1f}" if value < 100 else f"{value:,.0f}"


def markdown(outcome: FireOutcome, command: str) -> list[str]:
    rounds = outcome.rounds
    lines = [f"Command: `{command}` ({outcome.jobs:,} jobs, {outcome.kind}, "
             f"{outcome.seconds:g} s window, {len(rounds.runs[rounds.contenders[0]])} "
             "repetitions; medians of the repetitions).", "",
             "| contender | fires/s | kept up | lateness p50 | p95 | p99 | max | "
             "CPU s / 1,000 runs | peak RSS | slots not run |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name in rounds.contenders:
        med = lambda key, n=name: rounds.median(n, key)  # noqa: E731
        if med("runs_in_window"):
            cells = [f"{_fmt_ms(med(k))} ms" for k in ("p50", "p95", "p99", "max")]
            cells.append(f"{med('cpu_per_1k'):.3f}")
        else:  # no run started: there is no lateness to show, nor CPU per run
            cells = ["—"] * 5
        lines.append(
            f"| {name} | {med('fires_per_s'):,.0f} | {100 * med('keep_up'):.1f}% "
            f"| {' | '.join(cells)} | {med('rss_mib'):,.0f} MiB | {med('missed'):,.0f} |")
    if "reconciler" in rounds.contenders:
        started = ", ".join(str(x["started_in_window"]) for x in rounds.runs["reconciler"])
        lines += ["", "Reconciler decision lateness (the run record's `startedAt` minus "
                  "`scheduledAt`: the slot itself for an armed run, the tick's clock for a run "
                  "decided at or after its slot), median of repetitions: p50 "
                  f"{_fmt_ms(rounds.median('reconciler', 'decision_p50'))} ms, p99 "
                  f"{_fmt_ms(rounds.median('reconciler', 'decision_p99'))} ms; "
                  f"runs started in the window per repetition: {started}."]
    lines.append("- *slots not run*: APScheduler: runs dropped as missed; it coalesces, so "
                 "that is one per job and pass however many slots the job skipped. "
                 "Reconciler: slots in the window recorded as skipped by the `latest` "
                 "catch-up.")
    for peer in ("aps-memory", "aps-sqlite"):
        if peer in rounds.contenders and "reconciler" in rounds.contenders:
            if not rounds.median(peer, "runs_in_window"):
                lines.append(f"- {peer} started no run in the window: no ratio.")
                continue
            fires = rounds.ratios("fires_per_s", "reconciler", peer)
            p99 = rounds.ratios("p99", "reconciler", peer)
            lines.append(f"- reconciler / {peer} per repetition: fires/s "
                         f"{', '.join(f'{x:.2f}x' for x in fires)}; lateness p99 "
                         f"{', '.join(f'{x:.2f}x' for x in p99)}.")
    if "aps-sqlite" in rounds.contenders:
        lines.append(f"- aps-sqlite handled (ran or dropped as missed) "
                     f"{rounds.median('aps-sqlite', 'handled_per_s'):,.0f} fires/s (median).")
    return lines


def child_main(args: argparse.Namespace) -> int:
    from bench.harness import emit

    if args.child == "reconciler":
        from bench.fire_reconciler import child
        emit(child(args.jobs, args.seconds, args.kind, args.samples))
    else:
        from bench.fire_aps import child as aps_child
        emit(aps_child(args.child, args.jobs, args.seconds, args.kind, args.samples))
    return 0


def parser(description: str | None = None) -> argparse.ArgumentParser:
    parse = argparse.ArgumentParser(description=description or __doc__.split("\n\n")[0])
    parse.add_argument("--jobs", type=int, default=1000)
    parse.add_argument("--seconds", type=float, default=30)
    parse.add_argument("--kind", choices=("interval", "cron"), default="interval")
    parse.add_argument("--reps", type=int, default=3)
    parse.add_argument("--contenders", default=None,
                       help="comma-separated subset of " + ",".join(CONTENDERS))
    parse.add_argument("--child", choices=CONTENDERS, help=argparse.SUPPRESS)
    parse.add_argument("--samples", help=argparse.SUPPRESS)
    return parse


def main(argv: Sequence[str] | None = None, kind: str | None = None) -> int:
    args = parser().parse_args(argv)
    if kind is not None:
        args.kind = kind
    if args.child:
        return child_main(args)
    contenders = args.contenders.split(",") if args.contenders else default_contenders()
    name = f"{'cron' if args.kind == 'cron' else 'fire'}-{args.jobs:,}".replace(",000", "k")
    outcome = run(name, args.jobs, args.seconds, args.kind, args.reps, contenders, print)
    argv_text = " ".join(sys.argv[1:] if argv is None else argv)
    print("\n".join(markdown(outcome, f".venv/bin/python -m bench.fire {argv_text}".strip())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
