"""The pure state mapping: OpenClaw's runtime state as JobState (+ the last run)."""

from __future__ import annotations

from reconciler.sources.openclaw.importer import ImportedJob, ImportResult


def _job(result: ImportResult, job_id: str) -> ImportedJob:
    return next(job for job in result.jobs if job.openclaw_id == job_id)


def test_failing_job_keeps_its_error_count_alert_time_and_schedule_errors(
        split: ImportResult) -> None:
    state = _job(split, "split-0003").state
    assert state is not None
    job = state.job_state
    assert job.name == "every-35m-poll"
    assert (job.consecutive_errors, job.schedule_errors) == (3, 1)
    assert job.last_status == "error" and job.last_error == "ECONNRESET"
    assert job.last_started_at == 1_780_270_800.0
    assert job.last_finished_at == 1_780_270_860.0  # start + lastDurationMs
    assert job.last_alert_at == 1_780_270_860.0
    assert job.anchor == 1_767_225_600.0
    assert job.running is None
    assert state.notes == ("a run was in flight in OpenClaw (runningAtMs): not carried over",)
    assert job.spec_hash and job.schedule_hash


def test_last_status_alias_and_last_slot(inline: ImportResult) -> None:
    state = _job(inline, "legacy-0004").state  # only lastStatus (the back-compat alias)
    assert state is not None
    assert state.job_state.last_status == "error"
    # ran at 23:01:07.646Z (23:00Z + OpenClaw's offset): its slot is 23:00Z
    assert state.job_state.last_nominal_at == 1_780_268_400.0
    assert state.job_state.consecutive_errors == 2
    assert state.job_state.last_alert_at is None  # 0 means never


def test_last_run_becomes_a_history_record(inline: ImportResult) -> None:
    state = _job(inline, "legacy-0004").state
    assert state is not None
    record = state.last_run()
    assert record is not None
    start, finish = record
    assert start.job == finish.job == "hourly-inbox-triage"
    assert start.scheduled_at == 1_780_268_400.0 and start.trigger == "schedule"
    assert start.started_at == 1_780_268_467.646
    assert finish.status == "error" and finish.error == "429 too many requests"
    assert finish.finished_at == 1_780_268_472.646
    assert finish.job_state == state.job_state


def test_job_that_never_ran_has_no_history(inline: ImportResult) -> None:
    state = _job(inline, "legacy-0003").state
    assert state is not None
    assert state.last_run() is None
    assert state.job_state.next_effective_at == 1_780_300_800.0


def test_interval_without_anchor_gets_the_grid_point_before_next(tmp_path: object) -> None:
    from datetime import timedelta

    from reconciler.model.job import ScheduledJob
    from reconciler.sources.openclaw.state import import_state

    spec = ScheduledJob.model_validate({
        "apiVersion": "reconciler.dev/v1", "kind": "ScheduledJob", "metadata": {"name": "x"},
        "spec": {"schedule": {"every": "1h"}, "run": {"message": {"text": "hi"}}}})
    job = {"id": "x", "schedule": {"kind": "every", "everyMs": 3_600_000},
           "state": {"nextRunAtMs": 1_780_275_600_000}}
    state = import_state(job, spec, 1_780_272_000.0)
    assert state.job_state.anchor == 1_780_275_600 - timedelta(hours=1).total_seconds()
    from reconciler.core.schedule import next_fire

    fire = next_fire("x", spec.spec.schedule, state.schedule_state(), 1_780_272_000.0)
    assert fire is not None and fire.effective == 1_780_275_600.0


def test_job_without_next_run_gets_the_engines_first_fire(inline: ImportResult) -> None:
    # nextRunAtMs 0 means "not scheduled" (#63507): computed as for a new job
    state = _job(inline, "legacy-0006").state
    assert state is not None
    assert state.job_state.next_effective_at == 1_780_302_615.0  # 08:30:15Z


def test_suspended_job_records_since_when(inline: ImportResult) -> None:
    state = _job(inline, "legacy-0002").state
    assert state is not None
    assert state.job_state.suspended_since == 1_780_272_000.0  # no updatedAtMs: the import
