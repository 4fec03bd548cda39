"""Cron expressions on naive wall times: strict parsing, and the next/previous matching wall time.

Syntax is Vixie/Debian cron: five fields ``minute hour day-of-month month day-of-week`` holding
numbers, names (``jan``-``dec``, ``sun``-``sat``), ``*``, ranges ``a-b``, steps ``/n`` and lists
``a,b``; day-of-week 0 and 7 are both Sunday. With ``with_seconds`` a sixth field, the seconds
(0-59), comes LAST, as croniter reads it. Aliases: ``@yearly`` ``@annually`` ``@monthly``
``@weekly`` ``@daily`` ``@midnight`` ``@hourly``. Quartz extensions (``L``, ``W``, ``#``, ``?``,
``H``) are refused rather than half-supported.

Day rule (Vixie): if either day field starts with ``*``, a day must match both; otherwise it
may match either. croniter expands the fields; this module checks what croniter lets through
(reversed ranges, which croniter wraps around, and steps wider than the field) and matches.

Nothing here knows about zones: ``next_wall``/``previous_wall`` walk the naive calendar.
"""

from __future__ import annotations

import calendar
import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import lru_cache

from croniter import croniter
from croniter.croniter import CroniterError

from reconciler.errors import ScheduleError

ALIASES = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
FIELDS = ("minute", "hour", "day-of-month", "month", "day-of-week", "second")
_BOUNDS = {"minute": (0, 59), "hour": (0, 23), "day-of-month": (1, 31), "month": (1, 12),
           "day-of-week": (0, 7), "second": (0, 59)}
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_WEEKDAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
_NAMES = {"month": {n: i + 1 for i, n in enumerate(_MONTHS)},
          "day-of-week": {n: i for i, n in enumerate(_WEEKDAYS)}}
_TERM = re.compile(r"^(?:(\*)|([0-9a-z]+)(?:-([0-9a-z]+))?)(?:/([0-9]+))?$")
_FOREIGN = re.compile(r"[lw#?h]", re.IGNORECASE)
# The Gregorian calendar, weekdays included, repeats every 400 years: a date pattern that
# matches nothing in 400 consecutive years matches nothing ever.
CALENDAR_CYCLE_YEARS = 400
LAST_YEAR = 9998
SYNTAX_HELP = ("cron needs five fields: minute hour day-of-month month day-of-week "
               "(e.g. '30 2 * * 1-5'), or an alias such as @daily")


