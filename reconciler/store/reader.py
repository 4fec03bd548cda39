"""The state reader: read-only snapshots for status, history, plan and the other read commands.

A reader never takes the writer lock and never writes a byte, nor changes an mtime, in the state
directory:

- no directory or no ``state.db``: an empty state; nothing is created;
- a daemon running (its lock is listed in ``/proc/locks``): opened with
  ``mode=ro&readonly_shm=1`` (see ``StatePaths.read_only_uri``), sharing the daemon's log index
  read-only; one read transaction is held, so every query of the reader sees the same
  committed snapshot while the daemon goes on writing; ``refresh()`` moves to the newest one;
- no daemon, database at rest (rollback mode, as a clean shutdown leaves it): the same open;
- no daemon, leftovers of a killed one (a log, a hot rollback journal, a log header without
  frames): the files are copied to a private scratch directory and recovered there by SQLite,
  and the result is kept in memory; a WAL-mode database with no log is read from an in-memory
  copy of the file (``files.read_detached_copy``);
- an older schema (a migration is pending): the snapshot is copied into ``:memory:`` with the
  backup API and migrated there;
- a newer schema: ``StateVersionTooNew`` before any row is read.

One caveat, POSIX's and SQLite's: closing any descriptor of a file drops every fcntl lock the
process holds on it. Opening a reader with no daemon running reads ``state.db`` directly (its
header, or a copy), so a process should not keep another reader's snapshot open across that:
read commands open one reader at a time, and the daemon, holding the lock, never takes this path.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
from pathlib import Path
from types import TracebackType

from reconciler.errors import StateError
from reconciler.model.state import Delivery, JobState, RunRecord, SkipRecord
from reconciler.store import migrations, queries
from reconciler.store.files import (
    DEFAULT_STATE_DIR,
    StatePaths,
    copy_state_files,
    create_private_file,
    has_hot_journal,
    read_detached_copy,
)
from reconciler.store.lock import lock_is_held


class StateReader:
    """A consistent read-only view of one state directory. Use ``StateReader.open(...)``."""

    def __init__(
        self, paths: StatePaths, conn: sqlite3.Connection | None, *, schema_version: int,
        writer_version: str | None, migrated_in_memory: bool,
    ) -> None:  # fmt: skip
        self.paths = paths
        self._conn = conn
        self.schema_version = schema_version
        self.writer_version = writer_version
        self.migrated_in_memory = migrated_in_memory

    @classmethod
    def open(cls, state_dir: str | os.PathLike[str] = DEFAULT_STATE_DIR) -> StateReader:
        """Open a snapshot of ``state_dir``; see the module docstring for every case."""
        paths = StatePaths.of(state_dir)
        if not paths.db.is_file():
            return cls(paths, None, schema_version=0, writer_version=None,
                       migrated_in_memory=False)  # fmt: skip
        try:
            return cls._open_existing(paths)
        except sqlite3.Error as exc:
            raise StateError(f"cannot read state {paths.db}: {exc}") from exc

    @classmethod
    def _open_existing(cls, paths: StatePaths) -> StateReader:
        conn = _open_snapshot(paths)
        try:
            version = migrations.check_not_too_new(conn, str(paths.db))
            written_by = migrations.writer_version(conn)
            if version < migrations.CURRENT_VERSION:
                memory = migrations.open_migrated_copy(conn)
                conn.close()
                conn = memory
                conn.execute("BEGIN")
            return cls(paths, conn, schema_version=version, writer_version=written_by,
                       migrated_in_memory=version < migrations.CURRENT_VERSION)  # fmt: skip
        except BaseException:
            conn.close()
            raise

    @property
    def exists(self) -> bool:
        """False when the state directory holds no database yet (every read is empty)."""
        return self._conn is not None

    def refresh(self) -> None:
        """Move to the newest committed snapshot (a migrated copy stays as it was)."""
        if self._conn is not None and not self.migrated_in_memory:
            self._conn.execute("COMMIT")
            self._conn.execute("BEGIN")

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()

    def __enter__(self) -> StateReader:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def jobs(self) -> list[JobState]:
        return [] if self._conn is None else queries.list_jobs(self._conn)

    def job(self, name: str) -> JobState | None:
        return None if self._conn is None else queries.get_job(self._conn, name)

    def running_jobs(self) -> list[JobState]:
        return [] if self._conn is None else queries.running_jobs(self._conn)

    def runs(self, job: str, limit: int = 50, before: float | None = None) -> list[RunRecord]:
        return [] if self._conn is None else queries.list_runs(self._conn, job, limit, before)

    def run(self, run_id: str) -> RunRecord | None:
        return None if self._conn is None else queries.get_run(self._conn, run_id)

    def runs_of_occurrence(self, occurrence_key: str) -> list[RunRecord]:
        if self._conn is None:
            return []
        return queries.runs_of_occurrence(self._conn, occurrence_key)

    def skips(self, job: str | None = None, limit: int = 50) -> list[SkipRecord]:
        return [] if self._conn is None else queries.list_skips(self._conn, job, limit)

    def due_deliveries(self, now: float, limit: int = 100) -> list[Delivery]:
        return [] if self._conn is None else queries.due_deliveries(self._conn, now, limit)

    def deliveries_of_run(self, run_id: str) -> list[Delivery]:
        return [] if self._conn is None else queries.deliveries_of_run(self._conn, run_id)

    def copy_to(self, target: str | os.PathLike[str]) -> None:
        """Write this snapshot, migrated, as a new database at ``target`` (e.g. a scratch state
        for ``simulate``). The source is read like any other read: not a byte of it changes."""
        path = Path(target)
        path.unlink(missing_ok=True)
        create_private_file(path)
        copy = sqlite3.connect(path, isolation_level=None)
        try:
            if self._conn is not None:
                self._conn.backup(copy)
        except sqlite3.Error as exc:
            raise StateError(f"cannot copy the state to {path}: {exc}") from exc
        finally:
            copy.close()

    def integrity_check(self) -> list[str]:
        """SQLite's ``PRAGMA integrity_check`` on the snapshot: ``["ok"]`` when sound."""
        if self._conn is None:
            return ["ok"]
        return [str(row[0]) for row in self._conn.execute("PRAGMA integrity_check")]


