"""Kill a writer with SIGKILL at random points, 200 times; nothing it reported as committed is lost.

Each round forks a writer process that records runs (single starts and finishes, and batches of
three in one transaction) and writes ``c <run ids>`` to a pipe only after the commit returned.
The test reads a random number of its lines, then SIGKILLs it (so the kill lands anywhere: while
it opens, recovers the log, migrates, writes or commits), and checks through a read-only open:
``PRAGMA integrity_check`` is ok and every run reported committed so far is there, complete.
Forking (rather than starting an interpreter per round) keeps 200 rounds to a few seconds.
"""

from __future__ import annotations

import os
import random
import select
import signal
import sqlite3
import time
import zlib
from pathlib import Path
from typing import cast

from store_helpers import load_fixture_file, load_fixture_memory, snapshot

from reconciler.model.state import JobState, RunFinish, RunStart, RunStatus
from reconciler.store import (
    CURRENT_VERSION,
    Retention,
    StateReader,
    StateWriter,
    migrations,
)

KILLS = 200
T0 = 1_767_225_600.0
KEEP_ALL = Retention(max_runs=1_000_000, max_age=1e12)
STATUSES: tuple[RunStatus, ...] = ("ok", "error", "timeout", "interrupted")


def _expected(run_id: str) -> tuple[str, str, float, str]:
    """(job, status, finished_at, summary) a run id must end with: a pure function of the id."""
    digest = zlib.crc32(run_id.encode())
    started = T0 + digest % 100_000
    return f"job{digest % 7}", STATUSES[digest % 4], started + 1.5, f"summary of {run_id}"


def _start(run_id: str) -> RunStart:
    job, _, finished, _ = _expected(run_id)
    return RunStart(run_id, job, f"occ-{run_id}", finished - 1.5, finished - 1.5)


def _finish(run_id: str) -> RunFinish:
    job, status, finished, summary = _expected(run_id)
    error = None if status == "ok" else status
    return RunFinish(run_id, job, finished, cast(RunStatus, status), error=error, summary=summary)


def _writer_loop(state_dir: Path, generation: int, out: int) -> None:
    writer = StateWriter.open(state_dir, now=T0 + generation, retention=KEEP_ALL)
    n = 0
    while True:
        ids = [f"g{generation}-{n}-{k}" for k in range(3 if n % 4 == 3 else 1)]
        writer.start_runs([_start(run_id) for run_id in ids])
        os.write(out, f"s {','.join(ids)}\n".encode())
        with writer.transaction() as tx:
            for run_id in ids:
                tx.finish_run(_finish(run_id))
            tx.put_job(JobState(f"seen-{generation}", last_status="ok"))
        os.write(out, f"c {','.join(ids)}\n".encode())
        n += 1


def _fork_writer(state_dir: Path, generation: int) -> tuple[int, int]:
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the writer process: never returns into pytest
        os.close(read_end)
        code = 0
        try:
            _writer_loop(state_dir, generation, write_end)
        except BaseException as exc:
            os.write(write_end, f"E {exc!r}\n".encode())
            code = 3
        finally:
            os._exit(code)
    os.close(write_end)
    return pid, read_end


def _read_lines(fd: int, wanted: int, deadline: float) -> bytes:
    data = b""
    while data.count(b"\n") < wanted and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        data += chunk
    return data


def _drain(fd: int) -> bytes:
    data = b""
    while chunk := os.read(fd, 65536):
        data += chunk
    return data


def _check(state_dir: Path, committed: set[str], started: set[str]) -> None:
    """Through the read path the status command uses (which recovers a killed writer's
    leftovers privately): sound, and every reported run there, complete."""
    copy = state_dir.parent / "check.db"
    with StateReader.open(state_dir) as reader:
        assert reader.integrity_check() == ["ok"]
        reader.copy_to(copy)
    conn = sqlite3.connect(copy)
    try:
        rows = {
            row[0]: row[1:]
            for row in conn.execute("SELECT run_id, job, status, finished_at, summary FROM runs")
        }
    finally:
        conn.close()
    missing = started - rows.keys()
    assert not missing, f"runs reported started are missing: {sorted(missing)[:5]}"
    for run_id in committed:
        assert rows[run_id] == _expected(run_id), run_id


