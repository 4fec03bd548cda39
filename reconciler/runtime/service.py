"""The service: one serialized writer, a timer, and three-phase runs (DESIGN §3.4).

Every state mutation happens under one ``asyncio.Lock`` (the Python twin of a promise chain):
applying specs, deciding what is due, starting runs (phase 1), merging their outcomes
(phase 3), manual triggers. Runs execute outside the lock (phase 2), so reads and other jobs
never wait for a running job. The in-memory view mirrors the store and changes only after the
store committed, between two awaits of the one event-loop thread, so ``snapshot()`` is always
consistent without taking the lock.

The other halves: the timer (``runtime.timer``), arming (``runtime.arming``), phases 2 and 3
(``runtime.runner``) and manual triggers (``runtime.manual``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from reconciler.clock import Clock
from reconciler.core.alerts import missed_text
from reconciler.core.due import Activity, Decision, Due, resolve_due
from reconciler.core.identity import occurrence_key, run_id
from reconciler.core.jobview import DesiredJob
from reconciler.core.plan import JobChange, compute_pending, plan
from reconciler.executors.base import Executor
from reconciler.model.channel import ChannelSpec
from reconciler.model.delivery import FailureAlert
from reconciler.model.job import Channel
from reconciler.model.state import (
    JobState,
    RunningMarker,
    RunRecord,
    RunStart,
    SkipRecord,
    evolve,
)
from reconciler.runtime.arming import ArmingMixin
from reconciler.runtime.deadlines import Deadlines
from reconciler.runtime.dueindex import StateTable
from reconciler.runtime.events import Alert, CollectingSink, EventSink
from reconciler.runtime.manual import ManualMixin
from reconciler.runtime.runner import Flight, Landing, RunnerMixin
from reconciler.runtime.timer import TimerMixin
from reconciler.store import StateWriter, WriteTx


@dataclass(frozen=True)
class ServiceConfig:
    max_concurrent_runs: int = 4
    catchup_burst: int = 5  # catch-up runs that may start at once after a restart
    catchup_spacing: float = 5.0  # seconds between the rest, earliest-due first
    max_timer_delay: float = 60.0
    past_due_delay: float = 2.0
    stuck_after: float = 7200.0  # a running marker older than this is cleared
    recent_runs: int = 3  # how many past runs an executor sees as the job's memory
    failure_alert: FailureAlert = field(default_factory=FailureAlert)  # for jobs without one
    delivery_staleness: float = 3 * 3600.0  # a run this late announces no stale news
    arm_ahead: float = 0.0  # seconds before its slot an on-time run is decided (0: at it)
    # Slots at or after this are never armed: simulate's window end, so that what it reports
    # at the end of the window does not depend on the lead.
    arm_until: float = float("inf")


class Service(TimerMixin, ManualMixin, ArmingMixin, RunnerMixin):
    def __init__(
        self, writer: StateWriter, clock: Clock, executor: Executor,
        config: ServiceConfig | None = None, sink: EventSink | None = None,
    ) -> None:
        self.writer = writer
        self.clock = clock
        self.executor = executor
        self.config = config or ServiceConfig()
        self.sink: EventSink = sink or CollectingSink()
        self.lock = asyncio.Lock()
        self.desired: dict[str, DesiredJob] = {}
        self.states = StateTable(wake_key=self._wake_key)
        self.flights: dict[str, list[Flight]] = {}
        self.hold_until: dict[str, float] = {}
        self.queued_manual: set[str] = set()
        self.in_flight = 0
        self.landing: list[Landing] = []
        self.pending_alerts: list[Alert] = []
        self.channels: dict[str, ChannelSpec] = {}
        self.outbox_wake = asyncio.Event()
        self.wake = asyncio.Event()
        self.accepting = True
        self.abandoned = False
        self.ready = False
        self.started_at = float("-inf")
        self._wake_at: float | None = None
        self._upcoming: float | None = None
        self._gates: dict[float, list[Flight]] = {}
        self._idle = Activity(started_at=self.started_at)
        self.deadlines: Deadlines[Flight] = Deadlines(clock, self.expire)

    def now(self) -> float:
        # Fires sit on whole milliseconds; rounding keeps float noise from making a fire
        # look a hair in the future when the timer wakes exactly on it.
        return int(self.clock.now() * 1e6 + 0.5) / 1e6  # to the microsecond; round() is slower

    def snapshot(self) -> Mapping[str, JobState]:
        """The current state of every job, consistent, without waiting for anything."""
        return self.states

    # ---- reconcile -------------------------------------------------------------------------

    async def start(self, desired: Mapping[str, DesiredJob],
                    channels: Mapping[str, Channel] | None = None) -> list[JobChange]:
        """Load the state, clear markers left by a previous process, reconcile, and plan the
        startup catch-up (at most ``catchup_burst`` at once, the rest spaced out)."""
        async with self.lock:
            now = self.now()
            self.started_at = now
            self._idle = Activity(started_at=now)
            self._set_channels(channels)
            self.states = StateTable(self.writer.jobs(), wake_key=self._wake_key)
            self.desired = dict(desired)
            self.clear_orphaned_markers(now)
            changes = self._apply_locked(desired, now)
            self._plan_startup(now)
            self.ready = True
        self.wake.set()
        return changes

    async def apply(self, desired: Mapping[str, DesiredJob],
                    channels: Mapping[str, Channel] | None = None) -> list[JobChange]:
        async with self.lock:
            self._set_channels(channels)
            changes = self._apply_locked(desired, self.now())
        self.wake.set()
        return changes

    def _set_channels(self, channels: Mapping[str, Channel] | None) -> None:
        if channels is not None:
            self.channels = {name: channel.spec for name, channel in channels.items()}

    def _apply_locked(self, desired: Mapping[str, DesiredJob], now: float) -> list[JobChange]:
        desired = {name: job for name, job in desired.items()
                   if not self._deleted_after_run(name, job)}
        changes = [self._remember_success(change, desired)
                   for change in plan(desired, self.states, now)]
        staged: dict[str, JobState | None] = {}
        with self.writer.transaction() as tx:
            for change in changes:
                if change.kind == "removed":
                    tx.delete_job(change.name)
                    staged[change.name] = None
                elif change.state is not None and change.state != self.states.get(change.name):
                    kept = self._keep_marker(change.state)
                    tx.put_job(kept)
                    staged[change.name] = kept
        for name, state in staged.items():
            if state is None:
                self.states.pop(name, None)
            else:
                self.states[name] = state
        self.desired = dict(desired)
        self.states.reindex_all()  # which jobs are desired may have changed
        self.sink.reconciled([c for c in changes if c.kind != "unchanged"], now)
        return changes

    def _succeeded(self, job: DesiredJob) -> RunRecord | None:
        """The successful run of a one-shot's occurrence, if the history holds one."""
        at = job.spec.spec.schedule.at
        if at is None:
            return None
        runs = self.writer.runs_of_occurrence(occurrence_key(job.name, at.timestamp()))
        return next((run for run in runs if run.status == "ok"), None)

    def _deleted_after_run(self, name: str, job: DesiredJob) -> bool:
        """A ``deleteAfterRun`` one-shot whose state was deleted after it succeeded stays
        deleted while its spec is still in the source (its history says it is done)."""
        if not job.spec.spec.delete_after_run or name in self.states:
            return False
        return self._succeeded(job) is not None

    def _remember_success(self, change: JobChange, desired: Mapping[str, DesiredJob]
                          ) -> JobChange:
        """A one-shot added again (its state was lost or deleted) whose occurrence already
        succeeded is spent: it must not run twice."""
        if change.kind != "added" or change.state is None:
            return change
        done = self._succeeded(desired[change.name])
        if done is None:
            return change
        spent = evolve(change.state, next_nominal_at=None, next_effective_at=None,
                       last_nominal_at=done.scheduled_at, last_started_at=done.started_at,
                       last_finished_at=done.finished_at, last_status="ok")
        return replace(change, state=spent, effects=(*change.effects, "already done"))

    def _keep_marker(self, state: JobState) -> JobState:
        current = self.states.get(state.name)
        return replace(state, running=current.running if current else None)

    def _plan_startup(self, now: float) -> None:
        due = sorted(
            (state.next_effective_at, name) for name, state in self.states.items()
            if state.next_effective_at is not None and state.next_effective_at <= now
            and not state.disabled and name in self.desired
        )
        for index, (_, name) in enumerate(due):
            if index >= self.config.catchup_burst:
                waves = index - self.config.catchup_burst + 1
                self.hold_until[name] = now + waves * self.config.catchup_spacing
                self.states.reindex(name)

    # ---- ticks -----------------------------------------------------------------------------

    async def tick(self) -> None:
        """Decide and start everything that is due, in order of due time, and arm the on-time
        starts whose slot comes within ``arm_ahead`` (``runtime.arming``)."""
        async with self.lock:
            if not self.accepting:
                return
            now = self.now()
            self.clear_stuck(now)
            batch = _TickBatch()
            with self.writer.transaction() as tx:
                self._decide_due(tx, now, batch)
                # Jobs with a run in flight never wait for a slot: their due slot is skipped
                # (Forbid, Allow at its limit) or replaces the run (Replace, which frees one).
                for name in self._running_and_due(now, batch.staged, batch.waiting):
                    decision = self._decide_now(name, now, batch.starting)
                    if decision is not None:
                        batch.staged[name] = self._commit(tx, decision, now, batch.skips,
                                                          batch.started)
            self.states.update(batch.staged)
            self._upcoming = self._earliest_to_come(now, batch.waiting)
            for name in batch.waiting:
                self.states.reindex(name)
            self._wake_at = self.states.next_wake()
        for skip in batch.skips:
            self.sink.skipped(skip)
        alerts, self.pending_alerts = self.pending_alerts, []
        for alert in alerts:
            self.sink.alert(alert)
        for _, record in batch.started:
            self.launch(record)
        for _, record in batch.armed:
            self.launch(record, slot=record.started_at, before=batch.before[record.job])

    def _decide_due(self, tx: WriteTx, now: float, batch: _TickBatch) -> None:
        """In order of due time, while a run slot is free: with every slot taken the rest stay
        indexed (not re-examined per finished run) until one frees."""
        horizon = now + self.config.arm_ahead
        while self.in_flight + batch.starting < self.config.max_concurrent_runs:
            popped = self.states.pop_next(horizon)
            if popped is None:
                break
            slot, name = popped
            if slot > now:  # comes within the lead: arm it if it is a plain on-time start
                decision = self.armable(name, slot) if slot < self.config.arm_until else None
                if decision is None or not self._has_capacity(batch.starting, decision):
                    batch.waiting.append(name)  # decided by the tick at its slot
                    continue
                batch.before[name] = self.states[name]
                batch.staged[name] = self._commit(tx, decision, slot, batch.skips, batch.armed)
                continue
            if self.states[name].schedule_errors:
                self._retry_schedule_errors(tx, now, name)
                continue
            decision = self._decide_now(name, now, batch.starting)
            if decision is None:
                batch.waiting.append(name)  # still due; looked at again on the next tick
                continue
            batch.staged[name] = self._commit(tx, decision, now, batch.skips, batch.started)

    def _decide_now(self, name: str, now: float, starting: int) -> Decision | None:
        """What to do about a due job now; None while it must wait (nothing due yet, its
        policy waits for its run, or no run slot is free for its start)."""
        decision = resolve_due(self.desired[name], self.states[name], now, self._activity(name))
        if decision is None or decision.wait or (
                decision.start and not self._has_capacity(starting, decision)):
            return None
        return decision

    def _running_and_due(self, now: float, *handled: Mapping[str, object] | list[str]
                         ) -> list[str]:
        """Jobs with a run in flight whose pending fire has come (looked at directly: the
        slot loop stops when every run slot is taken)."""
        due = []
        for name in list(self.flights):
            state = self.states.get(name)
            if state is None or name not in self.desired or state.disabled:
                continue
            if any(name in seen for seen in handled):
                continue
            effective = state.next_effective_at
            if effective is not None and effective <= now \
                    and self.hold_until.get(name, float("-inf")) <= now:
                due.append((effective, name))
        return [name for _, name in sorted(due)]

    def _activity(self, name: str) -> Activity:
        flights = [f for f in self.flights.get(name, []) if not f.superseded]
        return Activity(
            running=len(flights),
            running_catchup=any(f.record.trigger == "catchup" for f in flights),
            started_at=self.started_at,
        )

    def _has_capacity(self, starting: int, decision: Decision) -> bool:
        running = self.in_flight
        freed = len(self.flights.get(decision.state.name, [])) if decision.interrupt_running \
            else 0
        return running - freed + starting < self.config.max_concurrent_runs

    def _commit(
        self, tx: WriteTx, decision: Decision, now: float, skips: list[SkipRecord],
        started: list[tuple[Due, RunRecord]],
    ) -> JobState:
        name = decision.state.name
        for skip in decision.skips:
            skip_record = SkipRecord(name, skip.fire.nominal, skip.reason, now)
            tx.record_skip(skip_record)
            skips.append(skip_record)
            if skip.reason == "missed" and self.desired[name].spec.spec.alert_on_missed:
                alert = Alert(name, now, "missed", missed_text(name, skip.fire.nominal, now))
                self.pending_alerts.append(alert)
                self.enqueue_alert(tx, alert, decision.state)
        if decision.interrupt_running:
            self.supersede(name)
        if decision.start is None:
            state = evolve(decision.state, running=self.states[name].running)
            tx.put_job(state)
            return state
        record = self._start_record(decision.start, now)
        state = evolve(decision.state, running=RunningMarker(record.run_id, now))
        tx.start_run(RunStart.of(record, state))  # the job's row and its marker, one write
        started.append((decision.start, record))
        self.hold_until.pop(name, None)
        return state

    def _start_record(self, due: Due, now: float) -> RunRecord:
        key = occurrence_key(due.name, due.fire.nominal)
        return RunRecord(run_id(key, due.attempt), key, due.name, due.fire.nominal, now,
                         attempt=due.attempt, trigger=due.trigger)

    def _retry_schedule_errors(self, tx: WriteTx, now: float, name: str) -> None:
        """A job whose next fire could not be computed is retried on every tick; the third
        failure in a row disables it with an alert (core.plan.schedule_failed)."""
        before = self.states[name]
        state = compute_pending(self.desired[name], before, now)
        tx.put_job(state)
        if state.disabled and not before.disabled:
            self.pending_alerts.append(self.disabled_alert(tx, state, now))
        self.states[name] = state

@dataclass
class _TickBatch:
    """What one tick decided, applied to the in-memory view once its transaction commits."""

    staged: dict[str, JobState] = field(default_factory=dict)
    started: list[tuple[Due, RunRecord]] = field(default_factory=list)
    armed: list[tuple[Due, RunRecord]] = field(default_factory=list)
    before: dict[str, JobState] = field(default_factory=dict)  # armed jobs, as they were
    skips: list[SkipRecord] = field(default_factory=list)
    waiting: list[str] = field(default_factory=list)

    @property
    def starting(self) -> int:
        return len(self.started) + len(self.armed)
