"""Retention: by count per job and by age, in bounded batches riding on ordinary writes."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from reconciler.errors import StateError
from reconciler.model.state import Delivery, RunFinish, RunStart, SkipRecord
from reconciler.store import Retention, StateWriter
from reconciler.store.retention import DAY

T0 = 1_767_225_600.0


def _run(writer: StateWriter, job: str, n: int, at: float) -> None:
    run_id = f"{job}/{n}"
    writer.start_run(RunStart(run_id, job, f"occ-{run_id}", at, at))
    writer.finish_run(RunFinish(run_id, job, at + 1, "ok"))


def _count(writer: StateWriter, table: str, job: str | None = None) -> int:
    if job is None:
        return int(writer.conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
    sql = f"SELECT count(*) FROM {table} WHERE job = ?"
    return int(writer.conn.execute(sql, (job,)).fetchone()[0])


@pytest.fixture
def small(tmp_path: Path) -> Iterator[StateWriter]:
    policy = Retention(max_runs=5, max_age=10 * DAY, batch=2)
    with StateWriter.open(tmp_path, now=T0, retention=policy) as writer:
        yield writer


def test_defaults_are_documented_values() -> None:
    assert Retention() == Retention(max_runs=2_000, max_age=90 * DAY, batch=64)
    with pytest.raises(ValueError):
        Retention(max_runs=0)


def test_limits_come_from_the_environment_when_not_given() -> None:
    assert Retention.from_env({}) == Retention()
    env = {"RECONCILER_HISTORY_RUNS": "50", "RECONCILER_HISTORY_DAYS": "7.5"}
    assert Retention.from_env(env) == Retention(max_runs=50, max_age=7.5 * DAY)
    with pytest.raises(StateError, match="RECONCILER_HISTORY_DAYS='-1'"):
        Retention.from_env({"RECONCILER_HISTORY_DAYS": "-1"})
    with pytest.raises(StateError, match="positive numbers"):
        Retention.from_env({"RECONCILER_HISTORY_RUNS": "lots"})


def test_the_writer_reads_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECONCILER_HISTORY_RUNS", "3")
    with StateWriter.open(tmp_path, now=T0) as writer:
        every = Retention().prune_every
        for n in range(every + 1):  # the first finish prunes, then every prune_every-th
            _run(writer, "a", n, T0 + n)
        assert _count(writer, "runs", "a") == 3


def test_count_limit_keeps_the_newest_runs_per_job(small: StateWriter) -> None:
    for n in range(12):
        _run(small, "a", n, T0 + n)
    _run(small, "b", 0, T0)
    kept = [run.run_id for run in small.runs("a", limit=100)]
    assert kept == [f"a/{n}" for n in range(11, 6, -1)]
    assert _count(small, "runs", "b") == 1


def test_runs_are_pruned_when_they_finish_not_when_they_start(small: StateWriter) -> None:
    for n in range(5):
        _run(small, "a", n, T0 + n)
    for n in range(5, 8):  # three more start: nothing is pruned while they are in flight
        small.start_run(RunStart(f"a/{n}", "a", f"occ-a/{n}", T0 + n, T0 + n))
    assert _count(small, "runs", "a") == 8
    small.finish_run(RunFinish("a/5", "a", T0 + 9, "ok"))
    assert _count(small, "runs", "a") == 6  # one batch of 2 beyond the newest 5


def test_a_jobs_runs_are_pruned_every_quarter_batch_and_never_exceed_the_limit_by_more(
        tmp_path: Path) -> None:
    policy = Retention(max_runs=10, batch=16)
    assert policy.prune_every == 4
    with StateWriter.open(tmp_path, now=T0, retention=policy) as writer:
        counts = []
        for n in range(60):
            _run(writer, "a", n, T0 + n)
            counts.append(_count(writer, "runs", "a"))
        assert max(counts) <= policy.max_runs + policy.prune_every - 1
        assert counts[-1] <= policy.max_runs + policy.prune_every - 1
        assert min(counts[policy.max_runs:]) == policy.max_runs  # each prune trims to the limit


def test_a_backlog_drains_a_bounded_batch_per_write(tmp_path: Path) -> None:
    with StateWriter.open(tmp_path, now=T0, retention=Retention(max_runs=1000)) as writer:
        for n in range(20):
            _run(writer, "a", n, T0 + n)
    policy = Retention(max_runs=5, batch=4)  # the limit was lowered: 15 runs too many
    with StateWriter.open(tmp_path, now=T0, retention=policy) as writer:
        _run(writer, "a", 20, T0 + 20)
        assert _count(writer, "runs", "a") == 21 - 4  # one write, at most one batch
        for n in range(21, 25):
            _run(writer, "a", n, T0 + n)
        assert _count(writer, "runs", "a") == 5


def test_age_limit_prunes_every_job_including_deleted_ones(small: StateWriter) -> None:
    for n in range(3):
        _run(small, "gone", n, T0 + n)
    small.record_skips([SkipRecord("gone", T0 + n, "overlap", T0 + n) for n in range(3)])
    small.delete_job("gone")
    later = T0 + 11 * DAY
    small.start_run(RunStart("a/0", "a", "occ-a/0", later, later))  # one write: one batch of 2
    assert _count(small, "runs", "gone") == 1 and _count(small, "skips", "gone") == 1
    small.finish_run(RunFinish("a/0", "a", later + 1, "ok"))
    assert _count(small, "runs", "gone") == 0 and _count(small, "skips", "gone") == 0
    assert _count(small, "runs", "a") == 1


def test_runs_in_flight_and_pending_deliveries_are_never_pruned(small: StateWriter) -> None:
    small.start_run(RunStart("a/old", "a", "occ", T0, T0))
    small.enqueue(Delivery("a/old", "a", "hook", "{}", "k-pending", T0))
    settled = small.enqueue(Delivery("a/old", "a", "hook", "{}", "k-done", T0))
    small.update_delivery(Delivery("a/old", "a", "hook", "{}", "k-done", T0, status="delivered",
                                   attempts=1, updated_at=T0, id=settled))  # fmt: skip
    for n in range(8):
        _run(small, "a", n, T0 + 20 * DAY + n)
    assert small.run("a/old") is not None and small.run("a/old").running  # type: ignore[union-attr]
    keys = {d.idempotency_key for d in small.deliveries_of_run("a/old")}
    assert keys == {"k-pending"}


def test_skips_are_kept_per_job_by_count(small: StateWriter) -> None:
    for n in range(9):
        small.record_skip(SkipRecord("a", T0 + n, "overlap", T0 + n))
    kept = [skip.scheduled_at for skip in small.skips("a", limit=100)]
    assert kept == [T0 + n for n in range(8, 3, -1)]


@pytest.mark.parametrize(
    "sql",
    [
        # retention by count, by age; history newest first; the delivery worker's due list
        "SELECT rowid FROM runs WHERE job = 'a' ORDER BY started_at DESC LIMIT 64 OFFSET 2000",
        "SELECT id FROM skips WHERE job = 'a' ORDER BY scheduled_at DESC LIMIT 64 OFFSET 2000",
        "SELECT rowid FROM runs WHERE started_at < 1 AND status IS NOT NULL "
        "ORDER BY started_at LIMIT 64",
        "SELECT id FROM skips WHERE recorded_at < 1 ORDER BY recorded_at LIMIT 64",
        "SELECT id FROM outbox WHERE status IN ('delivered', 'failed') AND updated_at < 1 LIMIT 64",
        "SELECT run_id FROM runs WHERE job = 'a' ORDER BY started_at DESC, rowid DESC LIMIT 50",
        "SELECT id FROM outbox WHERE status = 'pending' AND next_attempt_at <= 1 "
        "ORDER BY next_attempt_at, id LIMIT 10",
    ],
)
def test_per_run_statements_search_an_index_and_never_sort(tmp_path: Path, sql: str) -> None:
    with StateWriter.open(tmp_path, now=T0):
        pass
    conn = sqlite3.connect(tmp_path / "state.db")
    plan = [str(row[-1]) for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}")]
    conn.close()
    assert all(step.startswith("SEARCH") and "INDEX" in step for step in plan), plan
