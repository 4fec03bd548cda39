"""Read queries shared by the reader and the writer, and the row <-> record mapping.

Every query here is a bounded index lookup or range scan, except ``list_jobs`` and
``running_jobs`` which are meant for startup and ``status`` and read the jobs table once.
"""

from __future__ import annotations

import sqlite3
from typing import Any, cast

from reconciler.model.state import (
    Delivery,
    DeliveryStatus,
    JobState,
    OutboxStatus,
    RunningMarker,
    RunRecord,
    RunStatus,
    SkipRecord,
    Trigger,
)

JOB_COLUMNS = (
    "name", "anchor", "next_nominal_at", "next_effective_at", "last_started_at",
    "last_finished_at", "last_status", "last_error", "consecutive_errors", "schedule_errors",
    "running_run_id", "running_started_at", "running_pid", "running_host", "last_alert_at",
    "spec_hash", "source_revision", "suspended_since", "disabled", "disabled_reason",
    "first_reconciled_at", "last_nominal_at", "schedule_hash",
)  # fmt: skip
RUN_COLUMNS = (
    "run_id", "occurrence_key", "job", "scheduled_at", "started_at", "finished_at", "status",
    "attempt", "trigger", "error", "error_class", "summary", "delivery_status",
)  # fmt: skip
SKIP_COLUMNS = ("job", "scheduled_at", "reason", "recorded_at")
OUTBOX_COLUMNS = (
    "run_id", "job", "target", "payload", "idempotency_key", "created_at", "status", "attempts",
    "next_attempt_at", "last_error", "updated_at", "id",
)  # fmt: skip

_JOBS = ", ".join(JOB_COLUMNS)
_RUNS = ", ".join(RUN_COLUMNS)
_SKIPS = ", ".join(SKIP_COLUMNS)
_OUTBOX = ", ".join(OUTBOX_COLUMNS)


def job_from_row(row: sqlite3.Row | tuple[Any, ...]) -> JobState:
    v = dict(zip(JOB_COLUMNS, row, strict=True))
    running = None
    if v["running_run_id"] is not None:
        running = RunningMarker(
            v["running_run_id"], v["running_started_at"], v["running_pid"], v["running_host"]
        )
    return JobState(
        name=v["name"], anchor=v["anchor"], next_nominal_at=v["next_nominal_at"],
        next_effective_at=v["next_effective_at"], last_started_at=v["last_started_at"],
        last_finished_at=v["last_finished_at"], last_status=cast(RunStatus, v["last_status"]),
        last_error=v["last_error"], consecutive_errors=v["consecutive_errors"],
        schedule_errors=v["schedule_errors"], running=running, last_alert_at=v["last_alert_at"],
        spec_hash=v["spec_hash"], source_revision=v["source_revision"],
        suspended_since=v["suspended_since"], disabled=bool(v["disabled"]),
        disabled_reason=v["disabled_reason"], first_reconciled_at=v["first_reconciled_at"],
        last_nominal_at=v["last_nominal_at"], schedule_hash=v["schedule_hash"],
    )  # fmt: skip


def job_to_row(job: JobState, pid: int | None = None, host: str | None = None
               ) -> tuple[Any, ...]:
    """The row of ``job``; ``pid`` and ``host`` fill its running marker's where it has none."""
    marker = job.running
    return (
        job.name, job.anchor, job.next_nominal_at, job.next_effective_at, job.last_started_at,
        job.last_finished_at, job.last_status, job.last_error, job.consecutive_errors,
        job.schedule_errors, marker and marker.run_id, marker and marker.started_at,
        marker and (marker.pid or pid), marker and (marker.host or host), job.last_alert_at,
        job.spec_hash,
        job.source_revision, job.suspended_since, int(job.disabled), job.disabled_reason,
        job.first_reconciled_at, job.last_nominal_at, job.schedule_hash,
    )  # fmt: skip


