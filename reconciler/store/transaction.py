"""The write operations of one transaction; ``StateWriter.transaction()`` hands one out.

Each method is one or a few indexed statements; none commits. The transaction commits when the
``with`` block ends, after the bounded retention pruning of the jobs it touched, or rolls back
whole if anything raised, so a batch (one engine tick) lands entirely or not at all.
"""

from __future__ import annotations

import sqlite3
from dataclasses import replace

from reconciler.errors import StateError
from reconciler.model.state import (
    ERROR_LIMIT,
    SUMMARY_LIMIT,
    Delivery,
    JobState,
    RunFinish,
    RunStart,
    SkipRecord,
    excerpt,
)
from reconciler.store import retention
from reconciler.store.queries import JOB_COLUMNS, job_to_row
from reconciler.store.retention import Retention

_UPSERT_JOB = (
    f"INSERT INTO jobs ({', '.join(JOB_COLUMNS)}) VALUES ({', '.join('?' * len(JOB_COLUMNS))}) "
    "ON CONFLICT (name) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in JOB_COLUMNS if c != "name")
)
_MARK_RUNNING = """
    INSERT INTO jobs (name, running_run_id, running_started_at, running_pid, running_host)
    VALUES (?, ?, ?, ?, ?)
    ON CONFLICT (name) DO UPDATE SET running_run_id = excluded.running_run_id,
        running_started_at = excluded.running_started_at, running_pid = excluded.running_pid,
        running_host = excluded.running_host"""
_LAST_RUN = """
    UPDATE jobs SET last_started_at = (SELECT started_at FROM runs WHERE run_id = ?),
        last_finished_at = ?, last_status = ?, last_error = ?,
        consecutive_errors = CASE WHEN ? = 'ok' THEN 0 ELSE consecutive_errors + 1 END
    WHERE name = ?"""
_CLEAR_MARKER = """
    UPDATE jobs SET running_run_id = NULL, running_started_at = NULL, running_pid = NULL,
        running_host = NULL
    WHERE name = ? AND running_run_id = ?"""


