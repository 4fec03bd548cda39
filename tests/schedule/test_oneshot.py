"""One-shots (``at``): ISO with or without offset, or a date; spent once completed."""

from __future__ import annotations

from reconciler.core.schedule import ScheduleState, next_fire, previous_fire, upcoming_fires
from reconciler.model.schedule import Schedule
from tests.schedule.support import utc

LAUNCH = Schedule.model_validate({"at": "2026-03-29T09:00:00+08:00"})
LAUNCH_AT = utc("2026-03-29 01:00Z")  # 09:00 +08:00


def test_fires_once_at_its_instant() -> None:
    fire = next_fire("launch", LAUNCH, ScheduleState(), utc("2026-03-01 00:00Z"))
    assert fire is not None and fire.nominal == fire.effective == LAUNCH_AT
    assert list(upcoming_fires("launch", LAUNCH, ScheduleState(), utc("2026-03-01 00:00Z"))) == [
        fire
    ]


def test_offsetless_times_are_utc_and_dates_are_midnight_utc() -> None:
    naive = Schedule.model_validate({"at": "2026-03-29T09:00:00"})
    fire = next_fire("launch", naive, ScheduleState(), utc("2026-03-01 00:00Z"))
    assert fire is not None and fire.nominal == utc("2026-03-29 09:00Z")
    date_only = Schedule.model_validate({"at": "2026-03-29"})
    fire = next_fire("launch", date_only, ScheduleState(), utc("2026-03-01 00:00Z"))
    assert fire is not None and fire.nominal == utc("2026-03-29 00:00Z")


def test_a_passed_one_shot_is_due_not_next() -> None:
    after = utc("2026-03-29 02:00Z")
    assert next_fire("launch", LAUNCH, ScheduleState(), after) is None
    due = previous_fire("launch", LAUNCH, ScheduleState(), after)
    assert due is not None and due.nominal == LAUNCH_AT


def test_a_completed_one_shot_has_no_next_or_due_fire() -> None:
    state = ScheduleState(last_run_started=LAUNCH_AT, completed_at=LAUNCH_AT + 60)
    assert next_fire("launch", LAUNCH, state, utc("2026-03-01 00:00Z")) is None
    assert previous_fire("launch", LAUNCH, state, utc("2026-04-01 00:00Z")) is None


def test_moving_at_later_than_the_last_run_fires_again() -> None:
    state = ScheduleState(last_run_started=LAUNCH_AT, completed_at=LAUNCH_AT + 60)
    moved = Schedule.model_validate({"at": "2026-04-02T09:00:00+08:00"})
    fire = next_fire("launch", moved, state, LAUNCH_AT + 120)
    assert fire is not None and fire.nominal == utc("2026-04-02 01:00Z")
