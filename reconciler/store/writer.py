"""The state writer: the daemon's only handle for changing the state directory.

Opening it takes the one-writer lock, refuses a too-new state, backs up and migrates an older
one, and switches SQLite to WAL. Each public write is one short transaction; ``transaction()``
groups any number of writes (one engine tick) into one. The writer is not thread-safe: the
runtime serializes all state mutations through one queue (DESIGN §3.4), and may run them on a
worker thread, which is why the connection is not pinned to the thread that opened it.
"""

from __future__ import annotations

import os
import socket
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType

from reconciler import __version__
from reconciler.errors import StateError
from reconciler.model.state import (
    Delivery,
    JobState,
    RunFinish,
    RunRecord,
    RunStart,
    SkipRecord,
)
from reconciler.store import migrations, queries
from reconciler.store.files import (
    DEFAULT_STATE_DIR,
    StatePaths,
    create_private_file,
    ensure_state_dir,
)
from reconciler.store.lock import LockHolder, WriterLock
from reconciler.store.retention import Retention
from reconciler.store.transaction import WriteTx

# Waiting for readers: a writer in WAL mode never waits for them, except to switch journal mode.
_BUSY_TIMEOUT_MS = 5_000
_CLOSE_BUSY_TIMEOUT_MS = 200
_CACHE_KIB = 32 * 1024


