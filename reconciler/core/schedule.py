"""The schedule facade the reconcile engine calls: when does a job fire next, and when did it last?

Pure: instants are UTC epoch seconds (``float``), passed in; nothing here reads a clock.

    next_fire(name, schedule, state, after)     -> Fire | None
        The first fire whose *effective* instant is strictly after ``after`` (for cron: after
        the current second). ``None`` when the schedule will never fire again (a spent or
        past one-shot, or a cron with no fire before the end of the calendar).
    previous_fire(name, schedule, state, at)    -> Fire | None
        The last fire whose effective instant is at or before ``at``: the slot that is due,
        for missed-run detection and catch-up. ``None`` if nothing has fired yet.
    upcoming_fires(name, schedule, state, after) -> Iterator[Fire]
        ``next_fire`` repeated: every fire after ``after``, in order, none twice.
    check_schedule(schedule, now, horizon_days=366) -> list[ScheduleProblem]
        The validation hook (re-exported from ``schedule_checks``).
    dst_note(schedule, fire)                    -> str | None
        For display: how a DST change moved or doubled this cron fire, if it did.

``Fire(nominal, effective)``: ``nominal`` is the slot the schedule names (the occurrence's
identity, recorded as ``scheduledAt``); ``effective = nominal + stagger offset`` is when the run
should start (``stagger.py``). A slot whose nominal instant has passed may still be next while
its effective instant is ahead; ``next_fire`` and ``previous_fire`` both select by effective
instant, so together they cover every fire exactly once.

``ScheduleState`` is what the math needs from persisted state:

* ``anchor``: when the job was first reconciled; the grid origin of an interval whose spec has
  no ``anchor``. With neither, ``next_fire`` uses ``after`` as the anchor (the caller should
  persist it) and ``previous_fire`` reports nothing.
* ``last_nominal``: the nominal instant of the latest scheduled run; a slot at or before it is
  never offered again (a restart cannot repeat an occurrence).
* ``last_run_started``: the start of the latest run of any trigger. An interval's next fire is
  the next grid point whose effective instant is after it (§3.2: ``last_start + every`` when
  runs start on the grid, and a manual run off the grid never shifts the grid). Cron fires do
  not move for manual runs.
* ``completed_at``: when a run last completed; a one-shot is spent once a run that started at
  or after its ``at`` completed.

Kinds: cron in ``cron.py`` (zones and DST in ``zones.py``, syntax in ``cronexpr.py``), intervals
in ``interval.py``, one-shots in ``oneshot.py``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

from reconciler.core.cron import cron_schedule
from reconciler.core.dst import fire_note
from reconciler.core.interval import IntervalGrid
from reconciler.core.oneshot import OneShot
from reconciler.core.schedule_checks import ScheduleProblem, check_schedule
from reconciler.core.stagger import job_offset_ms
from reconciler.model.schedule import Schedule

__all__ = [
    "Fire",
    "ScheduleProblem",
    "ScheduleState",
    "check_schedule",
    "dst_note",
    "next_fire",
    "previous_fire",
    "upcoming_fires",
]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MILLISECOND = timedelta(milliseconds=1)


@dataclass(frozen=True, slots=True)
class Fire:
    """One occurrence: the slot the schedule names, and when the run starts (UTC epoch s)."""

    nominal: float
    effective: float


@dataclass(frozen=True, slots=True)
class ScheduleState:
    """The persisted facts the schedule math depends on (UTC epoch seconds); see the module doc."""

    anchor: float | None = None
    last_nominal: float | None = None
    last_run_started: float | None = None
    completed_at: float | None = None


def next_fire(name: str, schedule: Schedule, state: ScheduleState, after: float) -> Fire | None:
    """The first fire of job ``name`` whose effective instant is strictly after ``after``.

    ``ScheduleError`` if the cron expression or zone is invalid (validation reports those)."""
    offset_ms = job_offset_ms(name, schedule)
    after_ms = _to_ms(after)
    nominal_ms = _next_nominal_ms(schedule, state, after_ms, offset_ms)
    return None if nominal_ms is None else _fire(nominal_ms, offset_ms)


def previous_fire(name: str, schedule: Schedule, state: ScheduleState, at: float) -> Fire | None:
    """The last fire of job ``name`` whose effective instant is at or before ``at``."""
    offset_ms = job_offset_ms(name, schedule)
    limit_ms = _to_ms(at) - offset_ms
    nominal_ms: int | None
    if schedule.cron is not None:
        cron = cron_schedule(schedule.cron, schedule.timezone, schedule.with_seconds)
        fire_s = cron.latest_at_or_before(limit_ms // 1000)
        nominal_ms = None if fire_s is None else fire_s * 1000
    elif schedule.every is not None:
        grid = _grid(schedule, state, None)
        nominal_ms = None if grid is None else grid.at_or_before(limit_ms)
    else:
        nominal_ms = _one_shot(schedule, state).at_or_before(limit_ms)
    return None if nominal_ms is None else _fire(nominal_ms, offset_ms)


def upcoming_fires(
    name: str, schedule: Schedule, state: ScheduleState, after: float
) -> Iterator[Fire]:
    """Every fire after ``after`` in order (endless for cron and intervals: take what you need)."""
    if schedule.every is not None and schedule.anchor is None and state.anchor is None:
        state = replace(state, anchor=after)
    while (fire := next_fire(name, schedule, state, after)) is not None:
        yield fire
        after = fire.effective
        state = replace(state, last_nominal=fire.nominal)


def dst_note(schedule: Schedule, fire: Fire) -> str | None:
    """A short note when a DST change moved or doubled this cron fire (for display)."""
    if schedule.cron is None:
        return None
    cron = cron_schedule(schedule.cron, schedule.timezone, schedule.with_seconds)
    return fire_note(cron, int(fire.nominal))


def _next_nominal_ms(
    schedule: Schedule, state: ScheduleState, after_ms: int, offset_ms: int
) -> int | None:
    # A nominal slot n qualifies when n + offset > after and n > last_nominal.
    floor_ms = after_ms - offset_ms
    if state.last_nominal is not None:
        floor_ms = max(floor_ms, _to_ms(state.last_nominal))
    if schedule.cron is not None:
        cron = cron_schedule(schedule.cron, schedule.timezone, schedule.with_seconds)
        fire_s = cron.next_after(floor_ms // 1000)
        return None if fire_s is None else fire_s * 1000
    if schedule.every is not None:
        if state.last_run_started is not None:
            floor_ms = max(floor_ms, _to_ms(state.last_run_started) - offset_ms)
        grid = _grid(schedule, state, after_ms)
        return None if grid is None else grid.next_after(floor_ms)
    return _one_shot(schedule, state).next_after(floor_ms)


def _grid(schedule: Schedule, state: ScheduleState, fallback_ms: int | None) -> IntervalGrid | None:
    assert schedule.every is not None
    every_ms = _timedelta_ms(schedule.every)
    if schedule.anchor is not None:
        return IntervalGrid(_datetime_ms(schedule.anchor), every_ms, first_index=0)
    # Anchored at the first reconcile: the job did not exist at the anchor itself.
    anchor_ms = _to_ms(state.anchor) if state.anchor is not None else fallback_ms
    return None if anchor_ms is None else IntervalGrid(anchor_ms, every_ms, first_index=1)


def _one_shot(schedule: Schedule, state: ScheduleState) -> OneShot:
    assert schedule.at is not None
    return OneShot(
        at_ms=_datetime_ms(schedule.at),
        completed_ms=None if state.completed_at is None else _to_ms(state.completed_at),
        last_start_ms=None if state.last_run_started is None else _to_ms(state.last_run_started),
    )


def _fire(nominal_ms: int, offset_ms: int) -> Fire:
    return Fire(nominal=nominal_ms / 1000, effective=(nominal_ms + offset_ms) / 1000)


def _to_ms(instant: float) -> int:
    # Fires sit on whole milliseconds. The slack absorbs float rounding in a value that was
    # itself computed as ms / 1000 (a previous fire handed back as "after").
    return math.floor(instant * 1000 + 1e-3)


def _timedelta_ms(value: timedelta) -> int:
    return value // _MILLISECOND


def _datetime_ms(value: datetime) -> int:
    return (value - _EPOCH) // _MILLISECOND
