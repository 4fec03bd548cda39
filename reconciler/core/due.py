"""What to do about a job whose pending fire has come: run, skip (with a reason), or wait.

Pure. ``resolve_due`` looks at every slot of the job that is due by ``now`` (one in steady
state; several after downtime or a long run) and decides, in this order:

1. a pending retry of an occurrence that failed runs as trigger ``retry``;
2. a suspended job skips every due slot (``suspended``);
3. a slot later than ``startingDeadline`` is skipped (``missed``); a slot older than the
   ``catchUp.window`` is skipped (``outside-window``);
4. if the job is running, ``concurrencyPolicy`` decides: ``Forbid`` skips (``overlap``),
   ``Allow`` starts up to ``maxConcurrent``, ``Replace`` interrupts the running run and starts,
   ``Queue`` waits (the slot stays pending until the run ends);
5. one slot in steady state runs (trigger ``schedule``); several slots, or a slot that was
   due before the daemon started, follow ``catchUp.policy``: ``latest`` runs the newest once
   and records the others (``catchup-latest``), ``all`` runs the oldest and keeps the rest
   pending, so they replay in order one after another, ``none`` records them all
   (``catchup-none``). A ``Queue`` job whose slots piled up behind a run runs the first and
   records the rest (``overlap``).

Only the slots a decision consumes leave the pending fire; a crash between deciding and
persisting loses nothing, because deciding and starting are persisted in one transaction.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from reconciler.core.jobview import DesiredJob, is_retry, pending_fire, schedule_state
from reconciler.core.schedule import Fire, next_fire
from reconciler.errors import ScheduleError
from reconciler.model.enums import CatchUpPolicy, ConcurrencyPolicy
from reconciler.model.state import JobState, Trigger, evolve

MAX_SLOTS_PER_PASS = 1000  # bounds the work (and the skip records) of one resolution


@dataclass(frozen=True)
class Due:
    """A run to start now: which slot, why, which attempt."""

    name: str
    fire: Fire
    trigger: Trigger
    attempt: int = 1


@dataclass(frozen=True)
class Skip:
    fire: Fire
    reason: str


@dataclass(frozen=True)
class Decision:
    start: Due | None
    skips: tuple[Skip, ...]
    state: JobState
    interrupt_running: bool = False
    wait: bool = False


@dataclass(frozen=True)
class Activity:
    """What the runtime knows about the job's runs right now."""

    running: int = 0
    running_catchup: bool = False  # a catch-up replay (policy all) is in flight
    # When this daemon started: a slot due before it was missed while nothing was running.
    started_at: float = float("-inf")


def resolve_due(
    desired: DesiredJob, state: JobState, now: float, activity: Activity
) -> Decision | None:
    """``None`` when nothing is due (or the job is disabled)."""
    pending = pending_fire(state)
    if state.disabled or pending is None or pending.effective > now:
        return None
    if is_retry(state):
        if activity.running:
            return Decision(None, (), state, wait=True)
        due = Due(state.name, pending, "retry", attempt=state.consecutive_errors + 1)
        return _consume(desired, state, [pending], due, (), now)
    slots, lookahead = _due_slots(desired, state, pending, now)
    spec = desired.spec.spec
    if spec.suspend:
        return _consume(desired, state, slots, None, _skips(slots, "suspended"), now)
    slots, dropped = _drop_late(desired, slots, now)
    if not slots:
        return _consume(desired, state, [*dropped_fires(dropped)], None, dropped, now)
    if activity.running:
        return _while_running(desired, state, slots, dropped, now, activity)
    return _when_free(desired, state, slots, dropped, now, activity, lookahead)


def dropped_fires(skips: tuple[Skip, ...]) -> list[Fire]:
    return [skip.fire for skip in skips]


@dataclass(frozen=True)
class _Lookahead:
    """The first fire after ``after`` (not due yet), found while collecting the due slots:
    the pending fire once ``after`` is consumed, so the common case computes it once."""

    after: Fire
    fire: Fire | None


def _due_slots(desired: DesiredJob, state: JobState, first: Fire, now: float
               ) -> tuple[list[Fire], _Lookahead | None]:
    slots = [first]
    facts = schedule_state(desired, state, last_nominal=first.nominal)
    schedule = desired.spec.spec.schedule
    while len(slots) < MAX_SLOTS_PER_PASS:
        try:
            fire = next_fire(desired.name, schedule, facts, slots[-1].effective)
        except ScheduleError:
            return slots, None
        if fire is None or fire.effective > now:
            return slots, _Lookahead(slots[-1], fire)
        slots.append(fire)
        facts = replace(facts, last_nominal=fire.nominal)
    return slots, None


