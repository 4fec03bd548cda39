"""The one-writer lock: ``fcntl.flock`` on ``state.lock``, which names its holder.

The kernel releases a flock when its holder dies, however it dies, so there is never a stale lock
to clean up; the pid/host/since written into the file only serve the message a second writer
prints. The file descriptor is opened close-on-exec (Python's default), so executor child
processes never inherit the lock and cannot keep it alive after the daemon is gone.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from reconciler.errors import StateError, StateLockedError
from reconciler.store.files import FILE_MODE


@dataclass(frozen=True)
class LockHolder:
    """Who holds (or last held) the writer lock, as recorded in the lock file."""

    pid: int | None
    host: str | None
    since: float | None

    def describe(self) -> str:
        if self.pid is None:
            return "an unidentified process (it is still starting, or wrote no record)"
        when = (
            datetime.fromtimestamp(self.since, tz=UTC)
            .isoformat(timespec="seconds")
            .replace("+00:00", "Z")
            if self.since is not None
            else "an unknown time"
        )
        return f"pid {self.pid} on host {self.host or '?'} since {when}"


def read_holder(path: Path) -> LockHolder:
    """The holder recorded in a lock file; a missing or torn record yields an unknown holder."""
    try:
        record = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        return LockHolder(None, None, None)
    if not isinstance(record, dict):
        return LockHolder(None, None, None)
    pid, host, since = record.get("pid"), record.get("host"), record.get("since")
    return LockHolder(
        pid if isinstance(pid, int) else None,
        host if isinstance(host, str) else None,
        float(since) if isinstance(since, int | float) else None,
    )


def lock_is_held(path: Path, proc_locks: Path = Path("/proc/locks")) -> bool:
    """Whether some process holds the writer lock, without opening or locking the lock file.

    Linux lists every held lock in ``/proc/locks`` by device and inode; a reader looks there
    (taking the lock, even shared and briefly, could make a starting daemon fail). Where that
    list is missing the answer is True: callers then take the path that is safe with a live
    writer.
    """
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return False
    key = f"{os.major(info.st_dev):02x}:{os.minor(info.st_dev):02x}:{info.st_ino}"
    try:
        listing = proc_locks.read_text(encoding="ascii", errors="replace")
    except OSError:
        return True
    for line in listing.splitlines():
        fields = line.split()  # "1: FLOCK ADVISORY WRITE <pid> <maj>:<min>:<inode> 0 EOF"
        if len(fields) >= 6 and fields[1] == "FLOCK" and fields[5] == key:
            return True
    return False


class WriterLock:
    """An acquired writer lock; ``release()`` (or process death) gives it up."""

    def __init__(self, path: Path, fd: int, holder: LockHolder) -> None:
        self.path = path
        self.holder = holder
        self._fd: int | None = fd

    @classmethod
    def acquire(
        cls, path: Path, *, now: float, pid: int | None = None, host: str | None = None
    ) -> WriterLock:
        """Take the lock at once or raise ``StateLockedError`` naming the current holder."""
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, FILE_MODE)
        except OSError as exc:
            raise StateError(f"cannot open lock file {path}: {exc.strerror or exc}") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise StateLockedError(_locked_message(path, read_holder(path))) from None
        except OSError as exc:
            os.close(fd)
            raise StateError(f"cannot lock {path}: {exc.strerror or exc}") from exc
        holder = LockHolder(
            os.getpid() if pid is None else pid,
            socket.gethostname() if host is None else host,
            now,
        )
        record = json.dumps({"pid": holder.pid, "host": holder.host, "since": holder.since})
        os.ftruncate(fd, 0)
        os.pwrite(fd, record.encode("utf-8") + b"\n", 0)
        return cls(path, fd, holder)

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        """Give the lock up. The file stays: deleting it would race with the next writer."""
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)


def _locked_message(path: Path, holder: LockHolder) -> str:
    state_dir = path.parent
    return (
        f"state directory {state_dir} is locked by another reconciler writer: "
        f"{holder.describe()}. Only one daemon may write a state directory: stop that one "
        f"(e.g. `kill {holder.pid if holder.pid is not None else '<pid>'}`) or point --state "
        f"at another directory. Read commands (status, history, plan) need no lock and work "
        f"alongside it."
    )
