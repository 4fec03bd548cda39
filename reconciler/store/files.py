"""The state directory on disk: its files, their permissions, and looks that never write.

Layout of a state directory (default ``./.reconciler``, mode 0700; every file 0600)::

    state.db          the SQLite database (WAL mode while a writer has it open)
    state.db-wal      SQLite's write-ahead log (exists while a writer runs, or after a crash)
    state.db-shm      SQLite's shared-memory index of the log (same lifetime as -wal)
    state.lock        the one-writer lock; holds the pid, host and start of the current writer
    state.db.bak-N    a copy taken before migrating from schema N (kept; delete when unneeded)

and, written by the daemon rather than the store: ``source.json`` (what the last spec load
found: revision, errors, stalled jobs), ``spec-cache.json`` (the parse cache of spec files,
disposable) and ``control.sock`` (manual triggers reach the running daemon through it).

SQLite creates ``-wal`` and ``-shm`` with the permissions of ``state.db``, so creating the
database file ourselves with 0600 before SQLite opens it is what keeps them private too.
"""

from __future__ import annotations

import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from reconciler.errors import StateError

DEFAULT_STATE_DIR = ".reconciler"
DIR_MODE = 0o700
FILE_MODE = 0o600

# Bytes 18 and 19 of an SQLite header are the file format write/read versions: 2 means WAL.
_HEADER_WAL = 2
_HEADER_FORMAT_OFFSET = 18


@dataclass(frozen=True)
class StatePaths:
    """Where each file of one state directory lives."""

    root: Path

    @classmethod
    def of(cls, state_dir: str | os.PathLike[str]) -> StatePaths:
        return cls(Path(state_dir))

    @property
    def db(self) -> Path:
        return self.root / "state.db"

    @property
    def wal(self) -> Path:
        return self.root / "state.db-wal"

    @property
    def shm(self) -> Path:
        return self.root / "state.db-shm"

    @property
    def journal(self) -> Path:
        """A rollback journal: only ever present while (or because) a writer was switching the
        journal mode, at open or at close."""
        return self.root / "state.db-journal"

    @property
    def lock(self) -> Path:
        return self.root / "state.lock"

    def backup(self, schema_version: int) -> Path:
        return self.root / f"state.db.bak-{schema_version}"

    def read_only_uri(self) -> str:
        """The URI a reader opens: never creates, never writes, not even the shared memory.

        ``mode=ro`` alone is not enough: a read-only connection still opens ``-shm`` for writing
        and, when no writer is attached (after a crash), truncates and rebuilds it.
        ``readonly_shm=1`` makes the unix VFS map ``-shm`` read-only: with a live writer the
        reader uses the writer's index and takes only fcntl read locks. (Without a live writer
        the reader does not rely on this URI for a log: see ``reader``.) ``immutable=1`` would
        be wrong: it tells SQLite nobody changes the file, which a live writer does.
        """
        return f"file:{quote(str(self.db.resolve()))}?mode=ro&readonly_shm=1"


def ensure_state_dir(path: Path) -> None:
    """Create the state directory (0700) or tighten an existing one we own; writers only."""
    try:
        path.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
        info = path.stat()
        if not stat.S_ISDIR(info.st_mode):
            raise StateError(f"state path {path} exists and is not a directory")
        if stat.S_IMODE(info.st_mode) != DIR_MODE and info.st_uid == os.geteuid():
            path.chmod(DIR_MODE)
    except OSError as exc:
        raise StateError(f"cannot use state directory {path}: {exc.strerror or exc}") from exc


