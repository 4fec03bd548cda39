"""Cron syntax in UTC: fields, names, steps, lists, aliases, the seconds field, the Vixie day rule,
strict validation, and "strictly after the current second". Expected instants are worked out
by hand in the comments (weekdays from the calendar: 2024-04-01 is a Monday)."""

from __future__ import annotations

import pytest

from reconciler.core.cronexpr import parse_cron
from reconciler.errors import ScheduleError
from tests.schedule.support import exact, fires_after, previous, utc


@pytest.mark.parametrize(
    ("alias", "start", "expected"),
    [
        # Midnight on January 1st.
        ("@yearly", "2024-06-01 12:00Z", "2025-01-01 00:00Z"),
        ("@annually", "2024-12-31 23:59:59Z", "2025-01-01 00:00Z"),
        # The 1st of the month; January 31st rolls into February.
        ("@monthly", "2024-01-31 12:00Z", "2024-02-01 00:00Z"),
        # Sunday midnight: 2024-05-01 is a Wednesday, the next Sunday is the 5th.
        ("@weekly", "2024-05-01 00:00Z", "2024-05-05 00:00Z"),
        ("@daily", "2024-05-01 00:00Z", "2024-05-02 00:00Z"),
        ("@midnight", "2024-05-01 23:00Z", "2024-05-02 00:00Z"),
        ("@hourly", "2024-05-01 10:15Z", "2024-05-01 11:00Z"),
        ("@DAILY", "2024-05-01 00:00Z", "2024-05-02 00:00Z"),
    ],
)
def test_aliases(alias: str, start: str, expected: str) -> None:
    assert fires_after(exact(alias), start, 1) == [utc(expected)]


def test_seconds_are_the_sixth_field_when_opted_in() -> None:
    # "0 * * * * 30": minute 0 of every hour, second 30 -> 10:00:30, then 11:00:30.
    schedule = exact("0 * * * * 30", with_seconds=True)
    assert fires_after(schedule, "2024-05-01 10:00:00Z", 2) == [
        utc("2024-05-01 10:00:30Z"), utc("2024-05-01 11:00:30Z"),
    ]
    # Every 20 seconds: from 10:00:05 -> 10:00:20, 10:00:40, 10:01:00.
    schedule = exact("* * * * * */20", with_seconds=True)
    assert fires_after(schedule, "2024-05-01 10:00:05Z", 3) == [
        utc("2024-05-01 10:00:20Z"), utc("2024-05-01 10:00:40Z"), utc("2024-05-01 10:01:00Z"),
    ]


def test_an_alias_with_seconds_fires_at_second_zero() -> None:
    assert fires_after(exact("@hourly", with_seconds=True), "2024-05-01 10:15Z", 1) == [
        utc("2024-05-01 11:00:00Z")
    ]


@pytest.mark.parametrize(
    ("cron", "with_seconds", "hint"),
    [
        ("0 * * * * 30", False, "withSeconds: true"),
        ("0 * * * *", True, "seconds last"),
        ("0 * * *", False, "five fields"),
        ("", False, "five fields"),
    ],
)
def test_field_count_is_checked_with_a_hint(cron: str, with_seconds: bool, hint: str) -> None:
    with pytest.raises(ScheduleError, match=hint):
        parse_cron(cron, with_seconds)


def test_names_ranges_steps_and_lists() -> None:
    # 09:00 and 09:30 on weekdays of January to March. 2024-01-05 is a Friday, so after its
    # 09:30 the next fire is Monday the 8th at 09:00.
    schedule = exact("0,30 9 * jan-mar mon-fri")
    assert fires_after(schedule, "2024-01-05 09:00Z", 3) == [
        utc("2024-01-05 09:30Z"), utc("2024-01-08 09:00Z"), utc("2024-01-08 09:30Z"),
    ]
    # March 29th 2024 is a Friday: after it the next weekday in the months is in 2025
    # (2025-01-01 is a Wednesday).
    assert fires_after(schedule, "2024-03-29 09:30Z", 1) == [utc("2025-01-01 09:00Z")]


def test_day_of_week_seven_is_sunday() -> None:
    # 2024-05-05 is a Sunday.
    assert fires_after(exact("0 0 * * 7"), "2024-05-01 00:00Z", 1) == [utc("2024-05-05 00:00Z")]
    assert fires_after(exact("0 0 * * sun"), "2024-05-01 00:00Z", 1) == [utc("2024-05-05 00:00Z")]


def test_vixie_day_rule_either_field_when_both_are_restricted() -> None:
    # "1st of the month OR Monday". From Tuesday 2024-04-02: Monday the 8th; from Monday the
    # 29th: Wednesday May 1st (the 1st), then Monday May 6th.
    schedule = exact("0 0 1 * 1")
    assert fires_after(schedule, "2024-04-02 00:00Z", 1) == [utc("2024-04-08 00:00Z")]
    assert fires_after(schedule, "2024-04-29 00:00Z", 2) == [
        utc("2024-05-01 00:00Z"), utc("2024-05-06 00:00Z"),
    ]


