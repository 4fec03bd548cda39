"""``reconciler plan``: what the next reconcile would do, without doing it."""

from __future__ import annotations

import argparse
from typing import Any

from reconciler.cli.common import DEFAULT_SPECS, add_format, add_state, print_json
from reconciler.cli.specs import load_desired
from reconciler.clock import SystemClock
from reconciler.core.due import Activity, resolve_due
from reconciler.core.jobview import DesiredJob
from reconciler.core.plan import JobChange, plan
from reconciler.core.timefmt import iso_utc
from reconciler.store import StateReader


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "plan", help="desired specs vs persisted state: added, changed, removed, effects",
        description="Show what the next reconcile would do. Never writes.")
    parser.add_argument("--specs", default=DEFAULT_SPECS, help="spec directory or file")
    add_state(parser)
    add_format(parser)
    parser.set_defaults(handler=run)


def _effects(change: JobChange, desired: DesiredJob | None, now: float) -> list[str]:
    effects = list(change.effects)
    if change.state is None or desired is None:
        return effects
    # As if a daemon started now: slots due before now were missed.
    decision = resolve_due(desired, change.state, now, Activity(started_at=now + 1e-3))
    if decision is None:
        return effects
    for skip in decision.skips:
        effects.append(f"skipped slot {iso_utc(skip.fire.nominal)} will be recorded "
                       f"({skip.reason})")
    if decision.start is not None:
        effects.append(f"will run once immediately ({decision.start.trigger}, slot "
                       f"{iso_utc(decision.start.fire.nominal)})")
    return effects


def run(args: argparse.Namespace) -> int:
    now = SystemClock().now()
    desired = load_desired([args.specs], now=now)
    with StateReader.open(args.state) as reader:
        observed = {state.name: state for state in reader.jobs()}
    changes = plan(desired, observed, now)
    rows: list[dict[str, Any]] = [{
        "name": change.name,
        "change": change.kind,
        "nextRunAt": iso_utc(change.state.next_effective_at) if change.state else None,
        "effects": _effects(change, desired.get(change.name), now),
    } for change in changes]
    summary = {kind: sum(1 for c in changes if c.kind == kind)
               for kind in ("added", "changed", "removed", "unchanged")}
    if args.format == "json":
        print_json({"changes": rows, "summary": summary})
        return 0
    symbols = {"added": "+", "changed": "~", "removed": "-", "unchanged": " "}
    for row in rows:
        print(f"{symbols[row['change']]} {row['name']:<28} {row['change']:<10} "
              f"next {row['nextRunAt'] or '-'}")
        for effect in row["effects"]:
            print(f"    {effect}")
    print(", ".join(f"{count} {kind}" for kind, count in summary.items()))
    return 0