def create_private_file(path: Path) -> None:
    """Create ``path`` empty with mode 0600 unless it exists; an existing file is tightened."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT, FILE_MODE)
        try:
            if stat.S_IMODE(os.fstat(fd).st_mode) != FILE_MODE:
                os.fchmod(fd, FILE_MODE)
        finally:
            os.close(fd)
    except OSError as exc:
        raise StateError(f"cannot create {path}: {exc.strerror or exc}") from exc


def header_says_wal(db: Path) -> bool:
    """Whether the database header asks for WAL mode; a plain read, changes nothing."""
    try:
        with db.open("rb") as handle:
            handle.seek(_HEADER_FORMAT_OFFSET)
            versions = handle.read(2)
    except OSError:
        return False
    return len(versions) == 2 and versions[1] == _HEADER_WAL


def _no_log(paths: StatePaths) -> bool:
    """No log to read: none at all, or an empty one without its index.

    The second shape is what a writer killed between creating ``-wal`` and ``-shm`` leaves; a
    read-only open cannot use it (the index is missing and may not be created), and there is
    nothing in it to read.
    """
    try:
        return paths.wal.stat().st_size == 0 and not paths.shm.exists()
    except FileNotFoundError:
        return True


def read_detached_copy(paths: StatePaths, attempts: int = 3) -> bytes | None:
    """The database bytes, when it is in WAL mode but has no log to read; else None.

    A WAL-mode database without ``-wal`` (a writer closed while a reader still held it, so it
    could not switch back to rollback mode) cannot be opened read-only: SQLite would create
    ``-wal`` and ``-shm``. With no log, every committed page is in the main file, so a copy of
    it is a complete snapshot. The copy is only trusted when the file's identity, size and mtime
    are the same before and after the read (a checkpoint of a writer that started meanwhile
    would change them); commits such a writer made only to its log are simply not in this
    snapshot yet, as if the read had happened just before them.
    """
    for _ in range(attempts):
        if not _no_log(paths) or not header_says_wal(paths.db):
            return None
        try:
            before = os.stat(paths.db)
            data = paths.db.read_bytes()
            after = os.stat(paths.db)
        except OSError as exc:
            raise StateError(f"cannot read {paths.db}: {exc.strerror or exc}") from exc
        same = (before.st_ino, before.st_size, before.st_mtime_ns) == (
            after.st_ino,
            after.st_size,
            after.st_mtime_ns,
        )
        if same and _no_log(paths):
            # Mark the copy as a rollback-mode file so SQLite reads it without looking for a log.
            patched = bytearray(data)
            patched[_HEADER_FORMAT_OFFSET : _HEADER_FORMAT_OFFSET + 2] = b"\x01\x01"
            return bytes(patched)
    raise StateError(f"{paths.db} kept changing while being read; try again")


def has_hot_journal(paths: StatePaths) -> bool:
    """Whether a rollback journal with content sits beside the database.

    A read-only connection cannot roll such a journal back and refuses to read ("attempt to
    write a readonly database"); the reader then rolls it back in a private copy instead.
    """
    try:
        return paths.journal.stat().st_size > 0
    except FileNotFoundError:
        return False


def _identities(paths: StatePaths) -> dict[str, tuple[int, int, int]]:
    found = {}
    for path in (paths.db, paths.wal, paths.journal):
        try:
            info = os.stat(path)
        except FileNotFoundError:
            continue
        found[path.name] = (info.st_ino, info.st_size, info.st_mtime_ns)
    return found


def copy_state_files(paths: StatePaths, target: Path, attempts: int = 5) -> None:
    """Copy the database, then its log or journal, into directory ``target``, consistently.

    For the shapes a killed writer leaves (no writer attached, files at rest) any copy is
    consistent; the check that every file kept its inode, size and mtime across the copy
    catches a writer that started meanwhile, and the copy is retried. The order also covers a
    writer caught switching journal mode: SQLite syncs a journal before it changes a database
    page, so a page the database copy caught half-way is restored by the journal copied after
    it. ``-shm`` is never copied: SQLite rebuilds it from the log.
    """
    for _ in range(attempts):
        before = _identities(paths)
        try:
            for name in before:
                shutil.copyfile(paths.root / name, target / name)
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise StateError(f"cannot copy {paths.db} to read it: {exc.strerror or exc}") from exc
        if _identities(paths) == before:
            return
    raise StateError(f"{paths.db} kept changing while being read; try again")
