"""History retention: per job by count, everywhere by age, pruned a little at a time.

Pruning rides on writes the engine makes anyway: each write transaction deletes at most
``Retention.batch`` rows per rule, so no single write pays for a big prune; a backlog (say,
after lowering the limits) drains over the next writes. Every delete is a range scan of an index
(``runs (job, started_at)``, ``runs (started_at)``, ``skips (...)``, ``outbox (status,
updated_at)``), so its cost depends on the batch size and the count limit, never on the number of
jobs or the size of the history. Runs still in flight and deliveries still pending are never
pruned.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass

from reconciler.errors import StateError

DAY = 86_400.0
ENV_RUNS = "RECONCILER_HISTORY_RUNS"
ENV_DAYS = "RECONCILER_HISTORY_DAYS"


@dataclass(frozen=True)
class Retention:
    """How much history the store keeps.

    ``max_runs``: runs kept per job (newest by start). ``max_age``: seconds after which runs,
    skips and settled deliveries are deleted. ``batch``: the most rows one write deletes per rule.
    """

    max_runs: int = 2_000
    max_age: float = 90 * DAY
    batch: int = 64

    def __post_init__(self) -> None:
        if self.max_runs < 1 or self.max_age <= 0 or self.batch < 1:
            raise ValueError(f"retention limits must be positive: {self}")

    @property
    def prune_every(self) -> int:
        """Finishes of a job between prunes of its runs: a quarter batch, so pruning keeps up."""
        return max(1, self.batch // 4)

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> Retention:
        """The defaults, overridden by ``RECONCILER_HISTORY_RUNS`` (runs kept per job) and
        ``RECONCILER_HISTORY_DAYS`` (days of history kept) where they are set."""
        defaults = cls()
        try:
            runs = int(environ.get(ENV_RUNS, defaults.max_runs))
            days = float(environ.get(ENV_DAYS, defaults.max_age / DAY))
            return cls(max_runs=runs, max_age=days * DAY)
        except ValueError as exc:
            raise StateError(
                f"bad history retention ({ENV_RUNS}={environ.get(ENV_RUNS)!r}, "
                f"{ENV_DAYS}={environ.get(ENV_DAYS)!r}): both must be positive numbers"
            ) from exc


def prune_job_runs(conn: sqlite3.Connection, job: str, policy: Retention) -> int:
    """Delete up to ``batch`` finished runs of ``job`` beyond its newest ``max_runs``.

    The subquery walks the job's slice of ``runs (job, started_at)`` newest first, skips the kept
    ones and stops after ``batch`` more: bounded by the limits, not by the history.
    """
    cursor = conn.execute(
        """DELETE FROM runs WHERE rowid IN (
               SELECT rowid FROM runs WHERE job = ?
               ORDER BY started_at DESC LIMIT ? OFFSET ?)
           AND status IS NOT NULL""",
        (job, policy.batch, policy.max_runs),
    )
    return cursor.rowcount


def prune_job_skips(conn: sqlite3.Connection, job: str, policy: Retention) -> int:
    """Delete up to ``batch`` skips of ``job`` beyond its newest ``max_runs``."""
    cursor = conn.execute(
        """DELETE FROM skips WHERE id IN (
               SELECT id FROM skips WHERE job = ?
               ORDER BY scheduled_at DESC LIMIT ? OFFSET ?)""",
        (job, policy.batch, policy.max_runs),
    )
    return cursor.rowcount


def prune_by_age(conn: sqlite3.Connection, now: float, policy: Retention) -> int:
    """Delete up to ``batch`` rows per table older than ``max_age`` before ``now``."""
    cutoff = now - policy.max_age
    deleted = conn.execute(
        """DELETE FROM runs WHERE rowid IN (
               SELECT rowid FROM runs WHERE started_at < ? AND status IS NOT NULL
               ORDER BY started_at LIMIT ?)""",
        (cutoff, policy.batch),
    ).rowcount
    deleted += conn.execute(
        """DELETE FROM skips WHERE id IN (
               SELECT id FROM skips WHERE recorded_at < ? ORDER BY recorded_at LIMIT ?)""",
        (cutoff, policy.batch),
    ).rowcount
    deleted += conn.execute(
        # No ORDER BY: any settled entry past the cutoff may go, and without a sort the scan
        # stops after ``batch`` rows.
        """DELETE FROM outbox WHERE id IN (
               SELECT id FROM outbox WHERE status IN ('delivered', 'failed')
               AND updated_at < ? LIMIT ?)""",
        (cutoff, policy.batch),
    ).rowcount
    return deleted
