"""The typed write API: run starts and finishes, job state, skips, the outbox, batches, files."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import fields, replace
from pathlib import Path

import pytest

from reconciler.errors import StateError
from reconciler.model.state import (
    SUMMARY_LIMIT,
    Delivery,
    JobState,
    RunFinish,
    RunningMarker,
    RunStart,
    SkipRecord,
    excerpt,
)
from reconciler.store import StateReader, StateWriter

T0 = 1_767_225_600.0  # 2026-01-01T00:00:00Z


@pytest.fixture
def writer(tmp_path: Path) -> Iterator[StateWriter]:
    opened = StateWriter.open(tmp_path / "state", now=T0, pid=99, host="box")
    yield opened
    opened.close()


def _start(run_id: str, job: str = "a", at: float = T0, **kw: object) -> RunStart:
    return RunStart(run_id, job, f"occ-{run_id}", at, at, **kw)  # type: ignore[arg-type]


def test_files_are_private_and_rest_in_rollback_mode(tmp_path: Path) -> None:
    state = tmp_path / "deep" / "state"
    with StateWriter.open(state, now=T0) as writer:
        writer.start_run(_start("r1"))
        assert os.stat(state).st_mode & 0o777 == 0o700
        for name in ("state.db", "state.db-wal", "state.db-shm", "state.lock"):
            assert os.stat(state / name).st_mode & 0o777 == 0o600, name
    assert sorted(os.listdir(state)) == ["state.db", "state.lock"]


def test_an_existing_loose_directory_is_tightened(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir(mode=0o755)
    with StateWriter.open(state, now=T0):
        assert os.stat(state).st_mode & 0o777 == 0o700


def test_every_job_state_field_round_trips(writer: StateWriter) -> None:
    values: dict[str, object] = {}
    for number, field in enumerate(fields(JobState), start=1):
        if field.name == "name":
            values[field.name] = "every-field"
        elif field.name == "running":
            values[field.name] = RunningMarker("r-x", T0 + number, 321, "elsewhere")
        elif field.name == "last_status":
            values[field.name] = "timeout"
        elif field.type == "bool":
            values[field.name] = True
        elif "int" in str(field.type):
            values[field.name] = number
        elif "float" in str(field.type):
            values[field.name] = T0 + number
        else:
            values[field.name] = f"value-{field.name}"
    job = JobState(**values)  # type: ignore[arg-type]
    writer.put_job(job)
    assert writer.job("every-field") == job
    with StateReader.open(writer.paths.root) as reader:
        assert reader.job("every-field") == job


def test_start_marks_running_and_finish_updates_the_job(writer: StateWriter) -> None:
    writer.put_job(JobState("a", anchor=T0, first_reconciled_at=T0))
    writer.start_run(_start("r1", trigger="manual", attempt=1))
    job = writer.job("a")
    assert job is not None and job.running == RunningMarker("r1", T0, 99, "box")
    assert writer.runs("a")[0].running
    writer.finish_run(RunFinish("r1", "a", T0 + 5, "error", error="boom", error_class="network"))
    job = writer.job("a")
    assert job is not None and job.running is None
    assert (job.last_started_at, job.last_finished_at, job.last_status, job.last_error) == (
        T0, T0 + 5, "error", "boom")  # fmt: skip
    assert job.consecutive_errors == 1 and job.anchor == T0
    run = writer.run("r1")
    assert run is not None and (run.status, run.error_class, run.trigger) == (
        "error", "network", "manual")  # fmt: skip


def test_consecutive_errors_count_failures_reset_on_ok_ignore_skips(writer: StateWriter) -> None:
    outcomes = ["error", "timeout", "interrupted", "skipped", "ok", "error"]
    expected = [1, 2, 3, 3, 0, 1]
    for n, (status, count) in enumerate(zip(outcomes, expected, strict=True)):
        writer.start_run(_start(f"r{n}", at=T0 + n))
        writer.finish_run(RunFinish(f"r{n}", "a", T0 + n + 0.5, status))  # type: ignore[arg-type]
        job = writer.job("a")
        assert job is not None and job.consecutive_errors == count, status
    job = writer.job("a")
    assert job is not None and job.last_status == "error"


def test_finish_with_merged_job_state_writes_it_as_given(writer: StateWriter) -> None:
    writer.start_run(_start("r1"))
    merged = JobState("a", next_nominal_at=T0 + 60, last_status="ok", consecutive_errors=0,
                      running=RunningMarker("r1", T0), spec_hash="new")  # fmt: skip
    writer.finish_run(RunFinish("r1", "a", T0 + 1, "ok", job_state=merged))
    job = writer.job("a")
    assert job is not None and job.spec_hash == "new" and job.next_nominal_at == T0 + 60
    assert job.running is None  # the finished run's marker is cleared regardless


def test_finish_of_a_deleted_job_records_the_run_and_drops_the_job(writer: StateWriter) -> None:
    writer.start_run(_start("r1"))
    assert writer.delete_job("a")
    writer.finish_run(RunFinish("r1", "a", T0 + 1, "ok"))
    assert writer.job("a") is None
    assert writer.runs("a")[0].status == "ok"


def test_mistakes_are_refused(writer: StateWriter) -> None:
    with pytest.raises(StateError, match="never started"):
        writer.finish_run(RunFinish("nope", "a", T0, "ok"))
    writer.start_run(_start("r1"))
    with pytest.raises(StateError, match="already recorded"):
        writer.start_run(_start("r1"))
    writer.finish_run(RunFinish("r1", "a", T0 + 1, "ok"))
    with pytest.raises(StateError, match="already finished"):
        writer.finish_run(RunFinish("r1", "a", T0 + 2, "error"))
    with pytest.raises(ValueError, match="run status"):
        RunFinish("r1", "a", T0, "exploded")  # type: ignore[arg-type]
    with pytest.raises(StateError, match="do not nest"), writer.transaction(), writer.transaction():
        pass


def test_a_batch_commits_whole_or_not_at_all(writer: StateWriter) -> None:
    writer.start_runs([_start("r1", "a"), _start("r2", "b")])
    with pytest.raises(StateError):
        writer.finish_runs([RunFinish("r1", "a", T0 + 1, "ok"), RunFinish("zz", "b", T0, "ok")])
    assert writer.run("r1").running  # type: ignore[union-attr]
    with writer.transaction() as tx:
        tx.finish_run(RunFinish("r1", "a", T0 + 1, "ok"))
        tx.finish_run(RunFinish("r2", "b", T0 + 1, "timeout"))
        tx.record_skip(SkipRecord("a", T0 + 60, "overlap", T0 + 60))
        tx.put_job(JobState("c"))
    assert [job.name for job in writer.jobs()] == ["a", "b", "c"]
    assert writer.running_jobs() == []
    assert writer.skips("a") == [SkipRecord("a", T0 + 60, "overlap", T0 + 60)]


def test_summaries_and_errors_are_bounded(writer: StateWriter) -> None:
    writer.start_run(_start("r1"))
    huge = "head " + "x" * 100_000 + " tail"
    writer.finish_run(RunFinish("r1", "a", T0 + 1, "error", error=huge, summary=huge))
    run = writer.run("r1")
    assert run is not None and run.summary is not None and run.error is not None
    assert len(run.summary) == SUMMARY_LIMIT and run.summary.startswith("head ")
    assert run.summary.endswith(" tail") and len(run.error) < SUMMARY_LIMIT
    assert excerpt("short", 10) == "short" and excerpt(None, 10) is None


def test_outbox_enqueue_dedup_due_and_status_rollup(writer: StateWriter) -> None:
    writer.start_run(_start("r1"))
    hooks = tuple(
        Delivery("r1", "a", target, "{}", f"idem-{target}", T0 + 1) for target in ("x", "y")
    )
    writer.finish_run(RunFinish("r1", "a", T0 + 1, "ok", deliveries=hooks))
    assert writer.run("r1").delivery_status == "pending"  # type: ignore[union-attr]
    assert writer.enqueue(hooks[0]) == writer.deliveries_of_run("r1")[0].id  # replay: one entry
    due = writer.due_deliveries(now=T0 + 1)
    assert [d.target for d in due] == ["x", "y"] and writer.due_deliveries(now=T0) == []
    first, second = due
    writer.update_delivery(replace(first, status="delivered", attempts=1, updated_at=T0 + 2))
    assert writer.run("r1").delivery_status == "pending"  # type: ignore[union-attr]
    writer.update_delivery(
        replace(second, attempts=1, last_error="503", next_attempt_at=T0 + 30, updated_at=T0 + 2)
    )
    assert [d.target for d in writer.due_deliveries(now=T0 + 29)] == []
    writer.update_delivery(replace(second, status="failed", attempts=5, updated_at=T0 + 99))
    assert writer.run("r1").delivery_status == "not-delivered"  # type: ignore[union-attr]
    with pytest.raises(StateError, match="needs the entry's id"):
        writer.update_delivery(hooks[0])


def test_reader_sees_what_the_writer_committed(writer: StateWriter) -> None:
    writer.put_jobs([JobState("b"), JobState("a", suspended_since=T0)])
    for n in range(5):
        writer.start_run(_start(f"r{n}", at=T0 + n))
        writer.finish_run(RunFinish(f"r{n}", "a", T0 + n + 0.5, "ok"))
    with StateReader.open(writer.paths.root) as reader:
        assert [job.name for job in reader.jobs()] == ["a", "b"]
        assert reader.job("a") == writer.job("a")
        assert [run.run_id for run in reader.runs("a", limit=3)] == ["r4", "r3", "r2"]
        assert [run.run_id for run in reader.runs("a", before=T0 + 2)] == ["r1", "r0"]
        assert [run.run_id for run in reader.runs_of_occurrence("occ-r3")] == ["r3"]
        writer.start_run(_start("r9", at=T0 + 9))
        assert reader.run("r9") is None  # the reader's snapshot predates it
        reader.refresh()
        assert reader.run("r9") is not None


def test_a_file_that_is_not_a_database_is_a_state_error_and_unlocks(tmp_path: Path) -> None:
    (tmp_path / "state.db").write_bytes(b"this is not SQLite" * 100)
    with pytest.raises(StateError, match="not a database"):
        StateWriter.open(tmp_path, now=T0)
    with pytest.raises(StateError, match="not a database"):
        StateReader.open(tmp_path)
    (tmp_path / "state.db").unlink()
    with StateWriter.open(tmp_path, now=T0) as writer:  # the failed open left no lock behind
        assert writer.jobs() == []


def test_start_with_the_engines_job_state_writes_the_row_whole_with_this_process(
        writer: StateWriter) -> None:
    writer.put_job(JobState("a", anchor=T0, spec_hash="old"))
    state = JobState("a", anchor=T0, next_nominal_at=T0 + 60, spec_hash="new",
                     running=RunningMarker("r1", T0))
    writer.start_run(_start("r1", job_state=state))
    job = writer.job("a")
    assert job == replace(state, running=RunningMarker("r1", T0, 99, "box"))
    assert writer.run("r1") is not None and writer.run("r1").running  # type: ignore[union-attr]


def test_a_start_whose_job_state_does_not_name_the_run_is_refused() -> None:
    with pytest.raises(ValueError, match="marked running"):
        _start("r1", job_state=JobState("a"))
    with pytest.raises(ValueError, match="marked running"):
        _start("r1", job_state=JobState("a", running=RunningMarker("r0", T0)))
    with pytest.raises(ValueError, match="marked running"):
        _start("r1", job_state=JobState("b", running=RunningMarker("r1", T0)))


def test_finish_with_merged_state_keeps_another_runs_marker(writer: StateWriter) -> None:
    writer.start_run(_start("r1"))
    writer.start_run(_start("r2", at=T0 + 1))
    merged = JobState("a", last_status="ok", running=RunningMarker("r2", T0 + 1, 99, "box"))
    writer.finish_run(RunFinish("r1", "a", T0 + 2, "ok", job_state=merged))
    job = writer.job("a")
    assert job is not None and job.running == RunningMarker("r2", T0 + 1, 99, "box")


def test_only_a_run_without_an_outcome_can_be_taken_back(writer: StateWriter) -> None:
    writer.start_run(_start("armed"))
    writer.start_run(_start("done", at=T0 + 1))
    writer.finish_run(RunFinish("done", "a", T0 + 2, "ok"))
    with writer.transaction() as tx:
        assert tx.delete_unstarted_run("armed")
        assert not tx.delete_unstarted_run("done")
        assert not tx.delete_unstarted_run("never")
    assert [run.run_id for run in writer.runs("a")] == ["done"]
