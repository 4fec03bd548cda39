"""Failure alerts without alert storms (DESIGN §3.6), pure.

One notification path per job (its ``failureAlert``, else the global default): an alert when
consecutive failures reach ``after`` (default 2), then at most one per ``cooldown`` (default
1 h) while the job keeps failing, and one recovery notice with the first success after an
alert. ``failureAlert: false`` silences a job. The text names the job, the count, the last
error (first 200 characters) and the next attempt.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from reconciler.core.timefmt import iso_utc
from reconciler.model.delivery import FailureAlert
from reconciler.model.state import JobState

DEFAULT_POLICY = FailureAlert()
ERROR_EXCERPT = 200


@dataclass(frozen=True)
class AlertDecision:
    kind: str  # failure | recovery
    message: str
    last_alert_at: float | None  # the job's new last-alert instant (None after a recovery)


def effective_policy(own: FailureAlert | None, default: FailureAlert = DEFAULT_POLICY
                     ) -> FailureAlert:
    return own if own is not None else default


def decide_alert(
    policy: FailureAlert, before: JobState, after: JobState, now: float
) -> AlertDecision | None:
    """What to announce after a run moved the job from ``before`` to ``after``."""
    if not policy.enabled:
        return None
    failures = after.consecutive_errors
    if failures == 0:
        if before.consecutive_errors > 0 and before.last_alert_at is not None:
            return AlertDecision("recovery", _recovery_text(after, before), None)
        return None
    if failures < policy.after or after.last_status == "skipped":
        return None
    last = before.last_alert_at
    if last is not None and now - last < policy.cooldown / timedelta(seconds=1):
        return None
    return AlertDecision("failure", failure_text(after), now)


def failure_text(state: JobState) -> str:
    error = (state.last_error or state.last_status or "failed")[:ERROR_EXCERPT]
    next_at = iso_utc(state.next_effective_at) or "none scheduled"
    return (f"{state.name} failed {state.consecutive_errors} times in a row; last error: "
            f"{error}; next attempt: {next_at}")


def _recovery_text(after: JobState, before: JobState) -> str:
    return (f"{after.name} recovered: succeeded at {iso_utc(after.last_finished_at)} after "
            f"{before.consecutive_errors} consecutive failures")


def missed_text(name: str, nominal: float, now: float) -> str:
    return (f"{name} missed its {iso_utc(nominal)} slot: it could not start within its "
            f"startingDeadline (now {iso_utc(now)})")
