"""The schema migration steps, oldest first. Each is small, named and idempotent.

Every step takes a connection already inside the migration's transaction and may not commit.
Idempotent means: applied to its own output it changes nothing. SQL that is not idempotent by
itself (``ALTER TABLE ADD COLUMN``) is guarded by a look at the current shape; data fixes only
touch rows still in the old shape.

History of the shapes (fixtures under ``tests/store/fixtures/`` hold each one with rows):

1. ``initial``: ``meta``, ``jobs``, ``runs`` and ``skips``. A run in flight had status
   ``'running'``; a job disabled by schedule errors was only implied by its error count.
2. ``run_outcome_details``: runs gain ``error_class`` and ``delivery_status``; a run in flight
   has status NULL, so ``status`` only ever holds an outcome; timeouts get error class
   ``timeout``; jobs gain an explicit ``disabled`` flag and ``disabled_reason``, set for jobs
   the old rule disabled (three consecutive schedule errors).
3. ``delivery_outbox``: the durable delivery outbox and its indexes.
4. ``job_slot_tracking``: jobs gain ``last_nominal_at`` (the newest slot that ran or was
   skipped; no slot at or before it is offered again) and ``schedule_hash`` (tells an edit of
   the schedule from other edits). ``last_nominal_at`` is backfilled from the history.
5. ``delivery_status_words``: a run's delivery status in the words of the delivery outbox
   (issue 9): ``none`` becomes ``not-requested``, ``failed`` becomes ``not-delivered``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass

# The rule step 2 makes explicit: this many consecutive schedule errors disabled a job (§3.6).
AUTO_DISABLE_SCHEDULE_ERRORS = 3


@dataclass(frozen=True)
class Step:
    """One migration: applying it to schema ``version - 1`` yields schema ``version``."""

    version: int
    name: str
    apply: Callable[[sqlite3.Connection], None]


def columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}


def _add_column(conn: sqlite3.Connection, table: str, name: str, decl: str) -> None:
    if name not in columns(conn, table):
        conn.execute(f"ALTER TABLE {table} ADD COLUMN {name} {decl}")


_INITIAL = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS jobs (
        name TEXT PRIMARY KEY,
        anchor REAL,
        next_nominal_at REAL,
        next_effective_at REAL,
        last_started_at REAL,
        last_finished_at REAL,
        last_status TEXT,
        last_error TEXT,
        consecutive_errors INTEGER NOT NULL DEFAULT 0,
        schedule_errors INTEGER NOT NULL DEFAULT 0,
        running_run_id TEXT,
        running_started_at REAL,
        running_pid INTEGER,
        running_host TEXT,
        last_alert_at REAL,
        spec_hash TEXT,
        source_revision TEXT,
        suspended_since REAL,
        first_reconciled_at REAL
    )""",
    """CREATE TABLE IF NOT EXISTS runs (
        run_id TEXT PRIMARY KEY,
        occurrence_key TEXT NOT NULL,
        job TEXT NOT NULL,
        scheduled_at REAL,
        started_at REAL NOT NULL,
        finished_at REAL,
        status TEXT,
        attempt INTEGER NOT NULL DEFAULT 1,
        trigger TEXT NOT NULL DEFAULT 'schedule',
        error TEXT,
        summary TEXT
    )""",
    # History of one job newest first, and retention by count, walk (job, started_at);
    # retention by age walks started_at; "did this occurrence run?" looks up occurrence_key.
    "CREATE INDEX IF NOT EXISTS runs_job_started ON runs (job, started_at)",
    "CREATE INDEX IF NOT EXISTS runs_started ON runs (started_at)",
    "CREATE INDEX IF NOT EXISTS runs_occurrence ON runs (occurrence_key)",
    """CREATE TABLE IF NOT EXISTS skips (
        id INTEGER PRIMARY KEY,
        job TEXT NOT NULL,
        scheduled_at REAL NOT NULL,
        reason TEXT NOT NULL,
        recorded_at REAL NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS skips_job_scheduled ON skips (job, scheduled_at)",
    "CREATE INDEX IF NOT EXISTS skips_recorded ON skips (recorded_at)",
)


def initial(conn: sqlite3.Connection) -> None:
    """Schema 1: the jobs, their run history and skipped occurrences."""
    for statement in _INITIAL:
        conn.execute(statement)


def run_outcome_details(conn: sqlite3.Connection) -> None:
    """Schema 2: error class and delivery status per run, explicit disabled flag per job.

    The data fixes run only while the columns are being added, i.e. only on a schema-1 table:
    in schema 2 a job with three schedule errors may have been re-enabled on purpose, and
    must stay so however often the chain runs.
    """
    if "error_class" not in columns(conn, "runs"):
        _add_column(conn, "runs", "error_class", "TEXT")
        _add_column(conn, "runs", "delivery_status", "TEXT")
        conn.execute("UPDATE runs SET status = NULL WHERE status = 'running'")
        conn.execute("UPDATE runs SET error_class = 'timeout' WHERE status = 'timeout'")
    if "disabled" not in columns(conn, "jobs"):
        _add_column(conn, "jobs", "disabled", "INTEGER NOT NULL DEFAULT 0")
        _add_column(conn, "jobs", "disabled_reason", "TEXT")
        conn.execute(
            "UPDATE jobs SET disabled = 1, disabled_reason = 'schedule-errors' "
            "WHERE schedule_errors >= ?",
            (AUTO_DISABLE_SCHEDULE_ERRORS,),
        )


def delivery_outbox(conn: sqlite3.Connection) -> None:
    """Schema 3: the durable delivery outbox (one row per payload owed to a target)."""
    conn.execute(
        """CREATE TABLE IF NOT EXISTS outbox (
            id INTEGER PRIMARY KEY,
            run_id TEXT NOT NULL,
            job TEXT NOT NULL,
            target TEXT NOT NULL,
            payload TEXT NOT NULL,
            idempotency_key TEXT NOT NULL UNIQUE,
            status TEXT NOT NULL DEFAULT 'pending',
            attempts INTEGER NOT NULL DEFAULT 0,
            next_attempt_at REAL,
            last_error TEXT,
            created_at REAL NOT NULL,
            updated_at REAL
        )"""
    )
    # The delivery worker asks "what is pending and due?"; retention asks "what settled long
    # ago?"; both are bounded index range scans whatever the size of the outbox.
    conn.execute("CREATE INDEX IF NOT EXISTS outbox_due ON outbox (status, next_attempt_at)")
    conn.execute("CREATE INDEX IF NOT EXISTS outbox_settled ON outbox (status, updated_at)")
    conn.execute("CREATE INDEX IF NOT EXISTS outbox_run ON outbox (run_id)")


def job_slot_tracking(conn: sqlite3.Connection) -> None:
    """Schema 4: the newest slot each job consumed, and a hash of its schedule.

    Before schema 4 the newest consumed slot was only implied by the history, so the backfill
    takes the latest ``scheduled_at`` among the job's runs and skips; it runs only while the
    column is being added, never over a value the engine wrote. ``schedule_hash`` starts NULL:
    the engine treats an unknown hash as "schedule unchanged" on its first reconcile.
    """
    if "last_nominal_at" not in columns(conn, "jobs"):
        _add_column(conn, "jobs", "last_nominal_at", "REAL")
        conn.execute(
            """UPDATE jobs SET last_nominal_at = (SELECT max(at) FROM (
                   SELECT max(scheduled_at) AS at FROM runs WHERE runs.job = jobs.name
                   UNION ALL
                   SELECT max(scheduled_at) FROM skips WHERE skips.job = jobs.name))"""
        )
    _add_column(conn, "jobs", "schedule_hash", "TEXT")


# Frozen here rather than imported from the model: a step upgrades the words of its time.
_DELIVERY_WORDS = (("none", "not-requested"), ("failed", "not-delivered"))


def delivery_status_words(conn: sqlite3.Connection) -> None:
    """Schema 5: runs' delivery statuses in today's words (no column changes)."""
    for old, new in _DELIVERY_WORDS:
        conn.execute("UPDATE runs SET delivery_status = ? WHERE delivery_status = ?", (new, old))


STEPS: tuple[Step, ...] = (
    Step(1, "initial", initial),
    Step(2, "run_outcome_details", run_outcome_details),
    Step(3, "delivery_outbox", delivery_outbox),
    Step(4, "job_slot_tracking", job_slot_tracking),
    Step(5, "delivery_status_words", delivery_status_words),
)
