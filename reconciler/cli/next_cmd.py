"""``reconciler next PATH [--job NAME] [--from ISO] [--count K]``: upcoming fire times.

Reads specs only (no state): an interval without a spec ``anchor`` is shown as if it were first
reconciled at ``--from``, and a one-shot as not yet run. ``--from`` defaults to now.

JSON (stable): ``{"jobs": [{"name", "timezone", "schedule", "suspended", "next": [{"at",
"nominal", "local"}]}]}`` where ``at`` is the effective start (stagger included) and ``nominal``
the slot the schedule names, both UTC ISO-8601 with ``Z``, and ``local`` is ``at`` on the clock
of the job's zone, with its offset.
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
from datetime import datetime, timedelta
from typing import Any

from reconciler.cli.common import add_format, print_json
from reconciler.clock import SystemClock
from reconciler.core.describe import describe_schedule
from reconciler.core.schedule import Fire, ScheduleState, dst_note, upcoming_fires
from reconciler.core.stagger import job_offset_ms
from reconciler.core.timefmt import iso_local, iso_utc
from reconciler.core.zones import load_zone
from reconciler.errors import SpecLoadError, UsageError
from reconciler.model.duration import format_duration
from reconciler.model.job import ScheduledJob
from reconciler.model.schedule import Schedule
from reconciler.model.timestamp import parse_timestamp
from reconciler.sources.loader import load_paths

DEFAULT_COUNT = 5


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "next",
        help="show upcoming fire times of jobs",
        description=(
            "Show the next fire times of the jobs in spec files or directories, with DST "
            "changes that move or repeat a fire marked. Reads no state: intervals without an "
            "anchor are shown as if first reconciled at --from."
        ),
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="spec files or directories")
    parser.add_argument("--job", metavar="NAME", help="only this job")
    parser.add_argument(
        "--from", dest="start", metavar="ISO",
        help="list fires after this instant (ISO-8601; no offset = UTC; default now)",
    )
    parser.add_argument(
        "--count", type=int, default=DEFAULT_COUNT, metavar="K",
        help=f"fires per job (default {DEFAULT_COUNT})",
    )
    add_format(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    start = _start_instant(args.start)
    if args.count < 1:
        raise UsageError(f"--count must be at least 1, got {args.count}")
    try:
        result = load_paths(args.paths, now=start)
    except SpecLoadError as exc:
        raise UsageError(str(exc)) from exc
    if result.errors:
        for diagnostic in result.errors:
            print(diagnostic.render(), file=sys.stderr)
        print(f"{len(result.errors)} errors: fix the specs (see reconciler validate)",
              file=sys.stderr)
        return 1
    jobs = _select(result.jobs, args.job)
    listing = [(job, _fires(job, start, args.count)) for job in jobs]
    if args.format == "json":
        print_json({"jobs": [_job_json(job, fires) for job, fires in listing]})
    else:
        _print_text(listing, start)
    return 0


def _start_instant(text: str | None) -> float:
    if text is None:
        # Whole seconds: cron is second-granular, and an interval anchored here reads cleanly.
        return float(math.floor(SystemClock().now()))
    try:
        return parse_timestamp(text).timestamp()
    except ValueError as exc:
        raise UsageError(f"--from: {exc}") from None


def _select(jobs: list[ScheduledJob], name: str | None) -> list[ScheduledJob]:
    if name is None:
        return jobs
    chosen = [job for job in jobs if job.name == name]
    if not chosen:
        known = ", ".join(sorted(job.name for job in jobs)) or "none"
        raise UsageError(f"--job: no job named {name!r} (jobs: {known})")
    return chosen


def _fires(job: ScheduledJob, start: float, count: int) -> list[Fire]:
    fires = upcoming_fires(job.name, job.spec.schedule, ScheduleState(), start)
    return list(itertools.islice(fires, count))


def _job_json(job: ScheduledJob, fires: list[Fire]) -> dict[str, Any]:
    schedule = job.spec.schedule
    return {
        "name": job.name,
        "timezone": schedule.timezone,
        "schedule": describe_schedule(schedule, with_zone=False),
        "suspended": job.spec.suspend,
        "next": [
            {
                "at": iso_utc(fire.effective),
                "nominal": iso_utc(fire.nominal),
                "local": iso_local(fire.effective, schedule.timezone),
            }
            for fire in fires
        ],
    }


def _print_text(listing: list[tuple[ScheduledJob, list[Fire]]], start: float) -> None:
    print(f"next fires after {iso_utc(start)}")
    for job, fires in listing:
        print()
        print(_header(job))
        if not fires:
            print(f"  {_why_no_fires(job.spec.schedule)}")
        zone = load_zone(job.spec.schedule.timezone)
        for fire in fires:
            local = datetime.fromtimestamp(fire.effective, zone)
            row = f"  {_local_text(local):<32} {iso_utc(fire.effective)}"
            note = dst_note(job.spec.schedule, fire)
            print(f"{row}   <- {note}" if note else row)


def _why_no_fires(schedule: Schedule) -> str:
    if schedule.at is not None:
        return "no upcoming fires: the one-shot time has passed"
    return "no upcoming fires: the schedule never fires again"


def _header(job: ScheduledJob) -> str:
    schedule = job.spec.schedule
    parts = [job.name, describe_schedule(schedule, with_zone=False), schedule.timezone]
    if schedule.every is not None and schedule.anchor is None:
        parts.append("no anchor: shown as if first reconciled at --from")
    offset_ms = job_offset_ms(job.name, schedule)
    if offset_ms:
        parts.append(f"stagger +{format_duration(timedelta(milliseconds=offset_ms))}")
    if job.spec.suspend:
        parts.append("SUSPENDED: these fires will not run until it is resumed")
    return "  ".join(parts)


def _local_text(local: datetime) -> str:
    clock = "%H:%M:%S" if local.second or local.microsecond else "%H:%M"
    return f"{local.strftime('%a %Y-%m-%d ' + clock)} {local.tzname() or ''}".rstrip()


