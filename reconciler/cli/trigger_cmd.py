"""``reconciler trigger JOB [--force]``: run a job now, as trigger ``manual``.

With a daemon running on the state directory, the request goes to it over its control socket
(``<state>/control.sock``) and the run starts at once, honouring the job's concurrency policy.
Without one, the job runs here in the foreground under the writer lock and is recorded; the
exit code is the run's (0 ok, 1 failed).
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from reconciler.cli.common import DEFAULT_SPECS, add_format, add_state, print_json
from reconciler.cli.specs import load_desired
from reconciler.clock import SystemClock
from reconciler.core.timefmt import iso_utc
from reconciler.runtime.control import send
from reconciler.runtime.events import CollectingSink
from reconciler.runtime.service import Service
from reconciler.runtime.wiring import build_executor
from reconciler.store import StateWriter

_OK = {"started", "queued"}


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "trigger", help="run a job now (through the daemon if one runs)",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None)
    parser.add_argument("job")
    parser.add_argument("--force", action="store_true",
                        help="run even if the job is suspended or disabled")
    parser.add_argument("--specs", default=DEFAULT_SPECS, help="spec directory (foreground)")
    add_state(parser)
    add_format(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    answer = send(args.state, {"action": "trigger", "job": args.job, "force": args.force})
    if answer is not None:
        answer["via"] = "daemon"
        _print(args, answer)
        return 0 if answer.get("status") in _OK else 1
    answer = asyncio.run(_foreground(args))
    _print(args, answer)
    return 0 if answer.get("status") == "ok" else 1


async def _foreground(args: argparse.Namespace) -> dict[str, Any]:
    clock = SystemClock()
    desired = load_desired([args.specs], now=clock.now())
    sink = CollectingSink()
    with StateWriter.open(args.state, now=clock.now()) as writer:
        service = Service(writer, clock, build_executor(), sink=sink)
        await service.start(desired)
        result = await service.trigger(args.job, force=args.force)
        if result.status != "started":
            return {"status": result.status, "message": result.message, "via": "foreground"}
        tasks = [f.task for f in service.flights.get(args.job, []) if f.task is not None]
        await asyncio.gather(*tasks)
    finished = next(r for r in sink.finished if r.run_id == result.run_id)
    return {"status": finished.status, "runId": finished.run_id, "via": "foreground",
            "startedAt": iso_utc(finished.started_at),
            "finishedAt": iso_utc(finished.finished_at), "error": finished.error,
            "summary": finished.summary}


def _print(args: argparse.Namespace, answer: dict[str, Any]) -> None:
    if args.format == "json":
        print_json(answer)
        return
    line = f"{args.job}: {answer.get('status')} ({answer.get('via')})"
    if answer.get("runId"):
        line += f" run {answer['runId']}"
    print(line)
    for key in ("message", "error", "summary"):
        if answer.get(key):
            print(f"  {key}: {answer[key]}")
