"""Cron in time zones, across both DST transitions, with named instants worked out by hand.

Transitions used (2024):
* America/New_York: 03-10 02:00 EST -> 03:00 EDT at 07:00Z; 11-03 02:00 EDT -> 01:00 EST at 06:00Z.
* Europe/Berlin: 03-31 02:00 CET -> 03:00 CEST at 01:00Z; 10-27 03:00 CEST -> 02:00 CET at 01:00Z.
* Australia/Lord_Howe (30 minutes): 04-07 02:00 +11 -> 01:30 +1030 at 04-06 15:00Z;
  10-06 02:00 +1030 -> 02:30 +11 at 10-05 15:30Z.
* Pacific/Chatham (+1245/+1345): 04-07 03:45 +1345 -> 02:45 +1245 at 04-06 14:00Z;
  09-29 02:45 +1245 -> 03:45 +1345 at 09-28 14:00Z.
* Asia/Shanghai is +08:00 and Asia/Kathmandu +05:45 all year.
"""

from __future__ import annotations

import pytest

from tests.schedule.support import exact, fires_after, previous, utc

NEW_YORK = "America/New_York"
BERLIN = "Europe/Berlin"
LORD_HOWE = "Australia/Lord_Howe"
CHATHAM = "Pacific/Chatham"


# --- DESIGN.md worked examples -------------------------------------------------------------

def test_fixed_time_in_the_spring_gap_runs_once_at_the_jump() -> None:
    # 02:30 does not exist on 2024-03-10; the job runs at the jump, 03:00 EDT = 07:00Z, then
    # at 02:30 EDT (06:30Z) the next day.
    schedule = exact("30 2 * * *", NEW_YORK)
    assert fires_after(schedule, "2024-03-10 05:00Z", 2) == [
        utc("2024-03-10 07:00Z"), utc("2024-03-11 06:30Z"),
    ]


def test_fixed_time_in_the_fall_fold_runs_once_at_the_first_occurrence() -> None:
    # 01:30 happens at 01:30 EDT = 05:30Z and 01:30 EST = 06:30Z; only the first. The next
    # day's 01:30 EST = 06:30Z on 11-04.
    schedule = exact("30 1 * * *", NEW_YORK)
    assert fires_after(schedule, "2024-11-03 04:00Z", 2) == [
        utc("2024-11-03 05:30Z"), utc("2024-11-04 06:30Z"),
    ]


def test_fixed_time_never_fires_in_the_second_pass_even_when_starting_there() -> None:
    # 06:10Z is 01:10 EST, inside the repeated hour, before the second 01:30: no fire today.
    schedule = exact("30 1 * * *", NEW_YORK)
    assert fires_after(schedule, "2024-11-03 06:10Z", 1) == [utc("2024-11-04 06:30Z")]


def test_wildcard_fires_at_every_occurrence_in_the_fold() -> None:
    # 01:00 EDT = 05:00Z, 01:00 EST = 06:00Z, 02:00 EST = 07:00Z.
    schedule = exact("0 * * * *", NEW_YORK)
    assert fires_after(schedule, "2024-11-03 04:30Z", 3) == [
        utc("2024-11-03 05:00Z"), utc("2024-11-03 06:00Z"), utc("2024-11-03 07:00Z"),
    ]


# --- New York: more of the rules ----------------------------------------------------------

def test_wildcard_skips_wall_times_in_the_gap() -> None:
    # 01:30 EST = 06:30Z; 02:00 and 02:30 do not exist; 03:00 EDT = 07:00Z; 03:30 EDT = 07:30Z.
    schedule = exact("*/30 * * * *", NEW_YORK)
    assert fires_after(schedule, "2024-03-10 06:00Z", 3) == [
        utc("2024-03-10 06:30Z"), utc("2024-03-10 07:00Z"), utc("2024-03-10 07:30Z"),
    ]


def test_wildcard_second_occurrence_is_next_when_starting_in_the_first_pass() -> None:
    # At 01:30 EDT (05:30Z) the next "10 past" is 01:10 EST = 06:10Z, the second pass of a wall
    # time that is already behind on the clock face.
    schedule = exact("10 * * * *", NEW_YORK)
    assert fires_after(schedule, "2024-11-03 05:30Z", 2) == [
        utc("2024-11-03 06:10Z"), utc("2024-11-03 07:10Z"),
    ]


