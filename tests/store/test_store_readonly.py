"""Reads never write: every byte and mtime of the state directory survives every kind of read.

Covered: no directory, an empty directory, a state at rest, a writer killed mid-flight (log and
index left behind), a live writer idle and in the middle of a transaction, a WAL database whose log
is gone, a pending migration, and a writer committing continuously while readers take snapshots.
"""

from __future__ import annotations

import os
import signal
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from store_helpers import WriterProcess, load_fixture_file, snapshot

from reconciler.model.state import JobState, RunFinish, RunStart
from reconciler.store import CURRENT_VERSION, StateReader, StateWriter


def _read_everything(state_dir: Path) -> list[str]:
    """What a status or history command reads; returns the run ids it saw."""
    with StateReader.open(state_dir) as reader:
        seen = []
        for job in reader.jobs():
            seen.extend(run.run_id for run in reader.runs(job.name, limit=1000))
            reader.skips(job.name)
        reader.running_jobs()
        reader.due_deliveries(now=2e9)
        assert reader.integrity_check() == ["ok"]
        return sorted(seen)


def _write_some(state_dir: Path, runs: int = 3) -> None:
    with StateWriter.open(state_dir, now=1_000.0) as writer:
        writer.put_job(JobState("alpha", anchor=1_000.0))
        for n in range(runs):
            writer.start_run(RunStart(f"alpha/{n}", "alpha", f"k{n}", 1_000.0 + n, 1_000.0 + n))
            writer.finish_run(RunFinish(f"alpha/{n}", "alpha", 1_000.5 + n, "ok"))


def _fds_into(directory: Path) -> Iterator[tuple[str, int]]:
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith(str(directory.resolve())):
            with open(f"/proc/self/fdinfo/{fd}") as info:
                flags = next(line for line in info if line.startswith("flags:"))
            yield target, int(flags.split()[1], 8) & os.O_ACCMODE


def _assert_read_only_handles(state_dir: Path) -> None:
    """While a reader is open: the database and the log index are open read-only, the index is
    mapped read-only. (SQLite opens the log itself read-write but a read-only connection never
    writes it.) This is what can be checked while a writer keeps changing the bytes."""
    modes = dict(_fds_into(state_dir))
    assert modes[str((state_dir / "state.db").resolve())] == os.O_RDONLY
    shm = str((state_dir / "state.db-shm").resolve())
    if shm in modes:
        assert modes[shm] == os.O_RDONLY
        with open("/proc/self/maps") as maps:
            shm_maps = [line for line in maps if line.rstrip().endswith("state.db-shm")]
        assert all(line.split()[1].startswith("r-") for line in shm_maps), shm_maps


def test_no_directory_reads_empty_and_creates_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    before = snapshot(tmp_path)
    with StateReader.open(missing) as reader:
        assert not reader.exists
        assert reader.jobs() == [] and reader.runs("x") == [] and reader.skips() == []
        assert reader.job("x") is None
    assert not missing.exists()
    assert snapshot(tmp_path) == before


def test_empty_directory_stays_empty(tmp_path: Path) -> None:
    before = snapshot(tmp_path)
    assert _read_everything(tmp_path) == []
    assert snapshot(tmp_path) == before


def test_state_at_rest_is_unchanged(tmp_path: Path) -> None:
    _write_some(tmp_path)
    assert sorted(os.listdir(tmp_path)) == ["state.db", "state.lock"]
    before = snapshot(tmp_path)
    assert _read_everything(tmp_path) == ["alpha/0", "alpha/1", "alpha/2"]
    assert snapshot(tmp_path) == before


def test_after_a_killed_writer_reads_change_nothing(tmp_path: Path) -> None:
    writer = WriterProcess(tmp_path)
    assert writer.ask("run a/1") == "committed a/1"
    writer.proc.kill()
    writer.stop()
    assert (tmp_path / "state.db-wal").exists() and (tmp_path / "state.db-shm").exists()
    before = snapshot(tmp_path)
    assert _read_everything(tmp_path) == ["a/1"]
    assert _read_everything(tmp_path) == ["a/1"]
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("mid_transaction", [False, True], ids=["idle", "mid-transaction"])
def test_live_writer_is_not_disturbed(tmp_path: Path, mid_transaction: bool) -> None:
    writer = WriterProcess(tmp_path)
    try:
        assert writer.ask("run a/1") == "committed a/1"
        if mid_transaction:
            assert writer.ask("begin a/2") == "open"
        before = snapshot(tmp_path)
        assert _read_everything(tmp_path) == ["a/1"]  # never an uncommitted run
        with StateReader.open(tmp_path) as reader:
            _assert_read_only_handles(tmp_path)
            assert str((tmp_path / "state.db-shm").resolve()) in dict(_fds_into(tmp_path))
            assert reader.exists
        assert snapshot(tmp_path) == before
        if mid_transaction:
            assert writer.ask("commit") == "committed"
        assert writer.ask("run a/3") == "committed a/3"
    finally:
        writer.stop()
    expected = ["a/1", "a/2", "a/3"] if mid_transaction else ["a/1", "a/3"]
    assert _read_everything(tmp_path) == expected


