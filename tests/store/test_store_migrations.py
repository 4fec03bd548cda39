"""Migration steps: each has a fixture of the shape it upgrades and is idempotent; the chain is
atomic, backed up first on disk, in memory only for readers, and refuses a newer schema."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest
from store_helpers import dump, load_fixture_file, load_fixture_memory, snapshot

from reconciler.errors import StateError, StateVersionTooNew
from reconciler.store import CURRENT_VERSION, StateReader, StateWriter, migrations
from reconciler.store.steps import STEPS, Step

FIXTURE_OF = {step.version: f"{step.version:04d}_{step.name}.sql" for step in STEPS}


def _fresh() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:", isolation_level=None)
    migrations.migrate(conn, writer="test")
    return conn


def test_every_step_has_a_fixture_of_the_previous_shape() -> None:
    assert [step.version for step in STEPS] == list(range(1, len(STEPS) + 1))
    for step in STEPS:
        conn = load_fixture_memory(FIXTURE_OF[step.version])
        assert migrations.schema_version(conn) == step.version - 1, step.name


@pytest.mark.parametrize("step", STEPS, ids=lambda step: step.name)
def test_each_step_is_idempotent_on_its_fixture(step: Step) -> None:
    conn = load_fixture_memory(FIXTURE_OF[step.version])
    step.apply(conn)
    once = dump(conn)
    step.apply(conn)
    assert dump(conn) == once


def test_step_1_creates_the_initial_tables() -> None:
    conn = load_fixture_memory(FIXTURE_OF[1])
    STEPS[0].apply(conn)
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert tables == {"meta", "jobs", "runs", "skips"}


def test_step_2_normalizes_schema_1_quirks() -> None:
    conn = load_fixture_memory(FIXTURE_OF[2])
    STEPS[1].apply(conn)
    status = dict(conn.execute("SELECT run_id, status FROM runs").fetchall())
    assert status["dd-run-3"] is None  # 'running' became "no outcome yet"
    assert status["dd-run-1"] == "ok"
    classes = dict(conn.execute("SELECT run_id, error_class FROM runs").fetchall())
    assert classes["nr-run-1"] == "timeout" and classes["nr-run-2"] is None
    disabled = {row[0]: row[1:] for row in conn.execute(
        "SELECT name, disabled, disabled_reason FROM jobs")}  # fmt: skip
    assert disabled["nightly-report"] == (1, "schedule-errors")
    assert disabled["sync-every-30m"] == (0, None)


def test_step_3_adds_the_outbox_and_keeps_rows() -> None:
    conn = load_fixture_memory(FIXTURE_OF[3])
    before = dump(conn)
    STEPS[2].apply(conn)
    after = dump(conn)
    assert after["outbox"] == (after["outbox"][0], [])
    assert {k: v for k, v in after.items() if k not in ("outbox", "indexes")} == {
        k: v for k, v in before.items() if k != "indexes"
    }


def test_step_4_backfills_the_newest_consumed_slot() -> None:
    conn = load_fixture_memory(FIXTURE_OF[4])
    STEPS[3].apply(conn)
    rows = {row[0]: row[1:] for row in conn.execute(
        "SELECT name, last_nominal_at, schedule_hash FROM jobs")}  # fmt: skip
    assert rows["hourly-check"] == (1767265200.0, None)  # the skip is newer than the run
    assert rows["weekly-sync"] == (1767225600.0, None)  # a manual run has no slot
    assert rows["fresh-job"] == (None, None)


def test_step_5_speaks_of_delivery_in_todays_words() -> None:
    conn = load_fixture_memory(FIXTURE_OF[5])
    STEPS[4].apply(conn)
    words = dict(conn.execute("SELECT run_id, delivery_status FROM runs").fetchall())
    assert words == {"hc-run-1": "delivered", "hc-run-2": "not-delivered",
                     "hc-run-3": "not-requested", "hc-run-4": None, "hc-run-5": "pending"}


@pytest.mark.parametrize("version", range(CURRENT_VERSION))
def test_every_historical_shape_ends_in_the_fresh_shape(version: int) -> None:
    conn = load_fixture_memory(FIXTURE_OF[version + 1])
    old, new = migrations.migrate(conn, writer="test")
    assert (old, new) == (version, CURRENT_VERSION)
    migrated, fresh = dump(conn), dump(_fresh())
    for table in ("jobs", "runs", "skips", "outbox", "meta"):
        assert migrated[table][0] == fresh[table][0], table  # same columns, same order
    assert migrated["indexes"] == fresh["indexes"]
    assert migrations.writer_version(conn) == "test"


def test_writer_backs_up_then_migrates_on_open(tmp_path: Path) -> None:
    load_fixture_file(FIXTURE_OF[2], tmp_path / "state.db")
    original = dump(load_fixture_memory(FIXTURE_OF[2]))
    with StateWriter.open(tmp_path, now=1.0, version="9.9.9") as writer:
        assert writer.migrated_from == 1 and writer.backup == tmp_path / "state.db.bak-1"
        job = writer.job("nightly-report")
        assert job is not None and job.disabled
        assert writer.run("dd-run-3") is not None and writer.run("dd-run-3").running  # type: ignore[union-attr]
    backup = tmp_path / "state.db.bak-1"
    assert os.stat(backup).st_mode & 0o777 == 0o600
    copy = sqlite3.connect(backup)
    assert dump(copy) == original
    copy.close()
    with StateReader.open(tmp_path) as reader:
        assert reader.schema_version == CURRENT_VERSION and not reader.migrated_in_memory
        assert reader.writer_version == "9.9.9"


def test_a_failing_step_leaves_the_old_schema_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    load_fixture_file(FIXTURE_OF[2], tmp_path / "state.db")

    def explode(conn: sqlite3.Connection) -> None:
        conn.execute("CREATE TABLE half_done (x)")
        raise sqlite3.OperationalError("disk on fire")

    monkeypatch.setattr(migrations, "STEPS", (*STEPS[:2], Step(3, "explode", explode)))
    with pytest.raises(StateError, match=r"step 3 \(explode\) failed"):
        StateWriter.open(tmp_path, now=1.0)
    conn = sqlite3.connect(tmp_path / "state.db")
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 1
    names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    assert "half_done" not in names
    columns = {row[1] for row in conn.execute("PRAGMA table_info(runs)")}
    assert "error_class" not in columns  # step 2 was rolled back with step 3
    conn.close()
    monkeypatch.undo()
    with StateWriter.open(tmp_path, now=2.0) as writer:  # the lock was released on failure
        assert writer.migrated_from == 1


def _make_too_new(db: Path) -> None:
    with StateWriter.open(db.parent, now=1.0, version="7.0.0"):
        pass
    conn = sqlite3.connect(db)
    conn.execute(f"PRAGMA user_version = {CURRENT_VERSION + 5}")
    conn.close()


def test_a_newer_state_is_refused_by_writer_and_reader_untouched(tmp_path: Path) -> None:
    _make_too_new(tmp_path / "state.db")
    before = snapshot(tmp_path)
    expected = (
        f"written by reconciler schema {CURRENT_VERSION + 5} (reconciler 7.0.0); this is schema "
        f"{CURRENT_VERSION}: upgrade reconciler or point --state elsewhere"
    )
    with pytest.raises(StateVersionTooNew) as caught:
        StateReader.open(tmp_path)
    assert expected in str(caught.value)
    with pytest.raises(StateVersionTooNew) as caught:
        StateWriter.open(tmp_path, now=2.0)
    assert expected in str(caught.value)
    after = snapshot(tmp_path)
    # The writer took and released its lock (rewriting the lock file); the database is as it was.
    assert {k: v for k, v in after.items() if k not in (".", "state.lock")} == {
        k: v for k, v in before.items() if k not in (".", "state.lock")
    }
    assert not any(name.startswith("state.db.bak") for name in os.listdir(tmp_path))
