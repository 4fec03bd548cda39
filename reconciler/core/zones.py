"""The zone step of the schedule math: IANA zones, wall times and UTC epoch instants.

Instants are whole UTC epoch seconds (``int``). A wall time is a naive ``datetime`` read on the
clock of one zone. Python compares aware datetimes of one zone by wall time and ignores
``fold``, so nothing here compares aware datetimes: every comparison is on epoch numbers.

A wall time is one of three things in a zone (``wall_instants``):

* normal: it happens once;
* in a fold (clocks went back): it happens twice, ``first`` before ``second``;
* in a gap (clocks went forward): it never happens; ``gap_transition`` finds the instant at
  which the clocks jumped over it.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from reconciler.errors import ScheduleError

DAY = 86_400
# Zone files also hold names that are not zones of the world: "localtime" is the host's zone,
# which a spec must never depend on.
_NOT_WORLD_ZONES = {"localtime", "posixrules", "factory", "posix", "right"}
# Offset changes are months apart in every real zone, so sampling every 6 hours cannot step
# over a change and its reversal.
_SAMPLE_STEP = 6 * 3600
MIN_INSTANT = int(datetime(1900, 1, 1, tzinfo=UTC).timestamp())
MAX_INSTANT = int(datetime(9990, 1, 1, tzinfo=UTC).timestamp())


@dataclass(frozen=True, slots=True)
class Transition:
    """The instant a zone's UTC offset changed, with the offsets (seconds) either side."""

    instant: int
    offset_before: int
    offset_after: int

    @property
    def is_gap(self) -> bool:
        return self.offset_after > self.offset_before


@lru_cache(maxsize=1024)
def load_zone(name: str) -> ZoneInfo:
    """The zone called ``name``; ``ScheduleError`` with a suggestion if there is none."""
    if name.strip().lower() in _NOT_WORLD_ZONES or name.startswith(("posix/", "right/")):
        raise ScheduleError(_unknown_zone_message(name))
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise ScheduleError(_unknown_zone_message(name)) from None


def _unknown_zone_message(name: str) -> str:
    message = (
        f"unknown time zone {name!r}: use an IANA name such as UTC, Europe/Berlin "
        "or America/New_York"
    )
    by_lower = {key.lower(): key for key in _world_zone_names()}
    close = difflib.get_close_matches(name.lower(), list(by_lower), n=3, cutoff=0.6)
    if close:
        message += " (did you mean " + " or ".join(by_lower[c] for c in close) + "?)"
    return message


@lru_cache(maxsize=1)
def _world_zone_names() -> frozenset[str]:
    return frozenset(available_timezones())


def offset_at(zone: ZoneInfo, instant: int) -> int:
    """The zone's UTC offset in seconds at ``instant``."""
    offset = datetime.fromtimestamp(instant, zone).utcoffset()
    return int(offset.total_seconds()) if offset is not None else 0


def local_wall(zone: ZoneInfo, instant: int) -> datetime:
    """The naive wall time the zone's clocks show at ``instant`` (``fold`` cleared)."""
    return datetime.fromtimestamp(instant, zone).replace(tzinfo=None, fold=0)


def local_time(zone: ZoneInfo, instant: float) -> datetime:
    """The aware local time at ``instant``, for display (its ``fold`` is set correctly)."""
    return datetime.fromtimestamp(instant, zone)


def wall_instants(zone: ZoneInfo, wall: datetime) -> tuple[int, int]:
    """``(first, second)`` instants of ``wall``: equal if it happens once, ``first < second``
    in a fold, and ``first > second`` in a gap (where neither instant shows ``wall``)."""
    first = int(wall.replace(tzinfo=zone, fold=0).timestamp())
    second = int(wall.replace(tzinfo=zone, fold=1).timestamp())
    return first, second


def gap_transition(zone: ZoneInfo, gap_first: int, gap_second: int) -> int:
    """The instant the clocks jumped over a gap wall time whose ``wall_instants`` are
    ``(gap_first, gap_second)``: the offset before it holds at ``gap_second``, the offset after
    it at ``gap_first``, so it lies in between."""
    return _first_instant_with_offset_change(zone, gap_second, gap_first)


def transitions_between(zone: ZoneInfo, start: int, end: int) -> list[Transition]:
    """Every change of the zone's UTC offset in ``(start, end]``, in order."""
    return list(_transitions_cached(zone.key, start, end))


@lru_cache(maxsize=256)
def _transitions_cached(key: str, start: int, end: int) -> tuple[Transition, ...]:
    zone = load_zone(key)
    found: list[Transition] = []
    previous_instant, previous_offset = start, offset_at(zone, start)
    probe = start
    while probe < end:
        probe = min(probe + _SAMPLE_STEP, end)
        offset = offset_at(zone, probe)
        if offset != previous_offset:
            instant = _first_instant_with_offset_change(zone, previous_instant, probe)
            found.append(Transition(instant, previous_offset, offset))
        previous_instant, previous_offset = probe, offset
    return tuple(found)


def _first_instant_with_offset_change(zone: ZoneInfo, low: int, high: int) -> int:
    before = offset_at(zone, low)
    while high - low > 1:
        middle = (low + high) // 2
        if offset_at(zone, middle) == before:
            low = middle
        else:
            high = middle
    return high


def zone_abbreviation(zone: ZoneInfo, instant: float) -> str:
    """``EDT``, ``CET``, or ``+0545`` where the zone has no letters for its offset."""
    return local_time(zone, instant).tzname() or ""


def format_local(zone: ZoneInfo, instant: float, with_date: bool = True) -> str:
    """``2024-03-10 03:00 EDT`` (seconds shown only when not zero)."""
    local = local_time(zone, instant)
    pattern = "%Y-%m-%d %H:%M" if with_date else "%H:%M"
    if local.second:
        pattern += ":%S"
    return f"{local.strftime(pattern)} {local.tzname() or ''}".rstrip()


def add_seconds(wall: datetime, seconds: int) -> datetime | None:
    """``wall`` moved by whole seconds on the naive calendar; ``None`` past the calendar's end."""
    try:
        return wall + timedelta(seconds=seconds)
    except OverflowError:
        return None
