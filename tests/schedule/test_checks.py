"""``check_schedule``: the validation hook, with errors and DST warnings worded for people."""

from __future__ import annotations

from reconciler.core.schedule import ScheduleProblem, check_schedule
from reconciler.model.schedule import Schedule
from tests.schedule.support import utc

NOW = utc("2026-12-01 00:00Z")


def problems(spec: dict[str, str], horizon_days: int = 366) -> list[ScheduleProblem]:
    return check_schedule(Schedule.model_validate(spec), NOW, horizon_days)


def test_a_plain_schedule_has_no_problems() -> None:
    assert problems({"cron": "0 17 * * 1-5", "timezone": "Asia/Shanghai"}) == []
    assert problems({"every": "30m"}) == []
    assert problems({"at": "2027-01-01"}) == []


def test_invalid_cron_is_an_error_on_the_cron_field() -> None:
    [problem] = problems({"cron": "61 * * * *"})
    assert (problem.severity, problem.field) == ("error", "cron")
    assert "61 is out of range for the minute field" in problem.message


def test_impossible_date_is_an_error() -> None:
    [problem] = problems({"cron": "0 0 30 2 *"})
    assert (problem.severity, problem.field) == ("error", "cron")
    assert "never fires" in problem.message and "February" in problem.message


def test_unknown_zone_is_an_error_on_the_timezone_field_with_suggestions() -> None:
    [problem] = problems({"cron": "0 9 * * *", "timezone": "Mars/Olympus"})
    assert (problem.severity, problem.field) == ("error", "timezone")
    assert "unknown time zone 'Mars/Olympus'" in problem.message
    [problem] = problems({"cron": "0 9 * * *", "timezone": "Europe/Berln"})
    assert "did you mean Europe/Berlin" in problem.message


def test_a_bad_zone_and_a_bad_cron_are_both_reported() -> None:
    zone, cron = problems({"cron": "0 0 30 2 *", "timezone": "Mars/Olympus"})
    assert (zone.field, cron.field) == ("timezone", "cron")


def test_the_hosts_zone_is_not_a_zone() -> None:
    [problem] = problems({"cron": "0 9 * * *", "timezone": "localtime"})
    assert problem.field == "timezone"


def test_a_next_fire_beyond_the_horizon_is_an_error() -> None:
    # From 2026-12-01 the next February 29th is 2028-02-29: 455 days away.
    [problem] = problems({"cron": "0 0 29 2 *"})
    assert (problem.severity, problem.field) == ("error", "cron")
    assert "2028-02-29 00:00 UTC, 455 days from now, beyond the 366-day horizon" in problem.message
    assert problems({"cron": "0 0 29 2 *"}, horizon_days=4 * 366) == []


def test_fixed_time_in_a_gap_warns_what_will_happen() -> None:
    [problem] = problems({"cron": "30 2 * * *", "timezone": "America/New_York"})
    assert (problem.severity, problem.field) == ("warning", "cron")
    assert problem.message == (
        "on 2027-03-14 02:30 does not exist in America/New_York (clocks jump from 02:00 EST to "
        "03:00 EDT); the job runs once at 03:00 EDT"
    )


def test_fixed_time_in_a_fold_warns_it_runs_once() -> None:
    [problem] = problems({"cron": "30 1 * * *", "timezone": "America/New_York"})
    assert problem.message == (
        "on 2027-11-07 01:30 happens twice in America/New_York (clocks go back from 02:00 EDT "
        "to 01:00 EST); the job runs once, at the first occurrence (01:30 EDT), not in the "
        "repeated pass"
    )


def test_wildcard_warns_of_skipped_and_doubled_fires() -> None:
    gap, fold = problems({"cron": "0 * * * *", "timezone": "America/New_York"})
    assert "02:00 does not exist" in gap.message and "skipped" in gap.message
    assert "01:00 happens twice" in fold.message
    assert "both occurrences" in fold.message and "01:00 EDT and 01:00 EST" in fold.message


def test_half_hour_zone_warnings() -> None:
    [gap] = problems({"cron": "15 2 * * *", "timezone": "Australia/Lord_Howe"})
    assert gap.message == (
        "on 2027-10-03 02:15 does not exist in Australia/Lord_Howe (clocks jump from 02:00 +1030 "
        "to 02:30 +11); the job runs once at 02:30 +11"
    )


def test_schedules_away_from_transitions_do_not_warn() -> None:
    assert problems({"cron": "0 12 * * *", "timezone": "Europe/Berlin"}) == []


def test_a_timezone_on_an_interval_or_one_shot_is_pointless() -> None:
    [problem] = problems({"every": "30m", "timezone": "Asia/Tokyo"})
    assert (problem.severity, problem.field) == ("warning", "timezone")
