"""Stagger (DESIGN.md §3.3): the offset formula, the default window, and nominal vs effective."""

from __future__ import annotations

import hashlib

import pytest

from reconciler.core.schedule import Fire, ScheduleState, next_fire, previous_fire
from reconciler.core.stagger import stagger_offset_ms, stagger_window_ms
from reconciler.model.schedule import Schedule
from tests.schedule.support import utc

FIVE_MINUTES_MS = 300_000


def test_offset_is_the_first_four_hash_bytes_big_endian_mod_the_window() -> None:
    # sha256("hourly-sync") starts 70 3e 41 c2 -> 0x703e41c2 = 1883128258;
    # 1883128258 mod 300000 = 28258 ms.
    assert stagger_offset_ms("hourly-sync", FIVE_MINUTES_MS) == 28_258
    # sha256("daily-digest") starts d6 c3 e8 7a -> 3603163258; mod 300000 = 163258 ms.
    assert stagger_offset_ms("daily-digest", FIVE_MINUTES_MS) == 163_258
    # The same formula written out from the design, for another name and window.
    digest = hashlib.sha256(b"nightly-backup").digest()
    assert stagger_offset_ms("nightly-backup", 3_600_000) == (
        int.from_bytes(digest[:4], "big") % 3_600_000
    )


def test_no_window_means_no_offset() -> None:
    assert stagger_offset_ms("hourly-sync", 0) == 0


@pytest.mark.parametrize(
    ("spec", "window_ms"),
    [
        ({"cron": "0 * * * *"}, FIVE_MINUTES_MS),
        ({"cron": "0 */2 * * *"}, FIVE_MINUTES_MS),
        ({"cron": "@hourly"}, FIVE_MINUTES_MS),
        ({"cron": "00 * * * *"}, FIVE_MINUTES_MS),
        ({"cron": "0 9 * * *"}, 0),
        ({"cron": "@daily"}, 0),
        ({"cron": "30 * * * *"}, 0),
        ({"cron": "*/15 * * * *"}, 0),
        ({"cron": "0 9-17 * * *"}, 0),
        ({"cron": "0 * * * *", "stagger": "0"}, 0),
        ({"cron": "0 9 * * *", "stagger": "1h"}, 3_600_000),
        ({"every": "30m"}, 0),
        ({"every": "30m", "stagger": "90s"}, 90_000),
    ],
)
def test_default_window_only_for_top_of_hour_expressions(
    spec: dict[str, str], window_ms: int
) -> None:
    assert stagger_window_ms(Schedule.model_validate(spec)) == window_ms


def test_fire_keeps_nominal_and_effective() -> None:
    schedule = Schedule.model_validate({"cron": "0 * * * *"})
    fire = next_fire("hourly-sync", schedule, ScheduleState(), utc("2024-05-01 09:30Z"))
    # 10:00 plus 28.258 s.
    assert fire == Fire(nominal=utc("2024-05-01 10:00Z"), effective=utc("2024-05-01 10:00:28.258Z"))


def test_the_staggered_slot_of_the_current_period_still_fires_if_ahead() -> None:
    schedule = Schedule.model_validate({"cron": "0 * * * *"})
    # At 10:00:10 the nominal 10:00 has passed but its effective 10:00:28.258 is ahead.
    fire = next_fire("hourly-sync", schedule, ScheduleState(), utc("2024-05-01 10:00:10Z"))
    assert fire is not None and fire.nominal == utc("2024-05-01 10:00Z")
    # At 10:00:30 it has started: next is 11:00.
    fire = next_fire("hourly-sync", schedule, ScheduleState(), utc("2024-05-01 10:00:30Z"))
    assert fire is not None and fire.nominal == utc("2024-05-01 11:00Z")
    # The due slot at 10:00:10 is still 09:00 (its effective start was 09:00:28.258).
    due = previous_fire("hourly-sync", schedule, ScheduleState(), utc("2024-05-01 10:00:10Z"))
    assert due is not None and due.nominal == utc("2024-05-01 09:00Z")


def test_a_schedule_edit_that_keeps_the_name_keeps_the_offset() -> None:
    before = Schedule.model_validate({"cron": "0 * * * *"})
    after = Schedule.model_validate({"cron": "0 */2 * * *", "timezone": "Europe/Berlin"})
    start = utc("2024-05-01 09:30Z")
    first = next_fire("hourly-sync", before, ScheduleState(), start)
    second = next_fire("hourly-sync", after, ScheduleState(), start)
    assert first is not None and second is not None
    assert first.effective - first.nominal == second.effective - second.nominal == pytest.approx(
        28.258
    )
