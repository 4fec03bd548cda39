"""Schedule checks for ``reconciler validate``: errors that make a schedule unusable, and
warnings about what daylight-saving changes in the coming year will do to it.

``check_schedule(schedule, now, horizon_days=366) -> list[ScheduleProblem]``; each problem
names the key inside ``spec.schedule`` it is about (``cron``, ``timezone``, ``every``, ``at``).

Errors: a cron expression that does not parse, can never fire, or whose next fire is further
away than the horizon; an unknown time zone. Warnings: a cron fire within the next year that
falls in a DST gap or fold (saying exactly what will happen), and a ``timezone`` on a schedule
it cannot affect.
"""

from __future__ import annotations

from dataclasses import dataclass

from reconciler.core.cron import CronSchedule, cron_schedule
from reconciler.core.cronexpr import parse_cron
from reconciler.core.dst import dst_events
from reconciler.core.zones import DAY, format_local, load_zone
from reconciler.errors import ScheduleError
from reconciler.model.diagnostics import Severity
from reconciler.model.schedule import Schedule

DST_LOOKAHEAD_DAYS = 366


@dataclass(frozen=True, slots=True)
class ScheduleProblem:
    """One finding about ``spec.schedule.<field>``."""

    severity: Severity
    field: str
    message: str


def check_schedule(
    schedule: Schedule, now: float, horizon_days: int = 366
) -> list[ScheduleProblem]:
    """Everything wrong or surprising about ``schedule`` as seen from ``now`` (UTC epoch s)."""
    errors = _syntax_errors(schedule)
    if errors:
        return errors
    if schedule.cron is None:
        return _check_zone_use(schedule)
    cron = cron_schedule(schedule.cron, schedule.timezone, schedule.with_seconds)
    start = int(now)
    horizon_problem = _check_horizon(cron, schedule.cron, start, horizon_days)
    if horizon_problem is not None:
        return [horizon_problem]
    return [
        ScheduleProblem("warning", "cron", event.message)
        for event in dst_events(cron, start, start + DST_LOOKAHEAD_DAYS * DAY)
    ]


def _syntax_errors(schedule: Schedule) -> list[ScheduleProblem]:
    errors = []
    try:
        load_zone(schedule.timezone)
    except ScheduleError as exc:
        errors.append(ScheduleProblem("error", "timezone", str(exc)))
    if schedule.cron is not None:
        try:
            parse_cron(schedule.cron, schedule.with_seconds)
        except ScheduleError as exc:
            errors.append(ScheduleProblem("error", "cron", str(exc)))
    return errors


def _check_horizon(
    cron: CronSchedule, text: str, start: int, horizon_days: int
) -> ScheduleProblem | None:
    upcoming = cron.next_after(start)
    if upcoming is None:
        return ScheduleProblem(
            "error", "cron",
            f"cron {text!r} never fires again after {format_local(cron.zone, start)}",
        )
    days = (upcoming - start) / DAY
    if days <= horizon_days:
        return None
    return ScheduleProblem(
        "error", "cron",
        f"cron {text!r} next fires at {format_local(cron.zone, upcoming)}, {days:.0f} days "
        f"from now, beyond the {horizon_days}-day horizon: check the day-of-month, month and "
        "day-of-week fields",
    )


def _check_zone_use(schedule: Schedule) -> list[ScheduleProblem]:
    if schedule.timezone == "UTC":
        return []
    field = "every" if schedule.every is not None else "at"
    return [ScheduleProblem(
        "warning", "timezone",
        f"timezone {schedule.timezone} has no effect on an {field} schedule (instants are "
        "absolute): remove it, or give the offset in the time itself",
    )]
