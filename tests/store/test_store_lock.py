"""One writer per state directory: a second fails at once, naming the holder; the first goes on."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest
from store_helpers import WriterProcess

from reconciler.errors import StateLockedError
from reconciler.store import StateReader, StateWriter
from reconciler.store.lock import WriterLock, lock_is_held, read_holder


def test_second_writer_process_fails_at_once_and_first_keeps_writing(tmp_path: Path) -> None:
    first = WriterProcess(tmp_path)
    assert first.banner.startswith("ready ")
    holder_pid = int(first.banner.split()[1])
    assert first.ask("run a/1") == "committed a/1"

    second = WriterProcess(tmp_path)
    assert second.banner == ""  # it never got ready
    code = second.proc.wait(timeout=30)
    assert second.proc.stderr is not None
    message = second.proc.stderr.read()
    second.stop()
    assert code == 1
    assert f"pid {holder_pid} on host {socket.gethostname()} since " in message
    assert "--state" in message and "stop that one" in message

    # The first writer is unharmed: it keeps committing, and the database is sound.
    assert first.ask("run a/2") == "committed a/2"
    assert first.ask("run b/1") == "committed b/1"
    with StateReader.open(tmp_path) as reader:
        assert reader.integrity_check() == ["ok"]
        assert [run.run_id for run in reader.runs("a")] == ["a/2", "a/1"]
    assert first.stop() == 0

    # Once the first is gone, the lock is free again.
    third = WriterProcess(tmp_path)
    assert third.banner.startswith("ready ")
    assert third.stop() == 0


def test_second_writer_in_process_is_refused_before_touching_the_database(tmp_path: Path) -> None:
    with StateWriter.open(tmp_path, now=1_700_000_000.0, pid=4242, host="box") as writer:
        db_before = (tmp_path / "state.db").read_bytes()
        with pytest.raises(StateLockedError) as caught:
            StateWriter.open(tmp_path, now=1_700_000_100.0)
        assert "pid 4242 on host box since 2023-11-14T22:13:20Z" in str(caught.value)
        assert (tmp_path / "state.db").read_bytes() == db_before
        assert writer.jobs() == []


def test_lock_file_records_the_holder_and_is_private(tmp_path: Path) -> None:
    lock = WriterLock.acquire(tmp_path / "state.lock", now=12.5, pid=7, host="h")
    try:
        holder = read_holder(tmp_path / "state.lock")
        assert (holder.pid, holder.host, holder.since) == (7, "h", 12.5)
        assert os.stat(tmp_path / "state.lock").st_mode & 0o777 == 0o600
    finally:
        lock.release()
    lock.release()  # releasing twice is harmless
    assert not lock.held


def test_a_torn_lock_record_still_yields_a_message(tmp_path: Path) -> None:
    (tmp_path / "state.lock").write_text("{not json")
    holder = read_holder(tmp_path / "state.lock")
    assert holder.pid is None
    assert "unidentified" in holder.describe()


def test_readers_do_not_need_the_lock(tmp_path: Path) -> None:
    with StateWriter.open(tmp_path, now=1.0), StateReader.open(tmp_path) as reader:
        assert reader.exists and reader.jobs() == []


def test_lock_is_held_is_read_from_proc_locks(tmp_path: Path) -> None:
    path = tmp_path / "state.lock"
    assert not lock_is_held(path)  # no lock file at all
    lock = WriterLock.acquire(path, now=1.0)
    try:
        assert lock_is_held(path)
        info = os.stat(path)
        fake = tmp_path / "locks"
        key = f"{os.major(info.st_dev):02x}:{os.minor(info.st_dev):02x}:{info.st_ino}"
        fake.write_text(f"1: -> FLOCK  ADVISORY  WRITE 9 {key} 0 EOF\n")  # a waiter only
        assert not lock_is_held(path, fake)
        assert lock_is_held(path, tmp_path / "no-such-file")  # unknown: assume a writer
    finally:
        lock.release()
    assert not lock_is_held(path)