@dataclass(frozen=True, slots=True)
class CronExpression:
    """A parsed cron expression: sorted allowed values per field and the day rule."""

    source: str
    seconds: tuple[int, ...]
    minutes: tuple[int, ...]
    hours: tuple[int, ...]
    month_days: tuple[bool, ...]    # index 1..31
    months: tuple[bool, ...]        # index 1..12
    weekdays: tuple[bool, ...]      # index = date.weekday() (Monday 0)
    days_must_both_match: bool      # the Vixie rule: a day field starts with '*'
    fixed_time: bool                # neither minute nor hour starts with '*' (Debian DST rule)
    top_of_hour: bool               # minute 0, hour '*' or '*/N' (default stagger applies)
    fields: tuple[str, ...]         # the field texts after alias expansion

    def _day_ok(self, day: int, weekday: int) -> bool:
        if self.days_must_both_match:
            return self.month_days[day] and self.weekdays[weekday]
        return self.month_days[day] or self.weekdays[weekday]

    def next_wall(self, wall: datetime) -> datetime | None:
        """The first matching wall time at or after ``wall`` (whole seconds), or ``None``."""
        day = self._next_day(wall.year, wall.month, wall.day)
        if day is None:
            return None
        if day == (wall.year, wall.month, wall.day):
            clock = self._next_clock(wall.hour, wall.minute, wall.second)
            if clock is not None:
                return datetime(*day, *clock)
            tomorrow = _shift_date(day, 1)
            day = self._next_day(*tomorrow) if tomorrow else None
            if day is None:
                return None
        return datetime(*day, self.hours[0], self.minutes[0], self.seconds[0])

    def previous_wall(self, wall: datetime) -> datetime | None:
        """The last matching wall time at or before ``wall`` (whole seconds), or ``None``."""
        day = self._previous_day(wall.year, wall.month, wall.day)
        if day is None:
            return None
        if day == (wall.year, wall.month, wall.day):
            clock = self._previous_clock(wall.hour, wall.minute, wall.second)
            if clock is not None:
                return datetime(*day, *clock)
            yesterday = _shift_date(day, -1)
            day = self._previous_day(*yesterday) if yesterday else None
            if day is None:
                return None
        return datetime(*day, self.hours[-1], self.minutes[-1], self.seconds[-1])

    def _next_day(self, year: int, month: int, day: int) -> tuple[int, int, int] | None:
        last_year = min(year + CALENDAR_CYCLE_YEARS, LAST_YEAR)
        while year <= last_year:
            if self.months[month]:
                first_weekday, length = calendar.monthrange(year, month)
                weekday = (first_weekday + day - 1) % 7
                while day <= length:
                    if self._day_ok(day, weekday):
                        return year, month, day
                    day += 1
                    weekday = (weekday + 1) % 7
            year, month, day = (year + 1, 1, 1) if month == 12 else (year, month + 1, 1)
        return None

    def _previous_day(self, year: int, month: int, day: int) -> tuple[int, int, int] | None:
        first_year = max(year - CALENDAR_CYCLE_YEARS, 1)
        while year >= first_year:
            if self.months[month]:
                first_weekday, length = calendar.monthrange(year, month)
                day = min(day, length)
                weekday = (first_weekday + day - 1) % 7
                while day >= 1:
                    if self._day_ok(day, weekday):
                        return year, month, day
                    day -= 1
                    weekday = (weekday - 1) % 7
            year, month, day = (year - 1, 12, 31) if month == 1 else (year, month - 1, 31)
        return None

    def _next_clock(self, hour: int, minute: int, second: int) -> tuple[int, int, int] | None:
        hours, minutes, seconds = self.hours, self.minutes, self.seconds
        h = bisect_left(hours, hour)
        if h == len(hours):
            return None
        if hours[h] > hour:
            return hours[h], minutes[0], seconds[0]
        m = bisect_left(minutes, minute)
        if m < len(minutes):
            if minutes[m] > minute:
                return hour, minutes[m], seconds[0]
            s = bisect_left(seconds, second)
            if s < len(seconds):
                return hour, minute, seconds[s]
            if m + 1 < len(minutes):
                return hour, minutes[m + 1], seconds[0]
        return (hours[h + 1], minutes[0], seconds[0]) if h + 1 < len(hours) else None

    def _previous_clock(self, hour: int, minute: int, second: int) -> tuple[int, int, int] | None:
        hours, minutes, seconds = self.hours, self.minutes, self.seconds
        h = bisect_right(hours, hour) - 1
        if h < 0:
            return None
        if hours[h] < hour:
            return hours[h], minutes[-1], seconds[-1]
        m = bisect_right(minutes, minute) - 1
        if m >= 0:
            if minutes[m] < minute:
                return hour, minutes[m], seconds[-1]
            s = bisect_right(seconds, second) - 1
            if s >= 0:
                return hour, minute, seconds[s]
            if m >= 1:
                return hour, minutes[m - 1], seconds[-1]
        return (hours[h - 1], minutes[-1], seconds[-1]) if h >= 1 else None


def _shift_date(day: tuple[int, int, int], days: int) -> tuple[int, int, int] | None:
    try:
        shifted = date(*day) + timedelta(days=days)
    except OverflowError:
        return None
    return shifted.year, shifted.month, shifted.day


@lru_cache(maxsize=65_536)
def parse_cron(text: str, with_seconds: bool = False) -> CronExpression:
    """Parse and strictly check ``text``; ``ScheduleError`` says what is wrong and how to fix it.

    Cached: a job's expression is parsed once however often its next fire is computed."""
    fields = _split_fields(text, with_seconds)
    for name, field in zip(FIELDS, fields, strict=False):
        _check_field(name, field)
    try:
        expanded, _ = croniter.expand(" ".join(fields))
    except (CroniterError, ValueError) as exc:
        raise ScheduleError(f"invalid cron {text!r}: {exc}") from exc
    expression = _build(text, fields, expanded)
    _check_ever_fires(expression)
    return expression


def _split_fields(text: str, with_seconds: bool) -> list[str]:
    stripped = text.strip()
    if stripped.startswith("@"):
        alias = ALIASES.get(stripped.lower())
        if alias is None:
            raise ScheduleError(
                f"unknown cron alias {stripped!r}: use one of {', '.join(ALIASES)}"
            )
        return [*alias.split(), "0"] if with_seconds else alias.split()
    fields = stripped.lower().split()
    wanted = 6 if with_seconds else 5
    if len(fields) == wanted:
        return fields
    if with_seconds:
        raise ScheduleError(
            f"cron {text!r} has {len(fields)} fields; with withSeconds: true it needs six: "
            "minute hour day-of-month month day-of-week second (seconds last)"
        )
    hint = (" (a sixth field, seconds, needs withSeconds: true and comes last)"
            if len(fields) == 6 else "")
    raise ScheduleError(f"cron {text!r} has {len(fields)} fields: {SYNTAX_HELP}{hint}")


