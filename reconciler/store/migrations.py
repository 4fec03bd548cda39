"""Running the migration chain: version checks, backups, on-disk and in-memory upgrades.

The schema version is ``PRAGMA user_version`` (0 = a database with nothing in it yet); the
reconciler version that last opened the state for writing is ``meta.writer_version``.

- A writer migrates on open: first a backup copy (``state.db.bak-<old schema>``, SQLite backup
  API), then every pending step and the new version in one transaction, so a crash or a failing
  step leaves the old schema intact.
- A reader never writes: if steps are pending it copies the database into ``:memory:`` and
  migrates the copy (``open_migrated_copy``).
- A state whose schema is newer than ``CURRENT_VERSION`` is refused before anything is read or
  written (``StateVersionTooNew``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path

from reconciler.errors import StateError, StateVersionTooNew
from reconciler.store.files import create_private_file
from reconciler.store.steps import STEPS, Step

CURRENT_VERSION = STEPS[-1].version


def schema_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def writer_version(conn: sqlite3.Connection) -> str | None:
    """The reconciler version recorded by the last writer, if the state has one."""
    if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'meta'").fetchone():
        return None
    row = conn.execute("SELECT value FROM meta WHERE key = 'writer_version'").fetchone()
    return None if row is None else str(row[0])


def check_not_too_new(conn: sqlite3.Connection, where: str) -> int:
    """The schema version of ``conn``, or ``StateVersionTooNew`` if this code predates it."""
    version = schema_version(conn)
    if version > CURRENT_VERSION:
        written_by = writer_version(conn)
        by = f" (reconciler {written_by})" if written_by else ""
        raise StateVersionTooNew(
            f"state {where} was written by reconciler schema {version}{by}; this is schema "
            f"{CURRENT_VERSION}: upgrade reconciler or point --state elsewhere"
        )
    return version


def pending_steps(version: int) -> tuple[Step, ...]:
    return tuple(step for step in STEPS if step.version > version)


def apply_steps(conn: sqlite3.Connection, steps: Iterable[Step]) -> None:
    """Apply ``steps`` in order inside the caller's transaction, recording each version.

    ``PRAGMA user_version`` is transactional in SQLite, so it commits or rolls back with the
    steps themselves.
    """
    for step in steps:
        try:
            step.apply(conn)
        except sqlite3.Error as exc:
            raise StateError(f"migration step {step.version} ({step.name}) failed: {exc}") from exc
        conn.execute(f"PRAGMA user_version = {int(step.version)}")


def migrate(conn: sqlite3.Connection, *, writer: str | None) -> tuple[int, int]:
    """Bring ``conn`` to ``CURRENT_VERSION`` in one transaction; returns (old, new) versions.

    ``conn`` must be in autocommit mode (``isolation_level=None``) and outside a transaction.
    ``writer`` is recorded as ``meta.writer_version`` (None: leave the record alone).
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        old = check_not_too_new(conn, "database")
        apply_steps(conn, pending_steps(old))
        if writer is not None:
            conn.execute(
                "INSERT INTO meta (key, value) VALUES ('writer_version', ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value "
                "WHERE value IS NOT excluded.value",
                (writer,),
            )
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return old, CURRENT_VERSION


def backup_to(conn: sqlite3.Connection, target: Path) -> None:
    """Copy the database behind ``conn`` to ``target`` (0600), replacing any older copy.

    A journal left by a backup that was killed half-way goes too: it belongs to the old copy.
    """
    target.unlink(missing_ok=True)
    target.with_name(target.name + "-journal").unlink(missing_ok=True)
    create_private_file(target)
    copy = sqlite3.connect(target)
    try:
        conn.backup(copy)
    except sqlite3.Error as exc:
        raise StateError(f"cannot back up the state to {target}: {exc}") from exc
    finally:
        copy.close()


def open_migrated_copy(source: sqlite3.Connection) -> sqlite3.Connection:
    """A private in-memory copy of ``source`` brought to the current schema; disk untouched."""
    memory = sqlite3.connect(":memory:", isolation_level=None)
    source.backup(memory)
    migrate(memory, writer=None)
    return memory
