"""Observed-state records: what ran, when, with what result, and what is due next.

These are plain frozen values shared by the pure core (which plans from them) and the store (which
persists them). Every instant is a UTC epoch in seconds (``float``); nothing here reads a clock,
touches a file or knows about SQLite.

Read side (what the store returns): ``JobState`` (one row per job, with its ``RunningMarker``),
``RunRecord`` (one row per run attempt), ``SkipRecord`` (a skipped or missed occurrence) and
``Delivery`` (an outbox entry).

Write side (what the engine hands the store): ``RunStart`` and ``RunFinish``. A ``RunFinish`` may
carry the engine's merged ``JobState`` and the ``Delivery`` rows to enqueue, so that "the run
ended" is one transaction.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Literal, TypeVar, get_args

RunStatus = Literal["ok", "error", "timeout", "skipped", "interrupted"]
Trigger = Literal["schedule", "catchup", "retry", "manual"]
# A run's delivery status (issue 9): pending until its outbox entries settle, then delivered or
# not-delivered; or, with nothing enqueued, why not. Before issue 9 the store wrote "none" and
# "failed"; migration step 5 rewrites those as "not-requested" and "not-delivered".
DeliveryStatus = Literal[
    "pending", "delivered", "not-delivered", "not-requested", "skipped-stale", "already-delivered"
]
OutboxStatus = Literal["pending", "delivered", "failed"]

RUN_STATUSES: Final[frozenset[str]] = frozenset(get_args(RunStatus))
TRIGGERS: Final[frozenset[str]] = frozenset(get_args(Trigger))
DELIVERY_STATUSES: Final[frozenset[str]] = frozenset(get_args(DeliveryStatus))
OUTBOX_STATUSES: Final[frozenset[str]] = frozenset(get_args(OutboxStatus))

# Outcomes that count toward consecutive errors (backoff, failure alerts). An interrupted run
# (crash, kill) counts as a transient failure (DESIGN §3.6); a skipped one counts as nothing.
FAILED_STATUSES: Final[frozenset[str]] = frozenset({"error", "timeout", "interrupted"})

# Reasons a skip is recorded with (DESIGN §3.7); others may be added, these are the known ones.
SKIP_REASONS: Final[frozenset[str]] = frozenset(
    {"overlap", "catchup-none", "outside-window", "suspended"}
)

# A run keeps a bounded excerpt of its output: the history must not grow with chatty jobs.
SUMMARY_LIMIT: Final[int] = 4096
ERROR_LIMIT: Final[int] = 2048
_ELISION: Final[str] = "\n[…]\n"


def excerpt(text: str | None, limit: int) -> str | None:
    """``text`` cut to at most ``limit`` characters, keeping its head and its tail.

    Both ends matter: the head says what the job started doing, the tail how it ended.
    """
    if text is None or len(text) <= limit:
        return text
    if limit <= len(_ELISION):
        return text[:limit]
    room = limit - len(_ELISION)
    head = room // 2
    return text[:head] + _ELISION + text[len(text) - (room - head) :]


_Record = TypeVar("_Record")


def evolve(record: _Record, **changes: Any) -> _Record:
    """``dataclasses.replace`` for the engine's hot path (several times per run).

    ``replace`` rebuilds every field through ``__init__``; this copies the instance dict and
    applies the changes, then re-runs the same validation (``__post_init__``). Unknown field
    names are refused, as ``replace`` would.
    """
    fields = record.__dataclass_fields__  # type: ignore[attr-defined]
    if not changes.keys() <= fields.keys():  # a view comparison: no set is built
        unknown = changes.keys() - fields.keys()
        raise TypeError(f"{type(record).__name__} has no field(s) {sorted(unknown)}")
    clone = object.__new__(type(record))
    clone.__dict__.update(record.__dict__)
    clone.__dict__.update(changes)
    post_init = getattr(clone, "__post_init__", None)
    if post_init is not None:
        post_init()
    return clone


def _check(value: str | None, allowed: frozenset[str], what: str) -> None:
    if value is not None and value not in allowed:
        raise ValueError(f"unknown {what} {value!r}; expected one of {sorted(allowed)}")


@dataclass(frozen=True)
class RunningMarker:
    """A job has a run in flight: which one, since when, and which process on which host."""

    run_id: str
    started_at: float
    pid: int | None = None
    host: str | None = None


@dataclass(frozen=True)
class JobState:
    """Everything persisted about one job besides its history."""

    name: str
    anchor: float | None = None
    next_nominal_at: float | None = None
    next_effective_at: float | None = None
    last_started_at: float | None = None
    last_finished_at: float | None = None
    last_status: RunStatus | None = None
    last_error: str | None = None
    consecutive_errors: int = 0
    schedule_errors: int = 0
    running: RunningMarker | None = None
    last_alert_at: float | None = None
    spec_hash: str | None = None
    source_revision: str | None = None
    suspended_since: float | None = None
    disabled: bool = False
    disabled_reason: str | None = None
    first_reconciled_at: float | None = None
    # The nominal instant of the newest slot that ran or was skipped: a slot at or before it
    # is never offered again, whatever restarts or spec edits happen.
    last_nominal_at: float | None = None
    # Detects edits of the schedule itself (other edits keep the pending fire).
    schedule_hash: str | None = None

    def __post_init__(self) -> None:
        _check(self.last_status, RUN_STATUSES, "run status")


@dataclass(frozen=True)
class RunRecord:
    """One attempt of one occurrence. ``status`` and ``finished_at`` are None while it runs."""

    run_id: str
    occurrence_key: str
    job: str
    scheduled_at: float | None
    started_at: float
    finished_at: float | None = None
    status: RunStatus | None = None
    attempt: int = 1
    trigger: Trigger = "schedule"
    error: str | None = None
    error_class: str | None = None
    summary: str | None = None
    delivery_status: DeliveryStatus | None = None

    def __post_init__(self) -> None:
        _check(self.status, RUN_STATUSES, "run status")
        _check(self.trigger, TRIGGERS, "trigger")
        _check(self.delivery_status, DELIVERY_STATUSES, "delivery status")

    @property
    def running(self) -> bool:
        return self.status is None


@dataclass(frozen=True)
class SkipRecord:
    """An occurrence that did not run, and why (``overlap``, ``catchup-none``, ...)."""

    job: str
    scheduled_at: float
    reason: str
    recorded_at: float


@dataclass(frozen=True)
class Delivery:
    """An outbox entry: a payload owed to a target, delivered at least once, keyed for dedup.

    ``id`` is None until the store assigns one; ``idempotency_key`` is unique in the outbox, so
    enqueueing the same delivery twice (a replay after a crash) keeps one entry.
    """

    run_id: str
    job: str
    target: str
    payload: str
    idempotency_key: str
    created_at: float
    status: OutboxStatus = "pending"
    attempts: int = 0
    next_attempt_at: float | None = None
    last_error: str | None = None
    updated_at: float | None = None
    id: int | None = None

    def __post_init__(self) -> None:
        _check(self.status, OUTBOX_STATUSES, "outbox status")


@dataclass(frozen=True)
class RunStart:
    """Phase 1 of a run (DESIGN §3.4): the run exists and its job is marked running.

    ``pid`` and ``host`` name the process executing it; left None, the store records its own.
    With ``job_state`` (the engine's state of the job, its marker naming this run) the job's row
    is written whole in the same statement that marks it running.
    """

    run_id: str
    job: str
    occurrence_key: str
    scheduled_at: float | None
    started_at: float
    attempt: int = 1
    trigger: Trigger = "schedule"
    pid: int | None = None
    host: str | None = None
    job_state: JobState | None = None

    @classmethod
    def of(cls, record: RunRecord, job_state: JobState | None = None) -> RunStart:
        """The start of ``record``, a run still in flight."""
        return cls(record.run_id, record.job, record.occurrence_key, record.scheduled_at,
                   record.started_at, record.attempt, record.trigger, job_state=job_state)

    def __post_init__(self) -> None:
        _check(self.trigger, TRIGGERS, "trigger")
        if self.attempt < 1:
            raise ValueError(f"attempt must be >= 1, got {self.attempt}")
        if self.job_state is not None and (
                self.job_state.name != self.job or self.job_state.running is None
                or self.job_state.running.run_id != self.run_id):
            raise ValueError(f"job_state of a start must be {self.job!r} marked running "
                             f"{self.run_id!r}")


@dataclass(frozen=True)
class RunFinish:
    """Phase 3 of a run: its outcome, merged back in one transaction.

    Without ``job_state`` the store updates the job's last-run fields itself (last start, end,
    status, error; consecutive errors reset by ``ok``, raised by a failure, kept by ``skipped``)
    and clears the running marker if it still names this run. With ``job_state`` the engine's
    merged state is written as given instead (the marker of this run is still cleared).
    ``deliveries`` are enqueued in the outbox in the same transaction.
    """

    run_id: str
    job: str
    finished_at: float
    status: RunStatus
    error: str | None = None
    error_class: str | None = None
    summary: str | None = None
    delivery_status: DeliveryStatus | None = None
    job_state: JobState | None = None
    deliveries: tuple[Delivery, ...] = ()

    def __post_init__(self) -> None:
        _check(self.status, RUN_STATUSES, "run status")
        _check(self.delivery_status, DELIVERY_STATUSES, "delivery status")
        if self.job_state is not None and self.job_state.name != self.job:
            raise ValueError(f"job_state is for {self.job_state.name!r}, run is of {self.job!r}")