def test_wall_times_that_land_on_one_instant_fire_once() -> None:
    # 02:00 and 02:30 both fall in the gap and both run at the jump, 03:00 EDT = 07:00Z: once.
    # Next: 02:00 EDT = 06:00Z on 03-11.
    assert fires_after(exact("0,30 2 * * *", NEW_YORK), "2024-03-10 05:00Z", 2) == [
        utc("2024-03-10 07:00Z"), utc("2024-03-11 06:00Z"),
    ]
    # 02:00 (in the gap, runs at the jump) and 03:00 EDT are the same instant, 07:00Z: once.
    assert fires_after(exact("0 2,3 * * *", NEW_YORK), "2024-03-10 05:00Z", 2) == [
        utc("2024-03-10 07:00Z"), utc("2024-03-11 06:00Z"),
    ]


def test_fixed_time_started_in_the_first_pass_skips_the_second() -> None:
    # At 01:30 EDT (05:30Z) the wall time 01:10 is behind; it comes round again at 01:10 EST
    # (06:10Z), but a fixed-time job does not run in the repeated pass: next is 01:10 EST on
    # 11-04 = 06:10Z.
    assert fires_after(exact("10 1 * * *", NEW_YORK), "2024-11-03 05:30Z", 1) == [
        utc("2024-11-04 06:10Z")
    ]


def test_previous_fire_from_the_second_pass_is_the_first_pass_fire() -> None:
    # 06:10Z is 01:10 EST, before 01:30 on the clock face, yet the 01:30 fire already happened
    # in the first pass, at 01:30 EDT = 05:30Z.
    assert previous(exact("30 1 * * *", NEW_YORK), "2024-11-03 06:10Z") == utc("2024-11-03 05:30Z")


def test_previous_fire_around_the_fold() -> None:
    hourly = exact("0 * * * *", NEW_YORK)
    # 05:30Z = 01:30 EDT: the last fire was 01:00 EDT = 05:00Z.
    assert previous(hourly, "2024-11-03 05:30Z") == utc("2024-11-03 05:00Z")
    # 06:30Z = 01:30 EST: the last fire was 01:00 EST = 06:00Z.
    assert previous(hourly, "2024-11-03 06:30Z") == utc("2024-11-03 06:00Z")
    daily = exact("30 1 * * *", NEW_YORK)
    # 06:45Z = 01:45 EST: the only 01:30 fire today was the first, 05:30Z.
    assert previous(daily, "2024-11-03 06:45Z") == utc("2024-11-03 05:30Z")
    # 07:30Z = 03:30 EDT on 03-10: the last 02:30 fire ran at the jump, 07:00Z.
    assert previous(exact("30 2 * * *", NEW_YORK), "2024-03-10 07:30Z") == utc("2024-03-10 07:00Z")


# --- Europe/Berlin -------------------------------------------------------------------------

def test_berlin_spring_gap_and_fall_fold_for_a_fixed_time() -> None:
    daily = exact("30 2 * * *", BERLIN)
    # 02:30 does not exist on 03-31: runs at the jump, 03:00 CEST = 01:00Z.
    assert fires_after(daily, "2024-03-30 23:00Z", 1) == [utc("2024-03-31 01:00Z")]
    # 10-27: 02:30 CEST = 00:30Z only; next day 02:30 CET = 01:30Z.
    assert fires_after(daily, "2024-10-26 23:00Z", 2) == [
        utc("2024-10-27 00:30Z"), utc("2024-10-28 01:30Z"),
    ]


def test_berlin_fold_for_a_wildcard_minute() -> None:
    # "*/20 2 * * *" starts with '*': 02:00, 02:20, 02:40 CEST (00:00Z, 00:20Z, 00:40Z), then
    # the same in CET (01:00Z, 01:20Z, 01:40Z).
    assert fires_after(exact("*/20 2 * * *", BERLIN), "2024-10-26 23:30Z", 6) == [
        utc("2024-10-27 00:00Z"), utc("2024-10-27 00:20Z"), utc("2024-10-27 00:40Z"),
        utc("2024-10-27 01:00Z"), utc("2024-10-27 01:20Z"), utc("2024-10-27 01:40Z"),
    ]


# --- Australia/Lord_Howe: 30-minute changes --------------------------------------------------

def test_lord_howe_gap_runs_a_fixed_time_at_the_jump() -> None:
    # 02:15 on 10-06 is in the gap 02:00-02:30: runs at 02:30 +11 = 10-05 15:30Z; the next day
    # 02:15 +11 = 10-06 15:15Z.
    assert fires_after(exact("15 2 * * *", LORD_HOWE), "2024-10-05 14:00Z", 2) == [
        utc("2024-10-05 15:30Z"), utc("2024-10-06 15:15Z"),
    ]


def test_lord_howe_fold_runs_a_fixed_time_once() -> None:
    # 01:45 on 04-07 is in the repeated half hour 01:30-02:00: 01:45 +11 = 04-06 14:45Z only;
    # the next day 01:45 +1030 = 04-07 15:15Z.
    assert fires_after(exact("45 1 * * *", LORD_HOWE), "2024-04-06 13:00Z", 2) == [
        utc("2024-04-06 14:45Z"), utc("2024-04-07 15:15Z"),
    ]