def _drop_late(
    desired: DesiredJob, slots: list[Fire], now: float
) -> tuple[list[Fire], tuple[Skip, ...]]:
    spec = desired.spec.spec
    kept: list[Fire] = []
    dropped: list[Skip] = []
    deadline = spec.starting_deadline.total_seconds() if spec.starting_deadline else None
    window = spec.catch_up.window.total_seconds() if spec.catch_up.window else None
    for fire in slots:
        if deadline is not None and now - fire.effective > deadline:
            dropped.append(Skip(fire, "missed"))
        elif window is not None and now - fire.nominal > window:
            dropped.append(Skip(fire, "outside-window"))
        else:
            kept.append(fire)
    return kept, tuple(dropped)


def _while_running(
    desired: DesiredJob, state: JobState, slots: list[Fire], dropped: tuple[Skip, ...],
    now: float, activity: Activity,
) -> Decision:
    spec = desired.spec.spec
    policy = spec.concurrency_policy
    if activity.running_catchup and spec.catch_up.policy is CatchUpPolicy.ALL:
        return Decision(None, (), state, wait=True)  # the replay continues when this run ends
    if policy is ConcurrencyPolicy.QUEUE:
        return Decision(None, (), state, wait=True)
    latest = slots[-1]
    older = _skips(slots[:-1], "overlap")
    if policy is ConcurrencyPolicy.REPLACE:
        due = Due(state.name, latest, "schedule")
        decision = _consume(desired, state, slots, due, dropped + older, now)
        return replace(decision, interrupt_running=True)
    if policy is ConcurrencyPolicy.ALLOW and activity.running < spec.max_concurrent:
        return _consume(desired, state, slots, Due(state.name, latest, "schedule"),
                        dropped + older, now)
    return _consume(desired, state, slots, None, dropped + _skips(slots, "overlap"), now)


def _when_free(
    desired: DesiredJob, state: JobState, slots: list[Fire], dropped: tuple[Skip, ...],
    now: float, activity: Activity, lookahead: _Lookahead | None = None,
) -> Decision:
    spec = desired.spec.spec
    missed = slots[0].effective < activity.started_at
    if len(slots) == 1 and not missed:
        return _consume(desired, state, slots, Due(state.name, slots[0], "schedule"), dropped,
                        now, lookahead)
    if spec.concurrency_policy is ConcurrencyPolicy.QUEUE and not missed:
        due = Due(state.name, slots[0], "schedule")
        return _consume(desired, state, slots, due, dropped + _skips(slots[1:], "overlap"), now)
    policy = spec.catch_up.policy
    if policy is CatchUpPolicy.NONE:
        return _consume(desired, state, slots, None, dropped + _skips(slots, "catchup-none"), now)
    if policy is CatchUpPolicy.ALL:
        due = Due(state.name, slots[0], "catchup")
        return _consume(desired, state, slots[:1], due, dropped, now)
    due = Due(state.name, slots[-1], "catchup")
    return _consume(desired, state, slots, due, dropped + _skips(slots[:-1], "catchup-latest"),
                    now)


def _skips(slots: list[Fire], reason: Literal[
        "overlap", "suspended", "catchup-none", "catchup-latest"]) -> tuple[Skip, ...]:
    return tuple(Skip(fire, reason) for fire in slots)


def _consume(
    desired: DesiredJob, state: JobState, consumed: list[Fire], start: Due | None,
    skips: tuple[Skip, ...], now: float, lookahead: _Lookahead | None = None,
) -> Decision:
    """Advance the pending fire past the consumed slots (and everything the start covers)."""
    last = max([fire.nominal for fire in consumed] + [s.fire.nominal for s in skips])
    if state.last_nominal_at is not None:
        last = max(last, state.last_nominal_at)
    if lookahead is not None and consumed and consumed[-1] is lookahead.after \
            and last == lookahead.after.nominal:
        fire = lookahead.fire  # the same facts and instant _due_slots asked about
    else:
        schedule = desired.spec.spec.schedule
        try:
            after = consumed[-1].effective if consumed else now
            facts = schedule_state(desired, state, last_nominal=last)
            fire = next_fire(desired.name, schedule, facts, after)
        except ScheduleError:
            fire = None
    return Decision(start, skips, evolve(
        state, last_nominal_at=last, next_nominal_at=None if fire is None else fire.nominal,
        next_effective_at=None if fire is None else fire.effective))
