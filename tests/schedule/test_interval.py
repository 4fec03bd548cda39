"""Anchored intervals (DESIGN.md §3.2): the grid never moves, whatever the runs do."""

from __future__ import annotations

from reconciler.core.schedule import ScheduleState, next_fire, previous_fire
from reconciler.model.schedule import Schedule
from tests.schedule.support import utc

EVERY_30M_FROM_10 = Schedule.model_validate({"every": "30m", "anchor": "2024-05-01T10:00:00Z"})


def test_design_example_a_run_ending_at_1020_is_followed_by_1030() -> None:
    state = ScheduleState(last_nominal=utc("2024-05-01 10:00Z"),
                          last_run_started=utc("2024-05-01 10:00Z"))
    fire = next_fire("poller", EVERY_30M_FROM_10, state, utc("2024-05-01 10:20Z"))
    assert fire is not None and fire.nominal == utc("2024-05-01 10:30Z")


def test_a_run_past_the_next_slot_resumes_on_the_grid() -> None:
    # The 10:00 run ends at 10:45: 10:30 is behind, the next grid point is 11:00 (not 11:15).
    state = ScheduleState(last_nominal=utc("2024-05-01 10:00Z"),
                          last_run_started=utc("2024-05-01 10:00Z"))
    fire = next_fire("poller", EVERY_30M_FROM_10, state, utc("2024-05-01 10:45Z"))
    assert fire is not None and fire.nominal == utc("2024-05-01 11:00Z")


def test_a_manual_run_off_the_grid_does_not_shift_it() -> None:
    # A manual run started 10:07: the next fire is still 10:30, not 10:37.
    state = ScheduleState(last_run_started=utc("2024-05-01 10:07Z"))
    fire = next_fire("poller", EVERY_30M_FROM_10, state, utc("2024-05-01 10:08Z"))
    assert fire is not None and fire.nominal == utc("2024-05-01 10:30Z")


def test_a_slot_already_run_is_not_offered_again() -> None:
    # Computing from before the 10:30 slot, with 10:30 recorded as run: next is 11:00.
    state = ScheduleState(last_nominal=utc("2024-05-01 10:30Z"))
    fire = next_fire("poller", EVERY_30M_FROM_10, state, utc("2024-05-01 10:29Z"))
    assert fire is not None and fire.nominal == utc("2024-05-01 11:00Z")


def test_a_future_spec_anchor_is_the_first_fire() -> None:
    fire = next_fire("poller", EVERY_30M_FROM_10, ScheduleState(), utc("2024-04-01 00:00Z"))
    assert fire is not None and fire.nominal == utc("2024-05-01 10:00Z")
    before_anchor = utc("2024-05-01 09:59Z")
    assert previous_fire("poller", EVERY_30M_FROM_10, ScheduleState(), before_anchor) is None
    previous = previous_fire("poller", EVERY_30M_FROM_10, ScheduleState(), utc("2024-05-01 11:10Z"))
    assert previous is not None and previous.nominal == utc("2024-05-01 11:00Z")


def test_first_reconcile_anchor_from_state() -> None:
    # First reconciled at 09:13: fires at 09:43, 10:13, ...; nothing fired at 09:13 itself.
    schedule = Schedule.model_validate({"every": "30m"})
    state = ScheduleState(anchor=utc("2024-05-01 09:13Z"))
    fire = next_fire("poller", schedule, state, utc("2024-05-01 09:13Z"))
    assert fire is not None and fire.nominal == utc("2024-05-01 09:43Z")
    assert previous_fire("poller", schedule, state, utc("2024-05-01 09:13Z")) is None
    previous = previous_fire("poller", schedule, state, utc("2024-05-01 10:20Z"))
    assert previous is not None and previous.nominal == utc("2024-05-01 10:13Z")


def test_without_any_anchor_the_computation_instant_is_the_anchor() -> None:
    schedule = Schedule.model_validate({"every": "1h"})
    fire = next_fire("poller", schedule, ScheduleState(), utc("2024-05-01 09:13:20Z"))
    assert fire is not None and fire.nominal == utc("2024-05-01 10:13:20Z")
    assert previous_fire("poller", schedule, ScheduleState(), utc("2024-05-01 12:00Z")) is None


def test_millisecond_intervals_stay_exact_far_from_the_anchor() -> None:
    # 1.5 s from 2024-01-01 00:00Z: a million intervals later is 1,500,000 s = 17 d 8 h 40 min.
    schedule = Schedule.model_validate({"every": "1s500ms", "anchor": "2024-01-01T00:00:00Z"})
    start = utc("2024-01-18 08:39:59Z")
    fire = next_fire("poller", schedule, ScheduleState(), start)
    assert fire is not None and fire.nominal == utc("2024-01-18 08:40:00Z")


def test_intervals_ignore_dst() -> None:
    # Every 1h across the New York spring change: 06:00Z, 07:00Z, 08:00Z, evenly.
    schedule = Schedule.model_validate(
        {"every": "1h", "anchor": "2024-03-10T00:00:00Z", "timezone": "America/New_York"}
    )
    first = next_fire("poller", schedule, ScheduleState(), utc("2024-03-10 05:30Z"))
    assert first is not None and first.nominal == utc("2024-03-10 06:00Z")
    second = next_fire("poller", schedule, ScheduleState(), first.effective)
    assert second is not None and second.nominal == utc("2024-03-10 07:00Z")
