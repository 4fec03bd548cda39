"""An OpenClaw job's runtime state as the reconciler's state records (pure; no store, no clock).

Carried over so the schedule continues where OpenClaw left it, without a skipped or doubled run:

* next run: ``nextRunAtMs`` (only when a finite number > 0, #63507) is the next *effective*
  fire; its nominal slot is that minus OpenClaw's stagger offset (``sha256(id)[0:4] mod
  staggerMs``, the same rule as ours but keyed by id instead of name).
* anchor: an interval's ``anchorMs`` (the spec carries it too); without one, the grid point
  before the next run, so the seeded next run is the first fire of the grid.
* last run: ``lastRunAtMs`` (start), ``+ lastDurationMs`` (end), ``lastRunStatus`` (or its
  alias ``lastStatus``), ``lastError``; its nominal slot (``last_nominal``) is the slot at or
  before the start, so a restart cannot offer that slot again.
* ``consecutiveErrors``, ``scheduleErrorCount``, ``lastFailureAlertAtMs``.
* the spec and schedule hashes of the imported spec, so the engine's ``plan`` sees the job as
  known and unchanged and keeps the seeded next fire instead of planning it afresh.

Without a scheduled next run (``0``, missing, a disabled job) the pending fire is computed the
way the engine does for a new job (``core.plan.compute_pending`` at the import instant), which
is also what OpenClaw does on load. A run in flight (``runningAtMs``) is not carried over: no
process of ours runs it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, get_args

from reconciler.core.identity import occurrence_key, run_id
from reconciler.core.jobview import DesiredJob, schedule_state
from reconciler.core.plan import compute_pending
from reconciler.core.schedule import ScheduleState, previous_fire
from reconciler.model.job import ScheduledJob
from reconciler.model.schedule import Schedule
from reconciler.model.state import JobState, RunFinish, RunStart, RunStatus
from reconciler.sources.openclaw.normalize_schedule import as_millis

_STATUSES = set(get_args(RunStatus))


@dataclass(frozen=True)
class ImportedState:
    """One job's carried-over state (the store record) and what could not be carried."""

    job_state: JobState
    desired: DesiredJob
    notes: tuple[str, ...] = ()

    def schedule_state(self) -> ScheduleState:
        """The schedule facts the engine derives from this state (``core.jobview``)."""
        return schedule_state(self.desired, self.job_state)

    def last_run(self) -> tuple[RunStart, RunFinish] | None:
        """The last OpenClaw run as a history record (start, finish), so the store's history
        names the slot it ran; None when the job never ran."""
        state = self.job_state
        nominal = state.last_nominal_at
        if state.last_started_at is None or state.last_status is None or nominal is None:
            return None  # without a slot the run cannot be keyed as a scheduled occurrence
        occurrence = occurrence_key(state.name, nominal)
        identity = run_id(occurrence, 1)
        start = RunStart(identity, state.name, occurrence, nominal, state.last_started_at)
        finish = RunFinish(identity, state.name, state.last_finished_at or state.last_started_at,
                           state.last_status, error=state.last_error, job_state=state)
        return start, finish


def openclaw_offset_ms(job_id: str, stagger_ms: int) -> int:
    """OpenClaw's stagger offset of a job: ``uint32_be(sha256(id)[0:4]) mod staggerMs``."""
    if stagger_ms <= 0:
        return 0
    digest = hashlib.sha256(job_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:4], "big") % stagger_ms


