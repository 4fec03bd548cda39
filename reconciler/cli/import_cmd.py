"""``reconciler import openclaw PATH/jobs.json --out specs/ [--state DIR]``.

Turns an OpenClaw cron store into ScheduledJob and Channel specs (one file each) and, with
``--state``, carries each job's runtime state into the state store. Exit 0 when every job was
imported, 1 when some could not be (they are listed and kept in openclaw-unmapped.json), 1 on
an unreadable store, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import sys
import zoneinfo
from pathlib import Path
from typing import Any

from reconciler.cli.common import DEFAULT_SPECS, add_format, print_json
from reconciler.clock import SystemClock
from reconciler.errors import UsageError
from reconciler.sources.openclaw.emit import planned_files, write_files
from reconciler.sources.openclaw.importer import ImportResult, import_store
from reconciler.sources.openclaw.notes import MapOptions
from reconciler.sources.openclaw.report import as_json, as_text
from reconciler.store import StateWriter


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "import", help="import jobs from another scheduler (openclaw)",
        description="Import jobs from another scheduler's store as specs.",
    )
    sources = parser.add_subparsers(dest="source", metavar="SOURCE",
                                    parser_class=type(parser))
    parser.set_defaults(handler=lambda _args: _no_source(parser))
    openclaw = sources.add_parser(
        "openclaw", help="import an OpenClaw cron store (jobs.json)",
        description=("Write one ScheduledJob spec per OpenClaw job (and the Channels they "
                     "deliver to); report what could not be mapped. Exit 0 if every job was "
                     "imported, 1 if not."),
    )
    openclaw.add_argument("store", metavar="PATH/jobs.json",
                          help="OpenClaw's jobs.json (or its directory)")
    openclaw.add_argument("--out", default=DEFAULT_SPECS,
                          help=f"directory for the specs (default {DEFAULT_SPECS})")
    openclaw.add_argument("--state", default=None, metavar="DIR",
                          help="also carry runtime state into this state directory")
    openclaw.add_argument("--default-timezone", default="UTC", metavar="ZONE",
                          help="zone for cron jobs without tz (OpenClaw used the host's zone)")
    openclaw.add_argument("--agent-endpoint", default=MapOptions.agent_endpoint,
                          help="OpenAI-compatible endpoint for agent jobs (a placeholder)")
    openclaw.add_argument("--legacy-webhook", default=None, metavar="URL",
                          help="OpenClaw's deprecated cron.webhook, for legacy notify: true")
    openclaw.add_argument("--force", action="store_true",
                          help="overwrite existing spec files and existing job state")
    add_format(openclaw)
    openclaw.set_defaults(handler=run)


def _no_source(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    _check_zone(args.default_timezone)
    now = SystemClock().now()
    options = MapOptions(default_timezone=args.default_timezone,
                         agent_endpoint=args.agent_endpoint)
    result = import_store(Path(args.store), now, options, args.legacy_webhook)
    out = Path(args.out)
    write_files(planned_files(result, out), force=args.force)
    written = None
    if args.state is not None:
        written = write_state(args.state, result, now, args.force)
    if args.format == "json":
        print_json(as_json(result, out, written))
    else:
        print("\n".join(as_text(result, out, written)))
    return 1 if result.unmapped else 0


def _check_zone(zone: str) -> None:
    try:
        zoneinfo.ZoneInfo(zone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise UsageError(f"--default-timezone {zone!r} is not an IANA zone, "
                         "e.g. Asia/Shanghai") from None


def write_state(state_dir: str, result: ImportResult, now: float, force: bool) -> int:
    """Seed every imported job's state (and its last run) in one transaction; jobs that
    already have state are kept unless ``force``. Returns how many jobs were written."""
    written = 0
    with StateWriter.open(state_dir, now=now) as writer, writer.transaction() as tx:
        for job in result.jobs:
            if job.state is None:
                continue
            if not force and writer.job(job.name) is not None:
                result.warnings.append(f"job {job.name}: state exists in {state_dir}: kept "
                                       "(--force replaces it)")
                continue
            last = job.state.last_run()
            if last is not None and writer.run(last[0].run_id) is None:
                tx.start_run(last[0])
                tx.finish_run(last[1])
            tx.put_job(job.state.job_state)
            written += 1
    return written
