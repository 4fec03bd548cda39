"""The observed state: an SQLite database in the state directory, one writer, many readers.

Records (frozen dataclasses, pure, in ``reconciler.model.state``): ``JobState`` (with its
``RunningMarker``), ``RunRecord``, ``SkipRecord``, ``Delivery``; write commands ``RunStart`` and
``RunFinish``. Every instant is a UTC epoch in seconds, passed in by the caller: the store never
reads a clock.

Write API (the daemon; one per state directory)::

    writer = StateWriter.open(state_dir=".reconciler", *, now, retention=None,
                              pid=None, host=None, version=__version__, durable=True)
        # StateLockedError at once if another writer holds the directory;
        # StateVersionTooNew if a newer reconciler wrote it; migrates an older one after a backup;
        # retention=None: Retention.from_env(os.environ) (RECONCILER_HISTORY_RUNS / _DAYS);
        # durable=False: no fsyncs, for throwaway scratch states (simulate) only
    writer.put_job(job: JobState) / put_jobs(jobs)            # upsert whole job state
    writer.delete_job(name) -> bool                           # history stays until retention
    writer.start_run(start: RunStart) / start_runs(starts)    # insert run + set running marker
    writer.finish_run(finish: RunFinish) / finish_runs(...)   # outcome + job update + marker
                                                              # cleared + finish.deliveries queued
    writer.record_skip(skip: SkipRecord) / record_skips(...)
    writer.enqueue(delivery: Delivery) -> int                 # outbox id; idempotency key dedups
    writer.update_delivery(delivery: Delivery)                # by id; rolls up run delivery status
    with writer.transaction() as tx:                          # one tick = one transaction
        tx.start_run(...); tx.finish_run(...); tx.put_job(...); tx.record_skip(...); ...
    writer.close()                                            # or use it as a context manager

Each call above is one short transaction (``BEGIN IMMEDIATE`` ... ``COMMIT``, fsynced); when it
returns, the write is durable. The writer also reads through its own connection, with the same
read methods as the reader below.

Read API (status, history, plan, ...; never locks, never writes a byte)::

    with StateReader.open(state_dir=".reconciler") as reader:  # a consistent snapshot
        reader.exists                       # False: no database yet, every read is empty
        reader.jobs() -> list[JobState]     # by name
        reader.job(name) -> JobState | None
        reader.running_jobs() -> list[JobState]
        reader.runs(job, limit=50, before=None) -> list[RunRecord]   # newest first
        reader.run(run_id) -> RunRecord | None
        reader.runs_of_occurrence(key) -> list[RunRecord]
        reader.skips(job=None, limit=50) -> list[SkipRecord]         # newest first
        reader.due_deliveries(now, limit=100) -> list[Delivery]
        reader.deliveries_of_run(run_id) -> list[Delivery]
        reader.schema_version, reader.writer_version, reader.migrated_in_memory
        reader.refresh()                    # move to the newest snapshot
        reader.copy_to(path)                # the snapshot, migrated, as a new database file
        reader.integrity_check() -> list[str]   # ["ok"] when sound

Retention (``Retention(max_runs=2000, max_age=90 days, batch=64)``) is applied a bounded batch
at a time inside the writes. Errors: ``StateLockedError``, ``StateVersionTooNew`` and
``StateError`` (a write the store refuses, such as finishing a run never started, or SQLite
failing); a refused or failed transaction is rolled back whole.

Modules: ``steps`` (the migration steps) and ``migrations`` (their runner), ``files`` (the state
directory and its permissions), ``lock`` (the one-writer lock), ``retention``, ``queries``,
``transaction`` (``WriteTx``), ``writer``, ``reader``.
"""

from __future__ import annotations

from reconciler.store.files import DEFAULT_STATE_DIR, StatePaths
from reconciler.store.lock import LockHolder
from reconciler.store.migrations import CURRENT_VERSION
from reconciler.store.reader import StateReader
from reconciler.store.retention import Retention
from reconciler.store.transaction import WriteTx
from reconciler.store.writer import StateWriter

__all__ = [
    "CURRENT_VERSION",
    "DEFAULT_STATE_DIR",
    "LockHolder",
    "Retention",
    "StatePaths",
    "StateReader",
    "StateWriter",
    "WriteTx",
]