def import_state(job: dict[str, Any], spec: ScheduledJob, now: float) -> ImportedState:
    """The reconciler state of normalised OpenClaw ``job``, imported as the valid ``spec`` at
    the instant ``now`` (UTC epoch seconds)."""
    name, schedule = spec.name, spec.spec.schedule
    desired = DesiredJob.of(spec)
    raw = job.get("state") if isinstance(job.get("state"), dict) else {}
    assert isinstance(raw, dict)
    oc_schedule = job.get("schedule") if isinstance(job.get("schedule"), dict) else {}
    assert isinstance(oc_schedule, dict)
    offset_ms = openclaw_offset_ms(str(job.get("id", "")),
                                   as_millis(oc_schedule.get("staggerMs")) or 0)
    next_ms = _positive_ms(raw.get("nextRunAtMs"))
    started_ms = _positive_ms(raw.get("lastRunAtMs"))
    duration_ms = as_millis(raw.get("lastDurationMs"))
    anchor = _anchor(schedule, next_ms)
    last_nominal = _last_nominal(name, schedule, anchor, started_ms, offset_ms)
    job_state = JobState(
        name=name,
        anchor=anchor,
        next_nominal_at=_next_nominal(name, schedule, anchor, next_ms, offset_ms),
        next_effective_at=None if next_ms is None else next_ms / 1000,
        last_started_at=_seconds(started_ms),
        last_finished_at=None if started_ms is None else (
            started_ms + max(duration_ms or 0, 0)) / 1000,
        last_status=_status(raw),
        last_error=raw.get("lastError") if isinstance(raw.get("lastError"), str) else None,
        consecutive_errors=_count(raw.get("consecutiveErrors")),
        schedule_errors=_count(raw.get("scheduleErrorCount")),
        last_alert_at=_seconds(_positive_ms(raw.get("lastFailureAlertAtMs"))),
        spec_hash=desired.spec_hash,
        schedule_hash=desired.schedule_hash,
        first_reconciled_at=_seconds(_positive_ms(job.get("createdAtMs"))),
        last_nominal_at=last_nominal,
        # the engine records when a job became suspended; OpenClaw's last edit is the best guess
        suspended_since=(_seconds(_positive_ms(job.get("updatedAtMs"))) or now)
        if spec.spec.suspend else None,
    )
    if job_state.next_nominal_at is None:
        job_state = compute_pending(desired, job_state, now)
    notes: tuple[str, ...] = ()
    if _positive_ms(raw.get("runningAtMs")) is not None:
        notes = ("a run was in flight in OpenClaw (runningAtMs): not carried over",)
    return ImportedState(job_state, desired, notes)


def _anchor(schedule: Schedule, next_ms: int | None) -> float | None:
    if schedule.every is None:
        return None
    if schedule.anchor is not None:
        return schedule.anchor.timestamp()
    if next_ms is None:
        return None
    # A state anchor's grid starts one interval after it (the job did not exist at the anchor)
    return (next_ms - schedule.every // timedelta(milliseconds=1)) / 1000


def _next_nominal(name: str, schedule: Schedule, anchor: float | None, next_ms: int | None,
                  offset_ms: int) -> float | None:
    """The slot of OpenClaw's next run: its effective time minus OpenClaw's offset, snapped to
    the slot at or before (a store written under another stagger may be off the grid)."""
    if next_ms is None:
        return None
    if schedule.cron is None:
        return next_ms / 1000
    return _slot_at_or_before(name, schedule, anchor, next_ms - offset_ms) or next_ms / 1000


def _last_nominal(name: str, schedule: Schedule, anchor: float | None,
                  started_ms: int | None, offset_ms: int) -> float | None:
    """The slot the last run belonged to: the nominal slot at or before its start."""
    if started_ms is None:
        return None
    if schedule.at is not None:
        at = schedule.at.timestamp()
        return at if started_ms / 1000 >= at else None
    return _slot_at_or_before(name, schedule, anchor, started_ms - offset_ms)


def _slot_at_or_before(name: str, schedule: Schedule, anchor: float | None,
                       instant_ms: int) -> float | None:
    exact = schedule.model_copy(update={"stagger": timedelta(0)})  # OpenClaw's offset is out
    fire = previous_fire(name, exact, ScheduleState(anchor=anchor), instant_ms / 1000)
    return None if fire is None else fire.nominal


def _status(raw: dict[str, Any]) -> RunStatus | None:
    status = raw.get("lastRunStatus", raw.get("lastStatus"))
    return status if status in _STATUSES else None


def _positive_ms(value: Any) -> int | None:
    millis = as_millis(value)
    return millis if millis is not None and millis > 0 else None


def _seconds(millis: int | None) -> float | None:
    return None if millis is None else millis / 1000


def _count(value: Any) -> int:
    count = as_millis(value)
    return max(count, 0) if count is not None else 0
