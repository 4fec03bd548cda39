"""What daylight-saving changes do to a cron job, in words: for validation warnings and for
marking fires in ``reconciler next``.

A transition matters to a job when one of the job's matching wall times falls in the gap (the
wall times the clocks jump over) or in the fold (the wall times they show twice). What then
happens follows the Debian rules of ``cron.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from reconciler.core.cron import CronSchedule
from reconciler.core.zones import (
    Transition,
    add_seconds,
    format_local,
    local_wall,
    offset_at,
    transitions_between,
    wall_instants,
    zone_abbreviation,
)

# A fold or gap is at most a few hours; a per-second expression matches at most this many
# wall times in one, and a message lists only the first few.
_MAX_WALLS = 100_000
_LISTED = 3


@dataclass(frozen=True, slots=True)
class DstEvent:
    """A transition that moves, drops or repeats some of a job's fires."""

    transition: Transition
    walls: tuple[datetime, ...]
    message: str


def dst_events(cron: CronSchedule, start: int, end: int) -> list[DstEvent]:
    """The transitions in ``(start, end]`` that affect the job, each with what will happen."""
    events = []
    for transition in transitions_between(cron.zone, start, end):
        walls = _affected_walls(cron, transition)
        if walls:
            events.append(DstEvent(transition, walls, _describe(cron, transition, walls)))
    return events


def fire_note(cron: CronSchedule, nominal: int) -> str | None:
    """A short note when a DST change moved, doubled or dropped fires at ``nominal`` (a fire)."""
    wall = local_wall(cron.zone, nominal)
    first, second = wall_instants(cron.zone, wall)
    if first < second:
        if cron.fixed_time:
            return f"DST: {_clock(wall)} happens twice that day; runs only this 1st time"
        which = "1st" if nominal == first else "2nd"
        return f"DST: {_clock(wall)} happens twice that day; this is the {which} time"
    before, after = offset_at(cron.zone, nominal - 1), offset_at(cron.zone, nominal)
    if after > before and cron.fixed_time:
        walls = _affected_walls(cron, Transition(nominal, before, after))
        if walls:
            return f"DST: {_clock_list(walls)} skipped by the clocks; runs at the jump"
    if not cron.fixed_time:
        return _dropped_before(cron, nominal)
    return None


def _dropped_before(cron: CronSchedule, nominal: int) -> str | None:
    previous = cron.latest_at_or_before(nominal - 1)
    if previous is None:
        return None
    for transition in transitions_between(cron.zone, previous, nominal):
        walls = _affected_walls(cron, transition) if transition.is_gap else ()
        if walls:
            return f"DST: {_clock_list(walls)} did not happen (clocks jumped); skipped"
    return None


def _affected_walls(cron: CronSchedule, transition: Transition) -> tuple[datetime, ...]:
    low, high = _wall_span(cron, transition)
    found: list[datetime] = []
    wall = cron.expression.next_wall(low)
    while wall is not None and wall < high and len(found) < _MAX_WALLS:
        found.append(wall)
        following = add_seconds(wall, 1)
        wall = cron.expression.next_wall(following) if following is not None else None
    return tuple(found)


def _wall_span(cron: CronSchedule, transition: Transition) -> tuple[datetime, datetime]:
    """The wall times ``[low, high)`` the gap skips or the fold repeats."""
    just_before = local_wall(cron.zone, transition.instant - 1)
    edge_before = add_seconds(just_before, 1) or just_before
    edge_after = local_wall(cron.zone, transition.instant)
    if transition.is_gap:
        return edge_before, edge_after
    return edge_after, edge_before


def _describe(cron: CronSchedule, transition: Transition, walls: tuple[datetime, ...]) -> str:
    zone = cron.zone
    instant = transition.instant
    day = walls[0].strftime("%Y-%m-%d")
    plural = len(walls) > 1
    change = (
        f"clocks {'jump' if transition.is_gap else 'go back'} from "
        f"{_clock(add_seconds(local_wall(zone, instant - 1), 1) or walls[0])} "
        f"{zone_abbreviation(zone, instant - 1)} to {format_local(zone, instant, with_date=False)}"
    )
    what = f"on {day} {_clock_list(walls)} {'do' if plural else 'does'}"
    if transition.is_gap:
        head = f"{what} not exist in {zone.key} ({change})"
        if cron.fixed_time:
            return f"{head}; the job runs once at {format_local(zone, instant, with_date=False)}"
        return f"{head}; {'those fires are' if plural else 'that fire is'} skipped"
    head = (f"on {day} {_clock_list(walls)} {'happen' if plural else 'happens'} twice in "
            f"{zone.key} ({change})")
    first, second = wall_instants(zone, walls[0])
    if cron.fixed_time:
        return (f"{head}; the job runs once, at the first occurrence "
                f"({format_local(zone, first, with_date=False)}), not in the repeated pass")
    example = "each, e.g. " if plural else ""
    return (f"{head}; the job runs at both occurrences of {example}"
            f"{format_local(zone, first, with_date=False)} and "
            f"{format_local(zone, second, with_date=False)}")


def _clock(wall: datetime) -> str:
    return wall.strftime("%H:%M:%S" if wall.second else "%H:%M")


def _clock_list(walls: tuple[datetime, ...]) -> str:
    shown = [_clock(wall) for wall in walls[:_LISTED]]
    if len(walls) > _LISTED:
        return ", ".join(shown) + f" and {len(walls) - _LISTED} more"
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]
