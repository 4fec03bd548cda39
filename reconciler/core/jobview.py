"""What the engine knows about one job: its desired spec (with hashes) and its observed state."""

from __future__ import annotations

from dataclasses import dataclass

from reconciler.core.identity import spec_hashes
from reconciler.core.schedule import Fire, ScheduleState
from reconciler.model.job import ScheduledJob
from reconciler.model.state import JobState, evolve


@dataclass(frozen=True)
class DesiredJob:
    """A job's spec as the source gives it, with the hashes that detect changes."""

    spec: ScheduledJob
    spec_hash: str
    schedule_hash: str
    source_revision: str | None = None

    @classmethod
    def of(cls, spec: ScheduledJob, source_revision: str | None = None) -> DesiredJob:
        return cls(spec, *spec_hashes(spec), source_revision)

    @property
    def name(self) -> str:
        return self.spec.name


def schedule_state(desired: DesiredJob, state: JobState, *,
                   last_nominal: float | None = None) -> ScheduleState:
    """The facts the schedule math needs.

    The engine tracks consumed slots itself (``last_nominal_at``), so recurring schedules are
    enumerated on their pure grid: a catch-up replay must see the slots a late run passed. The
    last start matters only to a one-shot, which counts as completed only after success (a
    failed attempt is retried or the job disabled, never silently spent). ``last_nominal``
    stands in for the state's (a slot about to be consumed)."""
    one_shot = desired.spec.spec.schedule.at is not None
    completed = state.last_finished_at if state.last_status == "ok" else None
    return ScheduleState(
        anchor=state.anchor,
        last_nominal=state.last_nominal_at if last_nominal is None else last_nominal,
        last_run_started=state.last_started_at if one_shot else None,
        completed_at=completed if one_shot else None,
    )


def pending_fire(state: JobState) -> Fire | None:
    if state.next_nominal_at is None or state.next_effective_at is None:
        return None
    return Fire(state.next_nominal_at, state.next_effective_at)


def with_pending(state: JobState, fire: Fire | None) -> JobState:
    if fire is None:
        return evolve(state, next_nominal_at=None, next_effective_at=None)
    return evolve(state, next_nominal_at=fire.nominal, next_effective_at=fire.effective)


def is_retry(state: JobState) -> bool:
    """A pending fire for a slot that already ran is a retry of that occurrence."""
    return (
        state.next_nominal_at is not None
        and state.last_nominal_at is not None
        and state.next_nominal_at <= state.last_nominal_at
    )