def run_from_row(row: sqlite3.Row | tuple[Any, ...]) -> RunRecord:
    v = dict(zip(RUN_COLUMNS, row, strict=True))
    return RunRecord(
        run_id=v["run_id"], occurrence_key=v["occurrence_key"], job=v["job"],
        scheduled_at=v["scheduled_at"], started_at=v["started_at"],
        finished_at=v["finished_at"], status=cast(RunStatus | None, v["status"]),
        attempt=v["attempt"], trigger=cast(Trigger, v["trigger"]), error=v["error"],
        error_class=v["error_class"], summary=v["summary"],
        delivery_status=cast(DeliveryStatus | None, v["delivery_status"]),
    )  # fmt: skip


def delivery_from_row(row: sqlite3.Row | tuple[Any, ...]) -> Delivery:
    v = dict(zip(OUTBOX_COLUMNS, row, strict=True))
    v["status"] = cast(OutboxStatus, v["status"])
    return Delivery(**v)


def list_jobs(conn: sqlite3.Connection) -> list[JobState]:
    """Every job's state, by name."""
    return [job_from_row(r) for r in conn.execute(f"SELECT {_JOBS} FROM jobs ORDER BY name")]


def get_job(conn: sqlite3.Connection, name: str) -> JobState | None:
    row = conn.execute(f"SELECT {_JOBS} FROM jobs WHERE name = ?", (name,)).fetchone()
    return None if row is None else job_from_row(row)


def running_jobs(conn: sqlite3.Connection) -> list[JobState]:
    """Jobs with a running marker (at startup: candidates for stale-marker clearing)."""
    sql = f"SELECT {_JOBS} FROM jobs WHERE running_run_id IS NOT NULL ORDER BY name"
    return [job_from_row(r) for r in conn.execute(sql)]


def list_runs(
    conn: sqlite3.Connection, job: str, limit: int = 50, before: float | None = None
) -> list[RunRecord]:
    """A job's runs, newest start first; ``before`` pages back through older history."""
    sql = f"SELECT {_RUNS} FROM runs WHERE job = ?"
    args: list[Any] = [job]
    if before is not None:
        sql += " AND started_at < ?"
        args.append(before)
    sql += " ORDER BY started_at DESC, rowid DESC LIMIT ?"
    args.append(max(0, limit))
    return [run_from_row(r) for r in conn.execute(sql, args)]


def get_run(conn: sqlite3.Connection, run_id: str) -> RunRecord | None:
    row = conn.execute(f"SELECT {_RUNS} FROM runs WHERE run_id = ?", (run_id,)).fetchone()
    return None if row is None else run_from_row(row)


def runs_of_occurrence(conn: sqlite3.Connection, occurrence_key: str) -> list[RunRecord]:
    """Every attempt of one occurrence, first attempt first."""
    sql = f"SELECT {_RUNS} FROM runs WHERE occurrence_key = ? ORDER BY attempt, started_at"
    return [run_from_row(r) for r in conn.execute(sql, (occurrence_key,))]


def list_skips(
    conn: sqlite3.Connection, job: str | None = None, limit: int = 50
) -> list[SkipRecord]:
    """Skipped or missed occurrences, newest scheduled time first; all jobs when ``job`` is None."""
    order = "ORDER BY scheduled_at DESC, id DESC LIMIT ?"
    if job is None:
        rows = conn.execute(f"SELECT {_SKIPS} FROM skips {order}", (max(0, limit),))
    else:
        sql = f"SELECT {_SKIPS} FROM skips WHERE job = ? {order}"
        rows = conn.execute(sql, (job, max(0, limit)))
    return [SkipRecord(*row) for row in rows]


def due_deliveries(conn: sqlite3.Connection, now: float, limit: int = 100) -> list[Delivery]:
    """Pending outbox entries whose next attempt is due, earliest first.

    The writer stores an unset ``next_attempt_at`` as the creation time, so this is one range
    scan of the ``(status, next_attempt_at)`` index.
    """
    sql = (
        f"SELECT {_OUTBOX} FROM outbox WHERE status = 'pending' AND next_attempt_at <= ? "
        "ORDER BY next_attempt_at, id LIMIT ?"
    )
    return [delivery_from_row(r) for r in conn.execute(sql, (now, max(0, limit)))]


def deliveries_of_run(conn: sqlite3.Connection, run_id: str) -> list[Delivery]:
    sql = f"SELECT {_OUTBOX} FROM outbox WHERE run_id = ? ORDER BY id"
    return [delivery_from_row(r) for r in conn.execute(sql, (run_id,))]
