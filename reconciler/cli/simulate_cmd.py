"""``reconciler simulate --from T --until T``: preview the schedule on a virtual clock."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from reconciler.cli.common import DEFAULT_SPECS, add_format, print_json
from reconciler.cli.specs import load_specs
from reconciler.core.timefmt import iso_local, iso_utc, parse_instant
from reconciler.errors import SpecError, UsageError
from reconciler.executors.scripted import parse_outcomes
from reconciler.model.job import ScheduledJob
from reconciler.model.state import RunRecord
from reconciler.runtime.simulate import SimReport, Simulation, parse_events, run_simulation
from reconciler.runtime.views import history_run_json, status_json
from reconciler.sources.yamlio import load_documents


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "simulate",
        help="run the real engine on a virtual clock and print every run, skip and alert",
        description="Simulate the specs from --from to --until on a virtual clock. Nothing is "
                    "written: the state starts empty, or as a copy of --state.",
    )
    parser.add_argument("--specs", default=DEFAULT_SPECS, help="spec directory or file")
    parser.add_argument("--from", dest="start", required=True, help="start (ISO-8601)")
    parser.add_argument("--until", required=True, help="end (ISO-8601)")
    parser.add_argument("--outcomes", help="YAML/JSON: job name -> list of run outcomes")
    parser.add_argument("--events", help="YAML/JSON list of {at, action, job?, specs?}")
    parser.add_argument("--state", help="start from a copy of this state directory (read-only)")
    parser.add_argument("--max-concurrent-runs", type=int, default=4)
    parser.add_argument("--arm-ahead", default=None,
                        help="decide on-time runs this long before their slot, as the daemon "
                             "does (default: the daemon's, 500ms; 0 = at the slot)")
    add_format(parser)
    parser.set_defaults(handler=run)


def _instant(text: str, flag: str) -> float:
    try:
        return parse_instant(text)
    except ValueError as exc:
        raise UsageError(f"{flag}: {exc}") from exc


def _arm_ahead(text: str | None) -> float:
    from reconciler.runtime.settings import Settings, resolve_settings

    settings = resolve_settings({"arm_ahead": text}, environ={}) if text else Settings()
    return settings.arm_ahead.total_seconds()


def _read_yaml(path: str, what: str) -> Any:
    try:
        documents = load_documents(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot read {what} file {path}: {exc.strerror}") from exc
    except Exception as exc:  # a YAML syntax error in a scripting file
        raise SpecError(f"{path}: not valid YAML: {exc}") from exc
    return documents[0] if documents else None


def run(args: argparse.Namespace) -> int:
    from reconciler.runtime.service import ServiceConfig

    start, until = _instant(args.start, "--from"), _instant(args.until, "--until")
    if until <= start:
        raise UsageError("--until must be after --from")
    desired, channels = load_specs([args.specs], now=start)
    base = Path(args.events).parent if args.events else Path(".")
    simulation = Simulation(
        desired=desired, channels=channels, start=start, until=until,
        outcomes=parse_outcomes(_read_yaml(args.outcomes, "outcomes") if args.outcomes
                                else None),
        events=parse_events(_read_yaml(args.events, "events") if args.events else None),
        state_from=args.state,
        config=ServiceConfig(max_concurrent_runs=args.max_concurrent_runs,
                             arm_ahead=_arm_ahead(args.arm_ahead)),
        load_specs=lambda path: load_specs([str(base / path)], now=start),
    )
    report = run_simulation(simulation)
    payload = report_json(report, {name: job.spec for name, job in desired.items()})
    if args.format == "json":
        print_json(payload)
    else:
        _print_text(payload)
    return 0


def run_json(run: RunRecord, zone: str = "UTC") -> dict[str, Any]:
    """A run as history shows it, plus its job and its slot in the job's zone; a run still
    going at --until has status ``running``."""
    local = None if run.scheduled_at is None else iso_local(run.scheduled_at, zone)
    return {"job": run.job, **history_run_json(run), "scheduledLocal": local}


def report_json(report: SimReport, specs: dict[str, ScheduledJob]) -> dict[str, Any]:
    zones = {name: spec.spec.schedule.timezone for name, spec in specs.items()}
    sink = report.sink
    runs = [run_json(run, zones.get(run.job, "UTC"))
            for run in [*sink.finished, *report.in_flight]]
    runs.sort(key=lambda run: (run["startedAt"], run["job"]))
    return {
        "runs": runs,
        "skipped": [{"job": s.job, "scheduledAt": iso_utc(s.scheduled_at),
                     "reason": s.reason, "recordedAt": iso_utc(s.recorded_at)}
                    for s in sink.skips],
        "alerts": [{"job": a.job, "at": iso_utc(a.at), "kind": a.kind, "message": a.message}
                   for a in sink.alerts],
        "deliveries": list(sink.deliveries),
        "triggers": report.trigger_results,
        "final": {"jobs": {name: status_json(state, specs.get(name))
                           for name, state in sorted(report.final.items())}},
    }


def _print_text(payload: dict[str, Any]) -> None:
    lines: list[tuple[str, str]] = []
    for run in payload["runs"]:
        scheduled = run["scheduledLocal"] or "manual"
        error = f"  {run['error']}" if run["error"] else ""
        lines.append((run["startedAt"], f"{run['startedAt']}  run   {run['job']:<28} "
                      f"{run['status']:<11} {run['trigger']:<8} #{run['attempt']} "
                      f"slot {scheduled}{error}"))
    for skip in payload["skipped"]:
        lines.append((skip["recordedAt"], f"{skip['recordedAt']}  skip  {skip['job']:<28} "
                      f"{skip['reason']:<11} slot {skip['scheduledAt']}"))
    for alert in payload["alerts"]:
        lines.append((alert["at"], f"{alert['at']}  alert {alert['job']:<28} "
                      f"{alert['kind']:<11} {alert['message']}"))
    for _, line in sorted(lines, key=lambda item: item[0]):
        print(line)
    counts = (f"{len(payload['runs'])} runs, {len(payload['skipped'])} skipped, "
              f"{len(payload['alerts'])} alerts")
    print(counts)
