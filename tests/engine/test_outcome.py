"""merge_finish: the outcome of a run merged into its job's state (pure)."""

from __future__ import annotations

from reconciler.core.outcome import Outcome, RunInfo, merge_finish
from reconciler.core.plan import reconcile_job
from reconciler.model.enums import ErrorClass
from tests.engine.helpers import at, job

SLOT = at("2026-01-05T09:00:00")


def test_retry_after_lengthens_a_one_shot_retry_never_shortens_it() -> None:
    once = job("once", {"at": "2026-01-05T09:00:00Z"})
    state = reconcile_job(once, None, "once", SLOT - 60).state
    assert state is not None
    run = RunInfo("once", SLOT, "schedule", 1, SLOT)
    # The first retry waits 30 s, or the 120 s the service asked for.
    slow = merge_finish(once, state, run, Outcome("error", SLOT + 1, "429", ErrorClass.RATE_LIMIT,
                                                  retry_after=120))
    assert slow.retry_at == SLOT + 1 + 120
    quick = merge_finish(once, state, run, Outcome("error", SLOT + 1, "429",
                                                   ErrorClass.RATE_LIMIT, retry_after=5))
    assert quick.retry_at == SLOT + 1 + 30


def test_retry_after_lengthens_a_recurring_backoff() -> None:
    every = job("every", {"every": "10s", "anchor": "2026-01-05T08:00:00Z"})
    state = reconcile_job(every, None, "every", SLOT - 1).state
    assert state is not None
    run = RunInfo("every", SLOT, "schedule", 1, SLOT)
    merged = merge_finish(every, state, run, Outcome("error", SLOT, "503", ErrorClass.SERVER_ERROR,
                                                     retry_after=95)).state
    # Backoff 30 s, Retry-After 95 s: the first 10 s slot at or after 09:01:35.
    assert merged.next_nominal_at == at("2026-01-05T09:01:40")


def test_a_manual_run_never_moves_the_schedule() -> None:
    every = job("every", {"every": "10m", "anchor": "2026-01-05T08:00:00Z"})
    state = reconcile_job(every, None, "every", SLOT + 60).state
    assert state is not None
    run = RunInfo("every", None, "manual", 1, SLOT + 120)
    merged = merge_finish(every, state, run, Outcome("error", SLOT + 130, "boom")).state
    assert merged.next_nominal_at == state.next_nominal_at
    assert merged.consecutive_errors == 1