class WriteTx:
    """Writes inside one open transaction of the state writer."""

    def __init__(
        self, conn: sqlite3.Connection, policy: Retention, pid: int, host: str,
        unpruned: dict[str, int] | None = None,
    ) -> None:
        self._conn = conn
        self._policy = policy
        self._pid = pid
        self._host = host
        self._unpruned = {} if unpruned is None else unpruned
        self._run_jobs: set[str] = set()
        self._skip_jobs: set[str] = set()
        self._latest: float | None = None

    def _saw(self, instant: float | None) -> None:
        if instant is not None and (self._latest is None or instant > self._latest):
            self._latest = instant

    def put_job(self, job: JobState) -> None:
        """Insert or replace a job's whole state (the engine's merged view)."""
        self._conn.execute(_UPSERT_JOB, job_to_row(job))

    def delete_job(self, name: str) -> bool:
        """Forget a job's state; its runs and skips stay until retention removes them."""
        return self._conn.execute("DELETE FROM jobs WHERE name = ?", (name,)).rowcount > 0

    def delete_unstarted_run(self, run_id: str) -> bool:
        """Forget a run recorded ahead of its slot that never began (an armed run taken back
        at shutdown); a run with an outcome is never deleted. The caller rewrites its job."""
        cursor = self._conn.execute(
            "DELETE FROM runs WHERE run_id = ? AND status IS NULL", (run_id,))
        return cursor.rowcount > 0

    def start_run(self, start: RunStart) -> None:
        """Phase 1: insert the run (status NULL = in flight) and set its job's running marker.

        A job with no state row yet gets one holding only the marker.
        """
        try:
            self._conn.execute(
                "INSERT INTO runs (run_id, occurrence_key, job, scheduled_at, started_at, "
                "attempt, trigger) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (start.run_id, start.occurrence_key, start.job, start.scheduled_at,
                 start.started_at, start.attempt, start.trigger),
            )  # fmt: skip
        except sqlite3.IntegrityError as exc:
            raise StateError(f"run {start.run_id} is already recorded") from exc
        pid = self._pid if start.pid is None else start.pid
        host = self._host if start.host is None else start.host
        if start.job_state is not None:
            self._conn.execute(_UPSERT_JOB, job_to_row(start.job_state, pid, host))
        else:
            self._conn.execute(_MARK_RUNNING,
                               (start.job, start.run_id, start.started_at, pid, host))
        self._saw(start.started_at)

    def finish_run(self, finish: RunFinish) -> None:
        """Phase 3: record the outcome, update the job, clear its marker, enqueue deliveries."""
        error = excerpt(finish.error, ERROR_LIMIT)
        delivery_status = finish.delivery_status or ("pending" if finish.deliveries else None)
        # Only a run still in flight is updated; when none is, the SELECT says why.
        updated = self._conn.execute(
            "UPDATE runs SET finished_at = ?, status = ?, error = ?, error_class = ?, "
            "summary = ?, delivery_status = ? WHERE run_id = ? AND job = ? AND status IS NULL",
            (finish.finished_at, finish.status, error, finish.error_class,
             excerpt(finish.summary, SUMMARY_LIMIT), delivery_status, finish.run_id,
             finish.job),
        ).rowcount  # fmt: skip
        if updated != 1:
            self._refuse_finish(finish)
        state = finish.job_state
        if state is not None:
            if state.running is not None and state.running.run_id == finish.run_id:
                state = replace(state, running=None)  # this run's marker goes with it
            self.put_job(state)
        else:
            if finish.status != "skipped":
                self._conn.execute(
                    _LAST_RUN, (finish.run_id, finish.finished_at, finish.status, error,
                                finish.status, finish.job))
            self._conn.execute(_CLEAR_MARKER, (finish.job, finish.run_id))
        for delivery in finish.deliveries:
            self.enqueue(delivery)
        self._run_jobs.add(finish.job)  # a finished run is what retention may prune
        self._saw(finish.finished_at)

    def _refuse_finish(self, finish: RunFinish) -> None:
        row = self._conn.execute(
            "SELECT status FROM runs WHERE run_id = ? AND job = ?", (finish.run_id, finish.job)
        ).fetchone()
        if row is None:
            raise StateError(f"run {finish.run_id} of job {finish.job} was never started")
        raise StateError(f"run {finish.run_id} already finished with status {row[0]}")

    def record_skip(self, skip: SkipRecord) -> None:
        """Record an occurrence that did not run, with its reason."""
        self._conn.execute(
            "INSERT INTO skips (job, scheduled_at, reason, recorded_at) VALUES (?, ?, ?, ?)",
            (skip.job, skip.scheduled_at, skip.reason, skip.recorded_at),
        )
        self._skip_jobs.add(skip.job)
        self._saw(skip.recorded_at)

    def enqueue(self, delivery: Delivery) -> int:
        """Add an outbox entry; returns its id. A known idempotency key keeps the old entry."""
        due = delivery.created_at if delivery.next_attempt_at is None else delivery.next_attempt_at
        cursor = self._conn.execute(
            "INSERT INTO outbox (run_id, job, target, payload, idempotency_key, status, attempts, "
            "next_attempt_at, last_error, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (idempotency_key) DO NOTHING",
            (delivery.run_id, delivery.job, delivery.target, delivery.payload,
             delivery.idempotency_key, delivery.status, delivery.attempts, due,
             delivery.last_error, delivery.created_at, delivery.updated_at or delivery.created_at),
        )  # fmt: skip
        self._saw(delivery.created_at)
        if cursor.rowcount == 1 and cursor.lastrowid is not None:
            return cursor.lastrowid
        found = self._conn.execute(
            "SELECT id FROM outbox WHERE idempotency_key = ?", (delivery.idempotency_key,)
        ).fetchone()
        return int(found[0])

    def update_delivery(self, delivery: Delivery) -> None:
        """Record a delivery attempt's result; the run's delivery status follows its entries."""
        if delivery.id is None:
            raise StateError("update_delivery needs the entry's id (as returned by enqueue)")
        cursor = self._conn.execute(
            "UPDATE outbox SET status = ?, attempts = ?, next_attempt_at = ?, last_error = ?, "
            "updated_at = ? WHERE id = ?",
            (delivery.status, delivery.attempts, delivery.next_attempt_at,
             excerpt(delivery.last_error, ERROR_LIMIT), delivery.updated_at, delivery.id),
        )  # fmt: skip
        if cursor.rowcount != 1:
            raise StateError(f"no outbox entry {delivery.id}")
        statuses = {
            row[0]
            for row in self._conn.execute(
                "SELECT status FROM outbox WHERE run_id = ?", (delivery.run_id,)
            )
        }
        worst = next(s for s in ("failed", "pending", "delivered") if s in statuses)
        overall = "not-delivered" if worst == "failed" else worst  # the run's word for it
        self._conn.execute(
            "UPDATE runs SET delivery_status = ? WHERE run_id = ?", (overall, delivery.run_id)
        )
        self._saw(delivery.updated_at)

    def prune(self) -> None:
        """Bounded retention for what this transaction touched; runs just before commit.

        Finding a job's runs beyond its newest ``max_runs`` walks that many index entries, so
        a job's runs are pruned on every ``prune_every``-th finish, not on each: the walk is
        amortised, and since one prune deletes up to ``batch`` rows (more than the runs added
        in between), a job keeps at most ``prune_every - 1`` runs over its limit."""
        every = self._policy.prune_every
        for job in sorted(self._run_jobs):
            count = self._unpruned.get(job, every - 1) + 1  # a job's first finish prunes
            if count >= every:
                retention.prune_job_runs(self._conn, job, self._policy)
                count = 0
            self._unpruned[job] = count
        for job in sorted(self._skip_jobs):
            retention.prune_job_skips(self._conn, job, self._policy)
        if self._latest is not None:
            retention.prune_by_age(self._conn, self._latest, self._policy)