def _check_field(name: str, field: str) -> None:
    low, high = _BOUNDS[name]
    for term in field.split(","):
        match = _TERM.match(term)
        if match is None:
            raise ScheduleError(_term_problem(name, field, term))
        star, first, last, step = match.groups()
        if step is not None:
            _check_step(name, field, int(step), high - low + 1)
        if star:
            continue
        start = _value(name, first, low, high)
        if last is not None:
            end = _value(name, last, low, high)
            if start > end:
                raise ScheduleError(
                    f"range {first}-{last} in the {name} field is reversed: write it "
                    f"low-high, or as two pieces such as {first}-{high},{low}-{last}"
                )


def _term_problem(name: str, field: str, term: str) -> str:
    if _FOREIGN.search(term):
        return (f"{term!r} in the {name} field is not Vixie/Debian cron syntax (L, W, #, ? and H "
                "are not supported): use numbers, names, *, ranges a-b, steps /n and lists a,b")
    if term == "":
        return f"empty list item in the {name} field {field!r}"
    return (f"cannot read {term!r} in the {name} field: use numbers, names, *, ranges a-b, "
            "steps /n and lists a,b")


def _check_step(name: str, field: str, step: int, width: int) -> None:
    if step == 0:
        raise ScheduleError(f"step 0 in the {name} field {field!r} never advances: "
                            "use a step of 1 or more, e.g. */5")
    if step > width:
        raise ScheduleError(f"step {step} in the {name} field {field!r} is wider than the "
                            f"field ({width} values)")


def _value(name: str, token: str, low: int, high: int) -> int:
    if token.isdigit():
        value = int(token)
    elif token in _NAMES.get(name, {}):
        value = _NAMES[name][token]
    elif _FOREIGN.search(token):
        raise ScheduleError(_term_problem(name, token, token))
    else:
        names = {"month": " or jan-dec", "day-of-week": " or sun-sat"}.get(name, "")
        raise ScheduleError(f"cannot read {token!r} in the {name} field: use {low}-{high}{names}")
    if not low <= value <= high:
        raise ScheduleError(
            f"{token} is out of range for the {name} field (allowed {low}-{high})"
        )
    return value


def _build(text: str, fields: list[str], expanded: list[list[int | str]]) -> CronExpression:
    def values(index: int, low: int, high: int) -> tuple[int, ...]:
        items = expanded[index]
        if items == ["*"]:
            return tuple(range(low, high + 1))
        return tuple(sorted({int(value) for value in items}))

    month_days = set(values(2, 1, 31))
    months = set(values(3, 1, 12))
    # croniter numbers weekdays Sunday 0 (7 folded into 0); date.weekday() has Monday 0.
    weekdays = {(cron_day + 6) % 7 for cron_day in values(4, 0, 6)}
    minute, hour = fields[0], fields[1]
    return CronExpression(
        source=text,
        seconds=values(5, 0, 59) if len(fields) == 6 else (0,),
        minutes=values(0, 0, 59),
        hours=values(1, 0, 23),
        month_days=tuple(day in month_days for day in range(32)),
        months=tuple(month in months for month in range(13)),
        weekdays=tuple(weekday in weekdays for weekday in range(7)),
        days_must_both_match=fields[2].startswith("*") or fields[4].startswith("*"),
        fixed_time=not minute.startswith("*") and not hour.startswith("*"),
        top_of_hour=_is_top_of_hour(minute, hour),
        fields=tuple(fields),
    )


def _is_top_of_hour(minute: str, hour: str) -> bool:
    minute_is_zero = minute.isdigit() and int(minute) == 0
    return minute_is_zero and (hour == "*" or re.fullmatch(r"\*/[0-9]+", hour) is not None)


def _check_ever_fires(expression: CronExpression) -> None:
    # 2000-01-01 starts a 400-year cycle; any date pattern that can match does so inside it.
    if expression._next_day(2000, 1, 1) is not None:
        return
    raise ScheduleError(_never_fires_message(expression))


def _never_fires_message(expression: CronExpression) -> str:
    day_field, month_field = expression.fields[2], expression.fields[3]
    months = [m for m in range(1, 13) if expression.months[m]]
    longest = max(calendar.monthrange(2000, m)[1] for m in months)  # 2000 is a leap year
    if min(d for d in range(1, 32) if expression.month_days[d]) > longest:
        month_names = ", ".join(calendar.month_name[m] for m in months)
        return (f"cron {expression.source!r} never fires: day-of-month {day_field} does not "
                f"occur in {month_names} (month field {month_field})")
    return (f"cron {expression.source!r} never fires: no date in a whole {CALENDAR_CYCLE_YEARS}-"
            f"year calendar cycle matches day-of-month {day_field}, month {month_field} and "
            f"day-of-week {expression.fields[4]} together")
