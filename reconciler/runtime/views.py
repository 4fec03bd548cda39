"""JSON views of the state, shared by ``status``/``history`` and the HTTP API.

The shapes are the stable ones of DESIGN §4 (fields may be added, never renamed). They live in
the runtime so that the daemon's HTTP API can use them; the command line imports them from here.
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from typing import Any

from reconciler.core.describe import describe_schedule
from reconciler.core.jobview import DesiredJob, pending_fire, schedule_state
from reconciler.core.schedule import Fire, upcoming_fires
from reconciler.core.timefmt import iso_local, iso_utc
from reconciler.model.job import ScheduledJob
from reconciler.model.state import JobState, RunRecord, SkipRecord


def status_json(state: JobState, spec: ScheduledJob | None,
                last_run: RunRecord | None = None) -> dict[str, Any]:
    """A job's status; with ``last_run`` (its newest finished run) also that run's delivery."""
    running = None
    if state.running is not None:
        running = {"runId": state.running.run_id, "since": iso_utc(state.running.started_at),
                   "pid": state.running.pid, "host": state.running.host}
    return {
        "name": state.name,
        "suspended": state.suspended_since is not None,
        "schedule": describe_schedule(spec.spec.schedule) if spec else None,
        "nextRunAt": iso_utc(state.next_effective_at),
        "nextNominalAt": iso_utc(state.next_nominal_at),
        "lastRunAt": iso_utc(state.last_started_at),
        "lastFinishedAt": iso_utc(state.last_finished_at),
        "lastStatus": state.last_status,
        "lastError": state.last_error,
        "consecutiveErrors": state.consecutive_errors,
        "running": running,
        "disabled": state.disabled,
        "disabledReason": state.disabled_reason,
        "sourceRevision": state.source_revision,
        "inSpecs": spec is not None,
        "lastDelivery": None if last_run is None else last_run.delivery_status,
    }


def history_run_json(run: RunRecord) -> dict[str, Any]:
    return {
        "runId": run.run_id, "occurrence": run.occurrence_key,
        "scheduledAt": iso_utc(run.scheduled_at), "startedAt": iso_utc(run.started_at),
        "finishedAt": iso_utc(run.finished_at), "status": run.status or "running",
        "attempt": run.attempt, "trigger": run.trigger, "error": run.error,
        "errorClass": run.error_class, "summary": run.summary,
        "delivery": run.delivery_status,
    }


def skip_json(skip: SkipRecord) -> dict[str, Any]:
    return {"scheduledAt": iso_utc(skip.scheduled_at), "reason": skip.reason,
            "recordedAt": iso_utc(skip.recorded_at)}


def fire_json(fire: Fire, zone: str) -> dict[str, Any]:
    """``{at, nominal, local}`` as ``reconciler next`` prints them."""
    return {"at": iso_utc(fire.effective), "nominal": iso_utc(fire.nominal),
            "local": iso_local(fire.effective, zone)}


def next_fires(desired: DesiredJob, state: JobState, now: float, count: int) -> list[Fire]:
    """The next ``count`` fires the engine will act on, as its state says.

    The pending fire comes from the state, not from the schedule alone: it may be a retry, a
    backoff-delayed slot or a past-due one waiting for capacity, which the grid cannot know.
    The rest continue the grid after it. A disabled job has none."""
    if state.disabled or count < 1:
        return []
    schedule = desired.spec.spec.schedule
    facts = schedule_state(desired, state)
    pending = pending_fire(state)
    if pending is None:
        return list(itertools.islice(upcoming_fires(desired.name, schedule, facts, now), count))
    last = facts.last_nominal
    after_pending = replace(facts, last_nominal=pending.nominal if last is None
                            else max(last, pending.nominal))
    rest = upcoming_fires(desired.name, schedule, after_pending, max(now, pending.effective))
    return [pending, *itertools.islice(rest, count - 1)]