def test_vixie_day_rule_a_range_is_not_first_monday() -> None:
    # "1-7 OR Monday", the classic surprise: Monday the 15th fires although it is not in 1-7.
    schedule = exact("0 0 1-7 * 1")
    assert fires_after(schedule, "2024-04-08 00:00Z", 1) == [utc("2024-04-15 00:00Z")]


def test_vixie_day_rule_both_fields_when_one_starts_with_a_star() -> None:
    # "*/2" in day-of-month starts with '*': odd days AND Monday. Mondays of April 2024 are the
    # 1st, 8th, 15th, 22nd and 29th; after the 2nd the first odd one is the 15th.
    schedule = exact("0 0 */2 * 1")
    assert fires_after(schedule, "2024-04-02 00:00Z", 2) == [
        utc("2024-04-15 00:00Z"), utc("2024-04-29 00:00Z"),
    ]
    # A plain '*' day-of-month leaves day-of-week alone: every Monday.
    assert fires_after(exact("0 0 * * 1"), "2024-04-02 00:00Z", 1) == [utc("2024-04-08 00:00Z")]


def test_next_fire_is_strictly_after_the_current_second() -> None:
    hourly = exact("0 * * * *")
    # Exactly on a fire: that one is not "next".
    assert fires_after(hourly, "2024-05-01 10:00:00Z", 1) == [utc("2024-05-01 11:00Z")]
    # Half a second into the fire's second: still the same second, so not "next".
    assert fires_after(hourly, "2024-05-01 10:00:00.500Z", 1) == [utc("2024-05-01 11:00Z")]
    # Half a second before: the fire is in the next second.
    assert fires_after(hourly, "2024-05-01 09:59:59.500Z", 1) == [utc("2024-05-01 10:00Z")]


def test_previous_fire_is_at_or_before() -> None:
    hourly = exact("0 * * * *")
    assert previous(hourly, "2024-05-01 10:00:00Z") == utc("2024-05-01 10:00Z")
    assert previous(hourly, "2024-05-01 10:59:59Z") == utc("2024-05-01 10:00Z")
    assert previous(hourly, "2024-05-01 09:59:59Z") == utc("2024-05-01 09:00Z")


def test_leap_days() -> None:
    leap = exact("0 0 29 2 *")
    assert fires_after(leap, "2024-01-01 00:00Z", 1) == [utc("2024-02-29 00:00Z")]
    # 2100 is divisible by 100 and not by 400: no February 29th; next leap year is 2104.
    assert fires_after(leap, "2096-03-01 00:00Z", 1) == [utc("2104-02-29 00:00Z")]
    assert previous(leap, "2103-12-31 00:00Z") == utc("2096-02-29 00:00Z")


def test_month_and_year_ends() -> None:
    # The 31st skips months without one: after January 31st comes March 31st.
    assert fires_after(exact("0 0 31 * *"), "2024-01-31 00:00Z", 2) == [
        utc("2024-03-31 00:00Z"), utc("2024-05-31 00:00Z"),
    ]
    # The last minute of the year, then the same a year later.
    assert fires_after(exact("59 23 31 12 *"), "2024-12-31 23:59:00Z", 1) == [
        utc("2025-12-31 23:59:00Z")
    ]
    # Every 10 minutes across the year boundary.
    assert fires_after(exact("*/10 * * * *"), "2024-12-31 23:55Z", 2) == [
        utc("2025-01-01 00:00Z"), utc("2025-01-01 00:10Z"),
    ]


@pytest.mark.parametrize(
    ("cron", "words"),
    [
        ("61 * * * *", ["61", "minute", "0-59"]),
        ("0 24 * * *", ["24", "hour", "0-23"]),
        ("0 0 0 * *", ["day-of-month", "1-31"]),
        ("0 0 1 13 *", ["month", "1-12"]),
        ("0 0 * * 8", ["day-of-week", "0-7"]),
        ("*/0 * * * *", ["step 0", "minute"]),
        ("0 0 1-31/0 * *", ["step 0", "day-of-month"]),
        ("*/61 * * * *", ["step 61", "wider"]),
        ("5-1 * * * *", ["reversed", "5-59,0-1"]),
        ("0 22-2 * * *", ["reversed", "hour"]),
        ("0 0 * * sat-sun", ["reversed", "day-of-week"]),
        ("0 0 30 2 *", ["never fires", "February"]),
        ("0 0 31 4,6,9,11 *", ["never fires", "April", "November"]),
        ("0 0 L * *", ["not Vixie", "L"]),
        ("0 0 1W * *", ["not Vixie"]),
        ("0 0 * * 5#3", ["not Vixie"]),
        ("0 0 ? * *", ["not Vixie"]),
        ("H * * * *", ["not Vixie"]),
        ("0 0 * foo *", ["month", "jan-dec"]),
        ("0 0 * * funday", ["day-of-week", "sun-sat"]),
        ("0 0,,1 * * *", ["empty list item"]),
        ("@reboot", ["alias", "@hourly"]),
    ],
)
def test_strict_validation_says_what_is_wrong(cron: str, words: list[str]) -> None:
    with pytest.raises(ScheduleError) as caught:
        parse_cron(cron)
    for word in words:
        assert word in str(caught.value)


def test_parsed_expressions_are_cached() -> None:
    assert parse_cron("17 3 * * *") is parse_cron("17 3 * * *")
