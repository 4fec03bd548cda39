"""``reconciler status [JOB]`` and ``reconciler history JOB``: read-only views of the state."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from reconciler.cli.common import DEFAULT_SPECS, add_format, add_state, print_json
from reconciler.core.timefmt import iso_utc
from reconciler.errors import UsageError
from reconciler.model.job import ScheduledJob
from reconciler.model.state import RunRecord
from reconciler.runtime.sourcestatus import read_source_status
from reconciler.runtime.views import history_run_json, skip_json, status_json
from reconciler.sources.loader import load_paths
from reconciler.store import StateReader


def register(subparsers: Any) -> None:
    status: argparse.ArgumentParser = subparsers.add_parser(
        "status", help="jobs' state: next and last run, failures, running (read-only)",
        description="Show the persisted state of every job (or one). Never writes.")
    status.add_argument("job", nargs="?", help="only this job")
    status.add_argument("--specs", default=DEFAULT_SPECS,
                        help="specs, to describe schedules (optional)")
    add_state(status)
    add_format(status)
    status.set_defaults(handler=run_status)
    history: argparse.ArgumentParser = subparsers.add_parser(
        "history", help="a job's runs and skipped occurrences, newest first (read-only)",
        description="Show a job's run history, newest first. Never writes.")
    history.add_argument("job")
    history.add_argument("--limit", type=int, default=20, help="how many runs (default 20)")
    add_state(history)
    add_format(history)
    history.set_defaults(handler=run_history)


def _specs_by_name(path: str) -> dict[str, ScheduledJob]:
    if not Path(path).exists():
        return {}
    return {job.name: job for job in load_paths([path]).jobs}


def _last_finished(reader: StateReader, job: str) -> RunRecord | None:
    return next((run for run in reader.runs(job, limit=3) if run.status is not None), None)


def run_status(args: argparse.Namespace) -> int:
    specs = _specs_by_name(args.specs)
    with StateReader.open(args.state) as reader:
        states = reader.jobs()
        if args.job is not None:
            states = [s for s in states if s.name == args.job]
            if not states:
                raise UsageError(f"no job named {args.job!r} in the state at {args.state}")
        rows = [status_json(state, specs.get(state.name), _last_finished(reader, state.name))
                for state in states]
    source = read_source_status(args.state)
    stalled = (source or {}).get("stalled", {})
    for row in rows:
        row["specError"] = stalled.get(row["name"])
    if args.format == "json":
        print_json({"jobs": rows, "source": source})
        return 0
    if source is not None:
        revision = (source.get("revision") or "")[:12] or "(not a git work tree)"
        print(f"source: revision {revision}, read {source.get('reconciledAt')}, "
              f"{len(source.get('errors', []))} spec errors")
        for error in source.get("errors", []):
            print(f"  {error['file']}:{error['line']}:{error['column']}: {error['message']}")
    if not rows:
        print(f"no jobs in the state at {args.state}")
        return 0
    print(f"{'JOB':<28} {'NEXT RUN':<24} {'LAST RUN':<24} {'LAST':<11} {'FAILS':>5}  STATE")
    for row in rows:
        flags = [flag for flag, on in (("running", row["running"]),
                                       ("suspended", row["suspended"]),
                                       ("disabled", row["disabled"])) if on]
        print(f"{row['name']:<28} {row['nextRunAt'] or '-':<24} {row['lastRunAt'] or '-':<24} "
              f"{row['lastStatus'] or '-':<11} {row['consecutiveErrors']:>5}  "
              f"{','.join(flags) or 'idle'}")
        if row["specError"]:
            print(f"    stalled: {row['specError']}")
    return 0


def run_history(args: argparse.Namespace) -> int:
    if args.limit < 1:
        raise UsageError("--limit must be at least 1")
    with StateReader.open(args.state) as reader:
        runs = reader.runs(args.job, limit=args.limit)
        skips = reader.skips(args.job, limit=args.limit)
    if args.format == "json":
        print_json({"job": args.job, "runs": [history_run_json(r) for r in runs],
                    "skipped": [skip_json(s) for s in skips]})
        return 0
    if not runs and not skips:
        print(f"no runs of {args.job!r} in the state at {args.state}")
        return 0
    for run in runs:
        error = f"  {run.error}" if run.error else ""
        print(f"{iso_utc(run.started_at)}  {run.status or 'running':<11} {run.trigger:<8} "
              f"#{run.attempt}  slot {iso_utc(run.scheduled_at) or 'manual'}{error}")
    for skip in skips:
        print(f"{iso_utc(skip.recorded_at)}  skipped     slot {iso_utc(skip.scheduled_at)} "
              f"({skip.reason})")
    return 0
