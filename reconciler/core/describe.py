"""Short human descriptions of schedules, for status tables and plans."""

from __future__ import annotations

from reconciler.core.timefmt import iso_utc
from reconciler.model.duration import format_duration
from reconciler.model.schedule import Schedule


def describe_schedule(schedule: Schedule, with_zone: bool = True) -> str:
    """``cron '0 9 * * *' Asia/Shanghai``, ``every 30m from ...``, ``at ...``; the zone is
    left out when it is UTC or the caller shows it in a column of its own."""
    if schedule.cron is not None:
        seconds = " (with seconds)" if schedule.with_seconds else ""
        zone = "" if schedule.timezone == "UTC" or not with_zone else f" {schedule.timezone}"
        return f"cron '{schedule.cron}'{seconds}{zone}"
    if schedule.every is not None:
        anchor = f" from {iso_utc(schedule.anchor.timestamp())}" if schedule.anchor else ""
        return f"every {format_duration(schedule.every)}{anchor}"
    assert schedule.at is not None
    return f"at {iso_utc(schedule.at.timestamp())}"