def test_sigkill_at_random_points_loses_no_committed_run(tmp_path: Path) -> None:
    tmp_path = tmp_path / "state"
    rng = random.Random(20261130)
    committed: set[str] = set()
    started: set[str] = set()
    # Where the kills landed, judged by the last line the writer got out: none (while opening),
    # "s" (between a start and its finish's commit), "c" (after a commit, in the next one).
    landed = {"opening": 0, "mid-run": 0, "after-commit": 0}
    for generation in range(KILLS):
        pid, fd = _fork_writer(tmp_path, generation)
        data = _read_lines(fd, rng.randint(0, 10), time.monotonic() + 20)
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        data += _drain(fd)
        os.close(fd)
        for line in data.decode().splitlines():
            kind, _, ids = line.partition(" ")
            assert kind in ("s", "c"), f"writer failed in round {generation}: {line}"
            (started if kind == "s" else committed).update(ids.split(","))
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
        last = data.decode().splitlines()[-1:] or [""]
        landed[{"": "opening", "s": "mid-run", "c": "after-commit"}[last[0][:1]]] += 1
        _check(tmp_path, committed, started)
    assert sum(landed.values()) == KILLS
    assert all(count >= 5 for count in landed.values()), landed
    with StateWriter.open(tmp_path, now=T0 + KILLS) as writer:  # a daemon restarting after all
        assert writer.conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    with StateReader.open(tmp_path) as reader:
        assert reader.integrity_check() == ["ok"]
        assert {job.name for job in reader.jobs()} >= {f"job{n}" for n in range(7)}


def _spin(seconds: float) -> None:
    """Let the writer get a random distance into its work (no timer is waited for)."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def _fixture_rows(conn: sqlite3.Connection) -> dict[str, list[tuple[object, ...]]]:
    """The rows that came from the schema-1 fixture (the writer loop adds others)."""
    return {
        "jobs": conn.execute("SELECT * FROM jobs WHERE name NOT LIKE 'seen-%' "
                             "AND name NOT LIKE 'job_' ORDER BY name").fetchall(),
        "runs": conn.execute("SELECT * FROM runs WHERE run_id NOT LIKE 'g%' "
                             "ORDER BY run_id").fetchall(),
        "skips": conn.execute("SELECT * FROM skips ORDER BY id").fetchall(),
    }  # fmt: skip


def test_sigkill_during_backup_and_migration_leaves_old_or_new_schema_whole(
    tmp_path: Path,
) -> None:
    """Kills land before the writer opens, while it backs up, switches to WAL or migrates, and
    after; a read (which changes nothing) then sees the schema-1 data whole, migrated in memory
    or on disk, and the next writer always starts."""
    rng = random.Random(7)
    expected = load_fixture_memory("0002_run_outcome_details.sql")
    migrations.migrate(expected, writer=None)
    seen_versions = set()
    for round_ in range(40):
        state_dir = tmp_path / f"round-{round_}"
        load_fixture_file("0002_run_outcome_details.sql", state_dir / "state.db")
        pid, fd = _fork_writer(state_dir, round_)
        if round_ % 3 == 1:
            _spin(rng.uniform(0, 0.03))  # anywhere in the open: backup, WAL switch, migration
        elif round_ % 3 == 2:
            _read_lines(fd, 1, time.monotonic() + 20)  # once the migration has committed
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        _drain(fd)
        os.close(fd)
        before = snapshot(state_dir)
        with StateReader.open(state_dir) as reader:
            assert reader.integrity_check() == ["ok"]
            seen_versions.add(reader.schema_version)
            reader.copy_to(tmp_path / f"copy-{round_}.db")
        assert snapshot(state_dir) == before
        copy = sqlite3.connect(tmp_path / f"copy-{round_}.db")
        assert _fixture_rows(copy) == _fixture_rows(expected)
        copy.close()
        with StateWriter.open(state_dir, now=T0) as writer:  # the next start always succeeds
            assert writer.job("nightly-report") is not None
    assert seen_versions == {1, CURRENT_VERSION}, seen_versions