def _open_snapshot(paths: StatePaths) -> sqlite3.Connection:
    """A connection inside a read transaction on ``paths.db`` that writes nothing there.

    With a daemon running, SQLite's read-only open shares its log index (read-only) and its
    locks. With none, whatever a killed writer left (a hot rollback journal, a log, a log
    header without frames) is recovered from a private copy; SQLite's own read-only recovery of
    a log is avoided, as on some leftovers it retries for seconds before giving up.
    """
    if not lock_is_held(paths.lock):
        if has_hot_journal(paths):
            return _private_copy(paths)
        detached = read_detached_copy(paths)
        if detached is not None:
            conn = sqlite3.connect(":memory:", isolation_level=None)
            conn.deserialize(detached)
            conn.execute("BEGIN")
            return conn
        if paths.wal.exists():
            return _private_copy(paths)
    conn = sqlite3.connect(paths.read_only_uri(), uri=True, isolation_level=None)
    try:
        conn.execute("BEGIN")
        conn.execute("SELECT count(*) FROM sqlite_master")  # pins the snapshot
    except sqlite3.Error as exc:
        conn.close()
        if not isinstance(exc, sqlite3.OperationalError):
            raise  # not a database, corrupt: nothing a copy would fix
        # The daemon died between our look and the open, leaving something the read-only
        # path cannot use: recover it in a private copy like any leftover.
        return _private_copy(paths)
    return conn


def _private_copy(paths: StatePaths) -> sqlite3.Connection:
    """The committed state recovered from a copy of the files in a private scratch directory
    (mode 0700, removed at once): SQLite rolls back a hot journal or replays a log there as
    it would on disk, and the result is kept in memory."""
    with tempfile.TemporaryDirectory(prefix="reconciler-read-") as scratch:
        copy_state_files(paths, Path(scratch))
        private = sqlite3.connect(Path(scratch) / paths.db.name, isolation_level=None)
        try:
            private.execute("SELECT count(*) FROM sqlite_master")  # recovers the copy
            memory = sqlite3.connect(":memory:", isolation_level=None)
            private.backup(memory)
        finally:
            private.close()
    memory.execute("BEGIN")
    return memory


def state_exists(state_dir: str | os.PathLike[str] = DEFAULT_STATE_DIR) -> bool:
    """Whether ``state_dir`` holds a database; a look that changes nothing."""
    return StatePaths.of(state_dir).db.is_file()
