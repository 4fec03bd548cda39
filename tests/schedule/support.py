"""Helpers for the schedule tests: named instants written as text, read as UTC epoch seconds."""

from __future__ import annotations

from datetime import datetime

from reconciler.core.schedule import Fire, ScheduleState, next_fire, previous_fire
from reconciler.model.schedule import Schedule


def utc(text: str) -> float:
    """``"2024-03-10 07:00Z"`` or any ISO-8601 text with an offset, as UTC epoch seconds."""
    return datetime.fromisoformat(text.replace(" ", "T")).timestamp()


def exact(cron: str, timezone: str = "UTC", with_seconds: bool = False) -> Schedule:
    """A cron schedule with stagger turned off, so fires are the nominal instants."""
    return Schedule.model_validate(
        {"cron": cron, "timezone": timezone, "stagger": "0", "withSeconds": with_seconds}
    )


def fires_after(schedule: Schedule, start: str, count: int) -> list[float]:
    """The next ``count`` nominal fires after ``start``."""
    found: list[float] = []
    after = utc(start)
    state = ScheduleState()
    for _ in range(count):
        fire = next_fire("test-job", schedule, state, after)
        assert fire is not None
        found.append(fire.nominal)
        after = fire.effective
    return found


def previous(schedule: Schedule, at: str) -> float | None:
    fire: Fire | None = previous_fire("test-job", schedule, ScheduleState(), utc(at))
    return None if fire is None else fire.nominal
