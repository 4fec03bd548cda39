"""A local process in its own process group: bounded capture, reaping, and the kill sequence.

The run's process is started with ``start_new_session=True``, so it leads a new process group
and everything it spawns stays in that group unless it deliberately leaves. Output is read by
an asyncio protocol as it arrives (both pipes at once, so a full pipe never blocks the child)
into bounded buffers that keep the head and the tail.

Stopping (on cancellation, or when the leader has exited but left processes behind): SIGTERM to
the whole group, up to ``grace`` seconds for it to go, then SIGKILL to the group. The leader is
always reaped; pipes that something outside the group still holds are closed by us, so nothing
a job leaves behind can hang the executor.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

# How often the group is looked at while waiting for members that hold no pipe of ours.
_POLL = 0.05
# After SIGKILL every member dies at once; this only bounds waiting for pipes held elsewhere.
_KILL_DRAIN = 1.0


class Capture:
    """The first ``head`` and the last ``tail`` bytes of a stream, and how much was dropped."""

    def __init__(self, limit: int) -> None:
        self._head_limit = limit // 4
        self._tail_limit = limit - self._head_limit
        self._head = bytearray()
        self._tail = bytearray()
        self.total = 0

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        room = self._head_limit - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        self._tail += data
        if len(self._tail) > self._tail_limit:
            del self._tail[: len(self._tail) - self._tail_limit]

    @property
    def elided(self) -> int:
        return self.total - len(self._head) - len(self._tail)

    def text(self) -> str:
        head = self._head.decode("utf-8", errors="replace")
        tail = self._tail.decode("utf-8", errors="replace")
        if not self.elided:
            return head + tail
        return f"{head}\n[... {self.elided} bytes elided ...]\n{tail}"

    def tail_text(self, chars: int) -> str:
        """The last ``chars`` characters kept, for error messages and the summary."""
        kept = self._tail if self.elided else self._head + self._tail
        return kept.decode("utf-8", errors="replace")[-chars:]


class _Protocol(asyncio.SubprocessProtocol):
    def __init__(self, limit: int) -> None:
        self.streams = {1: Capture(limit), 2: Capture(limit)}
        self.exited = asyncio.Event()
        self.finished = asyncio.Event()  # exited and every pipe closed

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        self.streams[fd].feed(data)

    def process_exited(self) -> None:
        self.exited.set()

    def connection_lost(self, exc: Exception | None) -> None:
        self.exited.set()
        self.finished.set()


@dataclass(frozen=True)
class Completed:
    pid: int
    returncode: int
    stdout: Capture
    stderr: Capture
    leftovers: bool  # the leader exited but its group had to be stopped


def _live_member(pgid: int) -> bool:
    """Whether a process other than a zombie is in group ``pgid`` (Linux /proc; else assume so).

    An orphaned zombie keeps its group id until some init reaps it, and not every container's
    init does: a group of zombies is gone for our purposes.
    """
    proc = Path("/proc")
    if not proc.is_dir():
        return True
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # exited while we looked
        if len(fields) > 2 and fields[2] == str(pgid) and fields[0] != "Z":
            return True
    return False


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # a member changed its user: it is there, we may not signal it
    return _live_member(pgid)


def signal_group(pgid: int, signum: int) -> None:
    # Already gone, or out of our reach: either way there is nothing more to do.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


class ProcessGroup:
    """One started process and its group; ``wait`` returns once nothing of it is left."""

    def __init__(self, transport: asyncio.SubprocessTransport, protocol: _Protocol,
                 grace: float) -> None:
        self._transport = transport
        self._protocol = protocol
        self._grace = grace
        self.pid = transport.get_pid()

    @classmethod
    async def start(cls, argv: Sequence[str], env: Mapping[str, str], cwd: str | None,
                    output_limit: int, grace: float) -> ProcessGroup:
        """Start ``argv``; raises ``OSError`` when it cannot be started."""
        loop = asyncio.get_running_loop()
        transport, protocol = await loop.subprocess_exec(
            lambda: _Protocol(output_limit), *argv, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, env=dict(env),
            start_new_session=True)
        return cls(transport, protocol, grace)

    async def wait(self, drain: float) -> Completed:
        """Wait for the leader, then up to ``drain`` seconds for the rest of the group.

        On cancellation the group is stopped (SIGTERM, grace, SIGKILL) and reaped before the
        CancelledError goes on.
        """
        leftovers = False
        try:
            await self._protocol.exited.wait()
            if not await self._settle(drain):
                leftovers = True
                await self.stop()
        except asyncio.CancelledError:
            await self._stop_cancelled()
            raise
        finally:
            self._transport.close()
        returncode = self._transport.get_returncode()
        assert returncode is not None  # exited is set only after the leader was reaped
        return Completed(self.pid, returncode, self._protocol.streams[1],
                         self._protocol.streams[2], leftovers)

    async def stop(self) -> None:
        """SIGTERM the group, wait up to grace, SIGKILL what is left, reap the leader."""
        signal_group(self.pid, signal.SIGTERM)
        if await self._settle(self._grace):
            return
        signal_group(self.pid, signal.SIGKILL)
        await self._protocol.exited.wait()  # SIGKILL cannot be ignored: the leader is reaped
        await self._settle(_KILL_DRAIN)

    async def _stop_cancelled(self) -> None:
        try:
            await self.stop()
        except asyncio.CancelledError:
            # Cancelled again while stopping (shutdown after a timeout): no more grace. The
            # loop's child watcher still reaps the leader once the SIGKILL lands.
            signal_group(self.pid, signal.SIGKILL)
            raise

    async def _settle(self, timeout: float) -> bool:
        """True once the leader is reaped, the pipes are closed and no member is alive."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        if not self._protocol.finished.is_set():
            try:
                await asyncio.wait_for(self._protocol.finished.wait(), max(timeout, 0.0))
            except TimeoutError:
                return False
        # Members that closed or redirected our pipes are only visible in the group itself.
        while group_alive(self.pid):
            remaining = deadline - loop.time()
            if remaining <= 0:
                return False
            await asyncio.sleep(min(_POLL, remaining))
        return True