class StateWriter:
    """The single writer of one state directory. Use ``StateWriter.open(...)``; close it."""

    def __init__(
        self, conn: sqlite3.Connection, lock: WriterLock, paths: StatePaths, policy: Retention,
        migrated_from: int, backup: Path | None,
    ) -> None:  # fmt: skip
        self._conn: sqlite3.Connection | None = conn
        self._lock = lock
        self._policy = policy
        self._in_tx = False
        # Finished runs per job since its runs were last pruned (see WriteTx.prune).
        self._unpruned: dict[str, int] = {}
        self.paths = paths
        self.migrated_from = migrated_from
        self.backup = backup

    @classmethod
    def open(
        cls,
        state_dir: str | os.PathLike[str] = DEFAULT_STATE_DIR,
        *,
        now: float,
        retention: Retention | None = None,
        pid: int | None = None,
        host: str | None = None,
        version: str = __version__,
        durable: bool = True,
    ) -> StateWriter:
        """Lock, check, back up, migrate and open the state in ``state_dir`` for writing.

        ``now`` is recorded in the lock file as the writer's start. ``retention`` defaults to
        ``Retention.from_env(os.environ)``: 2,000 runs and 90 days per job unless
        ``RECONCILER_HISTORY_RUNS`` / ``RECONCILER_HISTORY_DAYS`` say otherwise.
        ``durable=False`` skips the fsyncs, for throwaway states only (``simulate``'s scratch
        copy): a crash may then lose recent commits, though never corrupt the database.
        Raises ``StateLockedError`` at once if another writer holds the directory,
        ``StateVersionTooNew`` if a newer reconciler wrote it (nothing is changed then),
        ``StateError`` if it cannot be used (unreadable, not a database, bad settings).
        """
        policy = retention or Retention.from_env(os.environ)
        paths = StatePaths.of(state_dir)
        ensure_state_dir(paths.root)
        lock = WriterLock.acquire(paths.lock, now=now, pid=pid, host=host)
        try:
            create_private_file(paths.db)
            conn = sqlite3.connect(paths.db, isolation_level=None, check_same_thread=False)
        except (StateError, sqlite3.Error) as exc:
            lock.release()
            raise StateError(f"cannot open {paths.db}: {exc}") from exc
        try:
            old, backup = _prepare(conn, paths, version, durable)
        except sqlite3.Error as exc:
            conn.close()
            lock.release()
            raise StateError(f"cannot open {paths.db}: {exc}") from exc
        except BaseException:
            conn.close()
            lock.release()
            raise
        return cls(conn, lock, paths, policy, old, backup)

    @property
    def holder(self) -> LockHolder:
        return self._lock.holder

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            raise StateError("the state writer is closed")
        return self._conn

    def close(self) -> None:
        """Checkpoint, leave the database in rollback mode if no reader holds it, unlock.

        At rest in rollback mode the database can be read with a read-only URI without SQLite
        creating ``-wal``/``-shm`` files (see ``reader``). If a reader holds a snapshot, the
        switch would wait; it is skipped and readers cope with the WAL files left behind.
        """
        conn, self._conn = self._conn, None
        if conn is None:
            return
        try:
            conn.execute(f"PRAGMA busy_timeout = {_CLOSE_BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA journal_mode = DELETE")
        except sqlite3.Error:
            pass  # a reader holds the database: stay in WAL, which is just as safe
        finally:
            conn.close()
            self._lock.release()

    def __enter__(self) -> StateWriter:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[WriteTx]:
        """One transaction for any number of writes: all of them commit, or none."""
        if self._in_tx:
            raise StateError("state writes do not nest: finish the current transaction first")
        conn = self.conn
        tx = WriteTx(conn, self._policy, self._lock.holder.pid or os.getpid(),
                     self._lock.holder.host or socket.gethostname(),
                     self._unpruned)  # fmt: skip
        self._in_tx = True
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield tx
                tx.prune()
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:  # a failed COMMIT may already have rolled back
                    conn.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            raise StateError(f"state write failed: {exc}") from exc
        finally:
            self._in_tx = False

    # Writes: each is one transaction; the plural forms batch one engine tick into one.

    def put_job(self, job: JobState) -> None:
        self.put_jobs([job])

    def put_jobs(self, jobs: Sequence[JobState]) -> None:
        with self.transaction() as tx:
            for job in jobs:
                tx.put_job(job)

    def delete_job(self, name: str) -> bool:
        with self.transaction() as tx:
            return tx.delete_job(name)

    def start_run(self, start: RunStart) -> None:
        self.start_runs([start])

    def start_runs(self, starts: Sequence[RunStart]) -> None:
        with self.transaction() as tx:
            for start in starts:
                tx.start_run(start)

    def finish_run(self, finish: RunFinish) -> None:
        self.finish_runs([finish])

    def finish_runs(self, finishes: Sequence[RunFinish]) -> None:
        with self.transaction() as tx:
            for finish in finishes:
                tx.finish_run(finish)

    def record_skip(self, skip: SkipRecord) -> None:
        self.record_skips([skip])

    def record_skips(self, skips: Sequence[SkipRecord]) -> None:
        with self.transaction() as tx:
            for skip in skips:
                tx.record_skip(skip)

    def enqueue(self, delivery: Delivery) -> int:
        with self.transaction() as tx:
            return tx.enqueue(delivery)

    def update_delivery(self, delivery: Delivery) -> None:
        with self.transaction() as tx:
            tx.update_delivery(delivery)

    # Reads through the writer's own connection (the daemon needs no separate reader).

    def jobs(self) -> list[JobState]:
        return queries.list_jobs(self.conn)

    def job(self, name: str) -> JobState | None:
        return queries.get_job(self.conn, name)

    def running_jobs(self) -> list[JobState]:
        return queries.running_jobs(self.conn)

    def runs(self, job: str, limit: int = 50, before: float | None = None) -> list[RunRecord]:
        return queries.list_runs(self.conn, job, limit, before)

    def run(self, run_id: str) -> RunRecord | None:
        return queries.get_run(self.conn, run_id)

    def runs_of_occurrence(self, occurrence_key: str) -> list[RunRecord]:
        return queries.runs_of_occurrence(self.conn, occurrence_key)

    def skips(self, job: str | None = None, limit: int = 50) -> list[SkipRecord]:
        return queries.list_skips(self.conn, job, limit)

    def due_deliveries(self, now: float, limit: int = 100) -> list[Delivery]:
        return queries.due_deliveries(self.conn, now, limit)

    def deliveries_of_run(self, run_id: str) -> list[Delivery]:
        return queries.deliveries_of_run(self.conn, run_id)


def _prepare(
    conn: sqlite3.Connection, paths: StatePaths, version: str, durable: bool
) -> tuple[int, Path | None]:
    """Version check, backup, WAL, durability, migration; returns (old version, backup path)."""
    conn.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
    old = migrations.check_not_too_new(conn, str(paths.db))
    backup = None
    if 0 < old < migrations.CURRENT_VERSION:
        backup = paths.backup(old)
        migrations.backup_to(conn, backup)
    conn.execute("PRAGMA journal_mode = WAL")
    # FULL, not NORMAL: in WAL mode NORMAL survives a killed process but may lose the last
    # commits on power loss or an OS crash, because the log is only synced at checkpoints. FULL
    # syncs the log on every commit, so a run the writer reported as committed is there after
    # any crash. The price is one fsync per transaction, which the engine amortizes by batching
    # one tick's writes into one transaction (bench/store.py measures it).
    conn.execute(f"PRAGMA synchronous = {'FULL' if durable else 'OFF'}")
    # The default 2 MiB page cache holds the hot pages of a few thousand jobs; with 100,000
    # jobs the B-tree pages each run touches would be re-read from the OS on every write.
    conn.execute(f"PRAGMA cache_size = -{_CACHE_KIB}")
    migrations.migrate(conn, writer=version)
    return old, backup