def test_wal_database_without_its_log_is_read_from_a_private_copy(tmp_path: Path) -> None:
    _write_some(tmp_path)
    conn = sqlite3.connect(tmp_path / "state.db")
    conn.execute("PRAGMA journal_mode = WAL")  # last close deletes the log, header says WAL
    conn.close()
    assert not (tmp_path / "state.db-wal").exists()
    before = snapshot(tmp_path)
    assert _read_everything(tmp_path) == ["alpha/0", "alpha/1", "alpha/2"]
    assert snapshot(tmp_path) == before


def test_empty_log_without_its_index_is_read_from_a_private_copy(tmp_path: Path) -> None:
    """What a writer killed between creating -wal and -shm leaves behind."""
    _write_some(tmp_path)
    conn = sqlite3.connect(tmp_path / "state.db")
    conn.execute("PRAGMA journal_mode = WAL")
    conn.close()
    (tmp_path / "state.db-wal").touch(mode=0o600)
    before = snapshot(tmp_path)
    assert _read_everything(tmp_path) == ["alpha/0", "alpha/1", "alpha/2"]
    assert snapshot(tmp_path) == before
    with StateWriter.open(tmp_path, now=2_000.0) as writer:  # and a writer recovers from it
        assert len(writer.runs("alpha")) == 3


def test_hot_rollback_journal_is_rolled_back_in_a_private_copy(tmp_path: Path) -> None:
    """A writer killed mid-transaction in rollback mode (as when it switches journal mode at
    open or close) leaves a hot journal, which a read-only connection refuses to touch."""
    _write_some(tmp_path, runs=50)
    ready_read, ready_write = os.pipe()
    hold_read, hold_write = os.pipe()
    pid = os.fork()
    if pid == 0:  # a writer that dies with the journal hot and database pages overwritten
        try:
            conn = sqlite3.connect(tmp_path / "state.db", isolation_level=None)
            conn.execute("PRAGMA cache_size = 1")  # spill changed pages to the file at once
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("UPDATE runs SET summary = zeroblob(3000)")
            os.write(ready_write, b"x")
            os.read(hold_read, 1)  # never answered: killed here
        finally:
            os._exit(0)
    os.close(ready_write)
    assert os.read(ready_read, 1) == b"x"  # EOF (b"") if the child failed
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    for fd in (ready_read, hold_read, hold_write):
        os.close(fd)
    assert (tmp_path / "state.db-journal").stat().st_size > 0
    before = snapshot(tmp_path)
    with StateReader.open(tmp_path) as reader:
        assert reader.integrity_check() == ["ok"]
        assert {run.summary for run in reader.runs("alpha", limit=100)} == {None}
    assert snapshot(tmp_path) == before
    with StateWriter.open(tmp_path, now=3_000.0) as writer:  # the daemon rolls it back for real
        assert len(writer.runs("alpha", limit=100)) == 50
    assert not (tmp_path / "state.db-journal").exists()


def test_pending_migration_is_applied_in_memory_only(tmp_path: Path) -> None:
    load_fixture_file("0002_run_outcome_details.sql", tmp_path / "state.db")
    before = snapshot(tmp_path)
    with StateReader.open(tmp_path) as reader:
        assert reader.schema_version == 1 and reader.migrated_in_memory
        jobs = {job.name: job for job in reader.jobs()}
        assert jobs["nightly-report"].disabled  # a step-2 normalisation, visible to the reader
        assert reader.due_deliveries(now=2e9) == []  # the step-3 table exists in the copy
    assert snapshot(tmp_path) == before
    conn = sqlite3.connect(f"file:{tmp_path / 'state.db'}?mode=ro", uri=True)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 1 < CURRENT_VERSION
    conn.close()


def test_snapshots_stay_consistent_while_a_writer_commits(tmp_path: Path) -> None:
    writer = WriterProcess(tmp_path)
    try:
        assert writer.proc.stdin is not None
        total = 60
        for n in range(total):
            writer.proc.stdin.write(f"run w/{n}\n")
        writer.proc.stdin.flush()
        done = 0
        while done < total:
            with StateReader.open(tmp_path) as reader:
                _assert_read_only_handles(tmp_path)
                first = reader.runs("w", limit=1000)
                job = reader.job("w")
                assert reader.runs("w", limit=1000) == first  # one snapshot for the whole reader
                running = [run for run in first if run.running]
                assert len(running) <= 1
                if job is not None:
                    marker = job.running.run_id if job.running else None
                    assert marker == (running[0].run_id if running else None)
            line = writer.read()
            assert line.startswith("committed w/")
            done += 1
    finally:
        writer.stop()
    assert len(_read_everything(tmp_path)) == total


def test_copy_to_writes_a_migrated_snapshot_elsewhere(tmp_path: Path) -> None:
    source = tmp_path / "source"
    load_fixture_file("0002_run_outcome_details.sql", source / "state.db")
    before = snapshot(source)
    (tmp_path / "scratch").mkdir()
    with StateReader.open(source) as reader:
        reader.copy_to(tmp_path / "scratch" / "state.db")
    assert snapshot(source) == before
    with StateWriter.open(tmp_path / "scratch", now=1.0, durable=False) as writer:
        assert writer.migrated_from == CURRENT_VERSION
        assert writer.conn.execute("PRAGMA synchronous").fetchone()[0] == 0
        job = writer.job("nightly-report")
        assert job is not None and job.disabled
