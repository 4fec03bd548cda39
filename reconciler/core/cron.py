"""Cron fires as UTC instants: the matching wall times of ``cronexpr`` put through a zone.

Every matching wall time yields the instants it fires at, by the Debian cron rules:

========================  ===========================  ==================================
wall time in the zone     fixed-time job               wildcard job (minute or hour
                          (minute and hour fixed)      field starts with ``*``)
========================  ===========================  ==================================
happens once              that instant                 that instant
in a fold (twice)         the first occurrence only    both occurrences
in a gap (never)          the instant of the jump      nothing
========================  ===========================  ==================================

The fire set is a property of the schedule alone, so "strictly after ``t``" and "at or before
``t``" just select from it: a computation that starts inside the second pass of a fold cannot
fire a fixed-time job there, and wall times that land on one instant fire once.

The search walks wall times in calendar order. Each wall time's *earliest* instant (its first
occurrence, or the jump for a gap) never decreases along the way, which is what lets the
search stop; its last occurrence can be later than the next wall time's first (a fold's second
pass), which is why the search starts up to one fold early and checks a few extra wall times.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from zoneinfo import ZoneInfo

from reconciler.core.cronexpr import CronExpression, parse_cron
from reconciler.core.zones import (
    DAY,
    MAX_INSTANT,
    MIN_INSTANT,
    add_seconds,
    gap_transition,
    load_zone,
    local_wall,
    offset_at,
    wall_instants,
)


@dataclass(frozen=True, slots=True)
class WallFires:
    """What one matching wall time contributes: its fires, and the bounds the search needs."""

    fires: tuple[int, ...]
    earliest: int        # first occurrence, or the jump instant for a gap wall time
    latest: int          # last occurrence (the jump instant for a gap wall time)
    gap_end: int | None  # the jump instant when the wall time is in a gap


@dataclass(frozen=True)
class CronSchedule:
    """A cron expression on the wall clock of one IANA zone."""

    expression: CronExpression
    zone: ZoneInfo

    @property
    def fixed_time(self) -> bool:
        return self.expression.fixed_time

    def fires_of(self, wall: datetime) -> WallFires:
        """The instants a matching wall time fires at, by the table in the module docstring."""
        first, second = wall_instants(self.zone, wall)
        if first == second:
            return WallFires((first,), first, first, None)
        if first < second:
            fires = (first,) if self.fixed_time else (first, second)
            return WallFires(fires, first, second, None)
        jump = gap_transition(self.zone, first, second)
        return WallFires((jump,) if self.fixed_time else (), jump, jump, jump)

    def next_after(self, instant: int) -> int | None:
        """The first fire strictly after ``instant``, or ``None`` if there is none."""
        if instant >= MAX_INSTANT:
            return None
        instant = max(instant, MIN_INSTANT)
        wall: datetime | None = self._first_wall_to_check(instant)
        best: int | None = None
        while wall is not None:
            wall = self.expression.next_wall(wall)
            if wall is None:
                break
            found = self.fires_of(wall)
            for fire in found.fires:
                if fire > instant and (best is None or fire < best):
                    best = fire
            if best is not None and found.earliest >= best:
                break
            wall = self._after(wall, found)
        return best

    def latest_at_or_before(self, instant: int) -> int | None:
        """The last fire at or before ``instant``, or ``None`` if there is none."""
        if instant < MIN_INSTANT:
            return None
        instant = min(instant, MAX_INSTANT)
        wall: datetime | None = self._last_wall_to_check(instant)
        best: int | None = None
        while wall is not None:
            wall = self.expression.previous_wall(wall)
            if wall is None:
                break
            found = self.fires_of(wall)
            for fire in found.fires:
                if fire <= instant and (best is None or fire > best):
                    best = fire
            if best is not None and found.latest <= best:
                break
            wall = self._before(wall, found)
        return best

    def _first_wall_to_check(self, instant: int) -> datetime:
        # Inside the first pass of a fold, wall times up to the fold's size behind the current
        # one will come round again, and their second occurrences are ahead.
        start = instant + 1
        wall = local_wall(self.zone, start)
        now_offset, later_offset = offset_at(self.zone, start), offset_at(self.zone, start + DAY)
        if later_offset < now_offset:
            fold = now_offset - later_offset
            if offset_at(self.zone, start + fold) < now_offset:
                wall = add_seconds(wall, -fold) or wall
        return wall

    def _last_wall_to_check(self, instant: int) -> datetime:
        # Inside the second pass of a fold, wall times up to the fold's size ahead of the
        # current one already happened, in the first pass.
        wall = local_wall(self.zone, instant)
        now_offset = offset_at(self.zone, instant)
        earlier_offset = offset_at(self.zone, instant - DAY)
        if earlier_offset > now_offset:
            fold = earlier_offset - now_offset
            if offset_at(self.zone, instant - fold) > now_offset:
                wall = add_seconds(wall, fold) or wall
        return wall

    def _after(self, wall: datetime, found: WallFires) -> datetime | None:
        if found.gap_end is not None and not self.fixed_time:
            # Nothing in a gap fires for a wildcard job: resume where the clocks landed.
            return local_wall(self.zone, found.gap_end)
        return add_seconds(wall, 1)

    def _before(self, wall: datetime, found: WallFires) -> datetime | None:
        if found.gap_end is not None and not self.fixed_time:
            return local_wall(self.zone, found.gap_end - 1)
        return add_seconds(wall, -1)


@lru_cache(maxsize=65_536)
def cron_schedule(
    expression: str, timezone: str = "UTC", with_seconds: bool = False
) -> CronSchedule:
    """The parsed, zone-bound schedule; cached, so a job's expression is parsed once.

    ``ScheduleError`` if the expression is invalid or never fires, or the zone is unknown."""
    return CronSchedule(parse_cron(expression, with_seconds), load_zone(timezone))
