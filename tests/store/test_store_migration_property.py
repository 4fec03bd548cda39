"""Property: any historical shape with any rows goes through the chain twice as through it once."""

from __future__ import annotations

import sqlite3
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from store_helpers import dump

from reconciler.store import migrations
from reconciler.store.steps import STEPS, columns

# Values each column of a historical shape may hold, including what the old shapes allowed and
# the current one normalizes away ('running' statuses, implied disabling).
names = st.text(alphabet="abcxyz-0123", min_size=1, max_size=6)
instants = st.none() | st.floats(min_value=0, max_value=4e9, allow_nan=False)
counts = st.integers(min_value=0, max_value=6)
texts = st.none() | st.text(max_size=12)
outcomes = [None, "ok", "error", "timeout", "skipped", "interrupted"]
statuses = st.sampled_from(outcomes)
# Schema 1 marked a run in flight 'running'; from schema 2 on, that is status NULL.
SCHEMA_1_STATUSES = st.sampled_from([*outcomes, "running"])

JOB_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "anchor": instants, "next_nominal_at": instants, "next_effective_at": instants,
    "last_started_at": instants, "last_finished_at": instants,
    "last_status": statuses, "last_error": texts, "consecutive_errors": counts,
    "schedule_errors": counts, "running_run_id": st.none() | names,
    "running_started_at": instants, "running_pid": st.none() | counts,
    "running_host": texts, "last_alert_at": instants, "spec_hash": texts,
    "source_revision": texts, "suspended_since": instants, "first_reconciled_at": instants,
    "disabled": st.sampled_from([0, 1]), "disabled_reason": st.none() | st.just("manual"),
    "last_nominal_at": instants, "schedule_hash": texts,
}  # fmt: skip
RUN_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "occurrence_key": names, "job": names, "scheduled_at": instants,
    "started_at": st.floats(min_value=0, max_value=4e9, allow_nan=False),
    "finished_at": instants, "status": statuses, "attempt": st.integers(1, 4),
    "trigger": st.sampled_from(["schedule", "catchup", "retry", "manual"]), "error": texts,
    "summary": texts, "error_class": st.none() | st.sampled_from(["network", "timeout"]),
    "delivery_status": st.none() | st.sampled_from(
        ["none", "failed", "pending", "delivered", "not-delivered", "not-requested"]),
}  # fmt: skip
SKIP_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "job": names, "scheduled_at": st.floats(0, 4e9), "reason": st.sampled_from(
        ["overlap", "catchup-none", "outside-window", "suspended"]),
    "recorded_at": st.floats(0, 4e9),
}  # fmt: skip


@st.composite
def historical_states(draw: st.DrawFn) -> sqlite3.Connection:
    """A database in a random historical schema (0..current-1) holding random rows."""
    version = draw(st.integers(min_value=0, max_value=len(STEPS) - 1))
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.execute("BEGIN")
    migrations.apply_steps(conn, STEPS[:version])
    conn.execute("COMMIT")
    if version == 0:
        return conn
    run_values = RUN_VALUES | ({"status": SCHEMA_1_STATUSES} if version == 1 else {})
    for table, key, values in (("jobs", "name", JOB_VALUES), ("runs", "run_id", run_values)):
        present = columns(conn, table)
        for ident in draw(st.sets(names, max_size=6)):
            row = {key: ident} | {
                c: draw(strategy) for c, strategy in values.items() if c in present
            }
            _insert(conn, table, row)
    for row in draw(st.lists(st.fixed_dictionaries(SKIP_VALUES), max_size=4)):
        _insert(conn, "skips", row)
    return conn


def _insert(conn: sqlite3.Connection, table: str, row: dict[str, Any]) -> None:
    marks = ", ".join("?" * len(row))
    conn.execute(f"INSERT INTO {table} ({', '.join(row)}) VALUES ({marks})", tuple(row.values()))


@settings(max_examples=150, deadline=None)
@given(historical_states())
def test_the_chain_twice_equals_the_chain_once(conn: sqlite3.Connection) -> None:
    start = migrations.schema_version(conn)
    migrations.migrate(conn, writer="test")
    once = dump(conn)
    # Run every step of the chain again, from the same starting point, on the migrated state.
    conn.execute("BEGIN")
    migrations.apply_steps(conn, migrations.pending_steps(start))
    conn.execute("COMMIT")
    assert dump(conn) == once
    # And the whole chain from scratch, too: steps never undo or redo each other's work.
    conn.execute("BEGIN")
    migrations.apply_steps(conn, STEPS)
    conn.execute("COMMIT")
    assert dump(conn) == once
    statuses = {row[0] for row in conn.execute("SELECT DISTINCT status FROM runs")}
    assert "running" not in statuses
