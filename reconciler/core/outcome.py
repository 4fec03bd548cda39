"""Phase 3 of a run, pure: merge its outcome into the job's state under the latest spec.

Success resets the failure count and spends a one-shot. A failure raises the count; a one-shot
failing with a retryable class is retried (``retry.backoff``) up to ``retry.maxAttempts``
retries, else disabled and kept for inspection; a recurring job backs off: its next fire is the
first natural slot at or after ``end + backoff[n-1]`` (so it never runs before its schedule).
A ``Retry-After`` the failing service sent lengthens either delay, never shortens it.
A manual run never moves the schedule. A run replaced by a newer one (``Replace``) leaves the
job's state to the newer run. An interrupted run (the reconciler stopped or crashed under it)
counts as a failure but imposes no backoff: the fault was ours, so the catch-up policy decides
what runs next. Slots passed over by a backoff are neither run nor recorded one by one.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import NamedTuple

from reconciler.core.jobview import DesiredJob, schedule_state, with_pending
from reconciler.core.schedule import Fire, next_fire
from reconciler.errors import ScheduleError
from reconciler.model.enums import ErrorClass
from reconciler.model.state import FAILED_STATUSES, JobState, RunStatus, Trigger, evolve


@dataclass(frozen=True)
class RunInfo:
    name: str
    nominal: float | None  # the slot; None for a manual run
    trigger: Trigger
    attempt: int
    started_at: float


class Outcome(NamedTuple):
    """How a run ended. A named tuple, not a frozen dataclass: one is built per run on the
    path between a slot and its runs' starts, and a frozen dataclass costs several times more
    to build."""

    status: RunStatus
    finished_at: float
    error: str | None = None
    error_class: ErrorClass | None = None
    retry_after: float | None = None  # seconds the service asked us to wait (Retry-After)


@dataclass(frozen=True)
class Merge:
    state: JobState
    retry_at: float | None = None
    disabled_now: bool = False


def merge_finish(
    desired: DesiredJob, state: JobState, run: RunInfo, outcome: Outcome,
    superseded: bool = False,
) -> Merge:
    if superseded:
        return Merge(state)
    failed = outcome.status in FAILED_STATUSES
    merged = evolve(
        state,
        last_started_at=run.started_at,
        last_finished_at=outcome.finished_at,
        last_status=outcome.status,
        last_error=outcome.error if failed else None,
        consecutive_errors=(state.consecutive_errors + 1) if failed else (
            0 if outcome.status == "ok" else state.consecutive_errors),
    )
    if run.trigger == "manual" or outcome.status == "skipped":
        return Merge(merged)
    if desired.spec.spec.schedule.at is not None:
        return _one_shot(desired, merged, run, outcome, failed)
    if failed and outcome.status != "interrupted":
        return Merge(_backed_off(desired, merged, outcome))
    return Merge(merged)


def _one_shot(
    desired: DesiredJob, state: JobState, run: RunInfo, outcome: Outcome, failed: bool
) -> Merge:
    if not failed:
        return Merge(with_pending(state, None))
    retry = desired.spec.spec.retry
    retryable = outcome.status == "interrupted" or (
        outcome.error_class is not None and outcome.error_class in retry.retry_on)
    if retryable and run.attempt <= retry.max_attempts and run.nominal is not None:
        delay = max(_nth(retry.backoff, run.attempt).total_seconds(), outcome.retry_after or 0)
        retry_at = outcome.finished_at + delay
        return Merge(with_pending(state, Fire(run.nominal, retry_at)), retry_at=retry_at)
    why = (f"gave up after {run.attempt} attempts" if retryable
           else f"failed with a {outcome.error_class or ErrorClass.PERMANENT} error")
    reason = f"one-shot {why}: {(outcome.error or outcome.status)[:200]}"
    return Merge(evolve(with_pending(state, None), disabled=True, disabled_reason=reason),
                 disabled_now=True)


def _backed_off(desired: DesiredJob, state: JobState, outcome: Outcome) -> JobState:
    delay = _nth(desired.spec.spec.backoff, state.consecutive_errors).total_seconds()
    earliest = outcome.finished_at + max(delay, outcome.retry_after or 0)
    if state.next_effective_at is not None and state.next_effective_at >= earliest:
        return state
    try:
        fire = next_fire(desired.name, desired.spec.spec.schedule, schedule_state(desired, state),
                         earliest - 0.001)
    except ScheduleError:
        return state
    return with_pending(state, fire)


def _nth(delays: list[timedelta], n: int) -> timedelta:
    """The n-th delay (1-based); the last one repeats."""
    return delays[min(max(n, 1), len(delays)) - 1]