def test_lord_howe_fold_fires_a_wildcard_twice() -> None:
    # 00:45 +11 = 13:45Z, 01:45 +11 = 14:45Z, 01:45 +1030 = 15:15Z, 02:45 +1030 = 16:15Z.
    assert fires_after(exact("45 * * * *", LORD_HOWE), "2024-04-06 13:00Z", 4) == [
        utc("2024-04-06 13:45Z"), utc("2024-04-06 14:45Z"),
        utc("2024-04-06 15:15Z"), utc("2024-04-06 16:15Z"),
    ]


# --- Pacific/Chatham: +12:45 / +13:45 ------------------------------------------------------

def test_chatham_gap_runs_a_fixed_time_at_the_jump() -> None:
    # 03:00 on 09-29 is in the gap 02:45-03:45: runs at 03:45 +1345 = 09-28 14:00Z; the next
    # day 03:00 +1345 = 09-29 13:15Z.
    assert fires_after(exact("0 3 * * *", CHATHAM), "2024-09-28 12:00Z", 2) == [
        utc("2024-09-28 14:00Z"), utc("2024-09-29 13:15Z"),
    ]


def test_chatham_fold_once_for_fixed_and_twice_for_wildcard() -> None:
    # 03:00 on 04-07 happens at 03:00 +1345 = 04-06 13:15Z and 03:00 +1245 = 14:15Z.
    assert fires_after(exact("0 3 * * *", CHATHAM), "2024-04-06 12:00Z", 2) == [
        utc("2024-04-06 13:15Z"), utc("2024-04-07 14:15Z"),
    ]
    # Hourly: 02:00 +1345 = 12:15Z, 03:00 +1345 = 13:15Z, 03:00 +1245 = 14:15Z,
    # 04:00 +1245 = 15:15Z.
    assert fires_after(exact("0 * * * *", CHATHAM), "2024-04-06 12:00Z", 4) == [
        utc("2024-04-06 12:15Z"), utc("2024-04-06 13:15Z"),
        utc("2024-04-06 14:15Z"), utc("2024-04-06 15:15Z"),
    ]


# --- Zones without DST ----------------------------------------------------------------------

def test_shanghai_weekday_evenings() -> None:
    # Friday 2024-03-08 10:00Z is 18:00 CST, after 17:00: next is Monday 17:00 CST = 09:00Z.
    assert fires_after(exact("0 17 * * 1-5", "Asia/Shanghai"), "2024-03-08 10:00Z", 1) == [
        utc("2024-03-11 09:00Z")
    ]


def test_shanghai_leap_day_is_the_previous_utc_day() -> None:
    # Midnight CST on 02-29 is 16:00Z on 02-28.
    assert fires_after(exact("0 0 29 2 *", "Asia/Shanghai"), "2024-01-01 00:00Z", 1) == [
        utc("2024-02-28 16:00Z")
    ]


def test_kathmandu_quarter_hour_offset() -> None:
    # 09:00 +0545 = 03:15Z.
    assert fires_after(exact("0 9 * * *", "Asia/Kathmandu"), "2024-01-01 00:00Z", 1) == [
        utc("2024-01-01 03:15Z")
    ]


def test_kathmandu_new_year() -> None:
    # 2024-12-31 18:00Z is 23:45 local; local midnight of 2025-01-01 is 18:15Z.
    assert fires_after(exact("@yearly", "Asia/Kathmandu"), "2024-12-31 18:00Z", 1) == [
        utc("2024-12-31 18:15Z")
    ]


@pytest.mark.parametrize(
    ("zone", "expected"),
    [
        ("UTC", "2024-02-29 12:00Z"),
        ("Asia/Shanghai", "2024-02-29 04:00Z"),       # 12:00 +08:00
        ("Asia/Kathmandu", "2024-02-29 06:15Z"),      # 12:00 +05:45
        (NEW_YORK, "2024-02-29 17:00Z"),              # 12:00 EST (-05:00)
        (BERLIN, "2024-02-29 11:00Z"),                # 12:00 CET (+01:00)
        (LORD_HOWE, "2024-02-29 01:00Z"),             # 12:00 +11 (southern summer)
        (CHATHAM, "2024-02-28 22:15Z"),               # 12:00 +1345 (southern summer)
    ],
)
def test_noon_on_the_leap_day_in_every_zone(zone: str, expected: str) -> None:
    assert fires_after(exact("0 12 29 2 *", zone), "2024-01-01 00:00Z", 1) == [utc(expected)]
