"""``plan(desired, observed, now)``: the diff between specs and persisted state, as actions.

Pure. New jobs get their anchor and first fire; changed jobs keep their pending fire unless the
schedule itself changed (then it is recomputed from now, never repeating a slot that already
ran, and the stagger offset — a function of the name — survives); removed jobs are dropped from
the schedule (their history stays, a running run finishes and is recorded); suspending and
resuming only flips ``suspendedSince``: slots that arrive while suspended are recorded as skipped
with reason ``suspended`` by the tick, so time spent suspended is never "missed". A change to one
job never touches another job's state.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Literal

from reconciler.core.jobview import DesiredJob, schedule_state, with_pending
from reconciler.core.schedule import Fire, next_fire, previous_fire
from reconciler.errors import ScheduleError
from reconciler.model.state import JobState

ChangeKind = Literal["added", "changed", "removed", "unchanged"]
SCHEDULE_ERROR_LIMIT = 3


@dataclass(frozen=True)
class JobChange:
    kind: ChangeKind
    name: str
    state: JobState | None  # the new state; None for a removed job
    effects: tuple[str, ...] = ()


def plan(
    desired: Mapping[str, DesiredJob], observed: Mapping[str, JobState], now: float
) -> list[JobChange]:
    """One change per job named on either side, sorted by name."""
    names = sorted(set(desired) | set(observed))
    return [reconcile_job(desired.get(name), observed.get(name), name, now) for name in names]


def reconcile_job(
    desired: DesiredJob | None, observed: JobState | None, name: str, now: float
) -> JobChange:
    if desired is None:
        effects = ("running run will finish and be recorded",) if observed and observed.running \
            else ()
        return JobChange("removed", name, None, effects)
    if observed is None:
        return JobChange("added", name, _added(desired, now))
    if observed.spec_hash == desired.spec_hash and observed.source_revision == \
            desired.source_revision:
        return JobChange("unchanged", name, observed)
    if observed.spec_hash == desired.spec_hash:
        return JobChange("unchanged", name, replace(
            observed, source_revision=desired.source_revision))
    return _changed(desired, observed, now)


def _added(desired: DesiredJob, now: float) -> JobState:
    schedule = desired.spec.spec.schedule
    # Without a spec anchor the grid starts at the first reconcile, on a whole second, so an
    # interval's fires read as round times.
    anchor = schedule.anchor.timestamp() if schedule.anchor is not None else math.floor(now)
    state = JobState(
        name=desired.name,
        anchor=anchor,
        first_reconciled_at=now,
        spec_hash=desired.spec_hash,
        schedule_hash=desired.schedule_hash,
        source_revision=desired.source_revision,
        suspended_since=now if desired.spec.spec.suspend else None,
    )
    return compute_pending(desired, state, now)


def _changed(desired: DesiredJob, observed: JobState, now: float) -> JobChange:
    spec = desired.spec.spec
    state = replace(
        observed,
        spec_hash=desired.spec_hash,
        schedule_hash=desired.schedule_hash,
        source_revision=desired.source_revision,
        suspended_since=(observed.suspended_since or now) if spec.suspend else None,
    )
    effects: list[str] = []
    if observed.disabled:
        # A spec change is what a disabled job waits for: give it a fresh start.
        state = replace(state, disabled=False, disabled_reason=None, schedule_errors=0,
                        consecutive_errors=0)
        effects.append("re-enabled by the spec change")
    if observed.schedule_hash != desired.schedule_hash or observed.disabled:
        if spec.schedule.anchor is not None:
            state = replace(state, anchor=spec.schedule.anchor.timestamp())
        elif observed.anchor is None or observed.schedule_hash != desired.schedule_hash:
            state = replace(state, anchor=math.floor(observed.first_reconciled_at or now))
        state = compute_pending(desired, state, now)
        effects.append("schedule recomputed")
    if spec.suspend and observed.suspended_since is None:
        effects.append("suspended: slots will be recorded as skipped")
    if not spec.suspend and observed.suspended_since is not None:
        effects.append("resumed")
    return JobChange("changed", desired.name, state, tuple(effects))


def compute_pending(desired: DesiredJob, state: JobState, after: float) -> JobState:
    """The job's next fire after ``after``; a never-run one-shot whose time has passed stays
    pending at its slot (it is due now). A failure to compute counts toward auto-disable."""
    schedule = desired.spec.spec.schedule
    facts = schedule_state(desired, state)
    try:
        fire = next_fire(desired.name, schedule, facts, after)
        if fire is None and schedule.at is not None:
            fire = _missed_one_shot(desired, state, after)
    except ScheduleError as exc:
        return schedule_failed(state, str(exc))
    return replace(with_pending(state, fire), schedule_errors=0)


def _missed_one_shot(desired: DesiredJob, state: JobState, now: float) -> Fire | None:
    facts = schedule_state(desired, state)
    fire = previous_fire(desired.name, desired.spec.spec.schedule, facts, now)
    if fire is None:
        return None
    if state.last_nominal_at is not None and fire.nominal <= state.last_nominal_at:
        return None
    return fire


def schedule_failed(state: JobState, message: str) -> JobState:
    errors = state.schedule_errors + 1
    disabled = errors >= SCHEDULE_ERROR_LIMIT
    return replace(
        with_pending(state, None),
        schedule_errors=errors,
        disabled=disabled or state.disabled,
        disabled_reason=(
            f"next fire could not be computed {errors} times in a row: {message}"
            if disabled else state.disabled_reason
        ),
        last_error=message,
    )
