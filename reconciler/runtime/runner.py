"""Phases 2 and 3 of a run: execute outside the lock, merge the outcome back under it.

Phase 2 runs the executor with the job's full timeout; a timeout is recorded ``timeout``, a
cancellation (``Replace``, shutdown, stuck-run clearing) ``interrupted``, an executor that
raises ``error`` (an executor bug never takes the daemon down). Phase 3 keeps the run's result
and takes the latest spec; a run whose job was deleted meanwhile is recorded and dropped.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import TYPE_CHECKING, NamedTuple

from reconciler.core.alerts import decide_alert, effective_policy
from reconciler.core.errorclass import classify_text
from reconciler.core.jobview import DesiredJob
from reconciler.core.outcome import Outcome, RunInfo, merge_finish
from reconciler.delivery.plan import AlertNotice, DeliveryPlan, plan_alert, plan_deliveries
from reconciler.executors.base import RunContext, RunResult
from reconciler.model.channel import ChannelSpec
from reconciler.model.duration import format_duration
from reconciler.model.enums import ErrorClass
from reconciler.model.state import JobState, RunFinish, RunningMarker, RunRecord, evolve
from reconciler.runtime.deadlines import Deadlines
from reconciler.runtime.events import Alert

if TYPE_CHECKING:
    from reconciler.clock import Clock
    from reconciler.executors.base import Executor
    from reconciler.runtime.dueindex import StateTable
    from reconciler.runtime.events import EventSink
    from reconciler.runtime.service import ServiceConfig
    from reconciler.store import StateWriter, WriteTx


def _done_and_deleted(desired: DesiredJob, outcome: Outcome) -> bool:
    """``deleteAfterRun``: a one-shot that succeeded leaves the job list (history stays)."""
    spec = desired.spec.spec
    return bool(spec.delete_after_run) and spec.schedule.at is not None \
        and outcome.status == "ok"


def _nothing() -> None:
    return None


def _timeout_of(desired: DesiredJob) -> float | None:
    return desired.spec.spec.timeout.total_seconds() or None


def _finish(run: RunRecord, outcome: Outcome, plan: DeliveryPlan | None = None,
            state: JobState | None = None) -> RunFinish:
    """The finish of ``run`` (``finished``: its outcome fields set), with its deliveries and
    the job's merged state."""
    return RunFinish(run.run_id, run.job, outcome.finished_at, outcome.status, outcome.error,
                     outcome.error_class, run.summary,
                     delivery_status=None if plan is None else plan.status,
                     job_state=state, deliveries=() if plan is None else plan.deliveries)


@dataclass(eq=False)  # identity: a flight is watched in sets (``deadlines``)
class Flight:
    """A run in phase 2."""

    record: RunRecord
    task: asyncio.Task[None] | None = None
    superseded: bool = False
    reason: str = "interrupted"
    executing: bool = True  # only the execution is ever cancelled, never the landing
    gate: asyncio.Future[None] | None = None  # an armed run waits here for its slot
    context: RunContext | None = None  # an armed run's, built before its slot
    announced: bool = False  # its run_started event was emitted
    timed_out: bool = False
    before: JobState | None = None  # an armed run's job, as it was before arming
    disarmed: bool = False  # taken back before its slot (shutdown): it never began

    @property
    def info(self) -> RunInfo:
        record = self.record
        return RunInfo(record.job, record.scheduled_at, record.trigger, record.attempt,
                       record.started_at)


class Landing(NamedTuple):
    """A run that ended, waiting for phase 3 (a named tuple: one is built per run)."""

    flight: Flight
    outcome: Outcome
    result: RunResult | None


class RunnerMixin:
    """The run machinery of ``Service``; the attributes below are the service's."""

    writer: StateWriter
    clock: Clock
    executor: Executor
    config: ServiceConfig
    sink: EventSink
    lock: asyncio.Lock
    desired: dict[str, DesiredJob]
    states: StateTable
    flights: dict[str, list[Flight]]
    queued_manual: set[str]
    wake: asyncio.Event
    accepting: bool
    abandoned: bool
    in_flight: int
    landing: list[Landing]
    channels: dict[str, ChannelSpec]
    deadlines: Deadlines[Flight]
    outbox_wake: asyncio.Event

    def now(self) -> float:
        raise NotImplementedError

    if TYPE_CHECKING:  # the service's, declared for the type checker only
        def _manual_record(self, name: str) -> RunRecord: ...

        def gate(self, flight: Flight, slot: float) -> None: ...

        def held_at_slot(self, flight: Flight) -> Outcome | None: ...

        def disarm(self, until: float) -> list[asyncio.Task[None]]: ...

    def launch(self, record: RunRecord, slot: float | None = None,
               before: JobState | None = None) -> None:
        """Start ``record``'s run now, or, armed, when ``slot`` comes (its ``started_at``;
        ``before``: the job's state before it was armed)."""
        flight = Flight(record, before=before)
        self.flights.setdefault(record.job, []).append(flight)
        self.in_flight += 1
        if slot is not None:
            # What the slot's wake-up would otherwise build, built now (_execute rebuilds it
            # if the spec changes inside the lead).
            desired = self.desired[record.job]
            flight.context = self._context(desired, record, _timeout_of(desired))
            self.gate(flight, slot)
        flight.task = asyncio.get_running_loop().create_task(self._fly(flight))
        if slot is None:
            self.announce_started(flight)

    def announce_started(self, flight: Flight) -> None:
        if not flight.announced:
            flight.announced = True
            self.sink.run_started(flight.record)

    def supersede(self, name: str, reason: str = "interrupted: replaced by a newer run"
                  ) -> None:
        for flight in self.flights.get(name, []):
            if not flight.superseded and flight.task is not None and flight.executing:
                flight.superseded = True
                flight.reason = reason
                flight.task.cancel()

    async def _fly(self, flight: Flight) -> None:
        if flight.gate is not None:
            try:
                await flight.gate
                held = self.held_at_slot(flight)
            except asyncio.CancelledError:
                if flight.disarmed:
                    return  # no run, nothing to land: its record was taken back
                held = self.interrupted(f"{flight.reason} before it began")
            if held is not None:
                self.announce_started(flight)  # before its finish; the slot's come later
            outcome, result = (held, None) if held is not None else await self._execute(flight)
        else:
            outcome, result = await self._execute(flight)
        flight.executing = False
        if self.abandoned:
            return
        self.landing.append(Landing(flight, outcome, result))
        if len(self.landing) > 1:
            return  # an earlier run of this batch is already on its way to land it
        await asyncio.sleep(0)  # runs that finish in the same instant land together
        async with self.lock:
            batch, self.landing = self.landing, []
            self.land(batch)
        self.wake.set()

    async def _execute(self, flight: Flight) -> tuple[Outcome, RunResult | None]:
        desired = self.desired[flight.record.job]
        context = flight.context
        if context is None or context.job is not desired.spec:
            context = self._context(desired, flight.record, _timeout_of(desired))
        timeout = context.timeout
        deadline = None if timeout is None else flight.record.started_at + timeout
        if deadline is not None:
            self.deadlines.watch(flight, deadline)
        try:
            result = await self.executor.execute(context)
        except asyncio.CancelledError:
            interrupted = self.interrupted(flight.reason)
            if flight.timed_out:
                limit = format_duration(desired.spec.spec.timeout)
                return Outcome("timeout", interrupted.finished_at, f"timed out after {limit}",
                               ErrorClass.TIMEOUT), None
            return interrupted, None
        except Exception as exc:  # an executor bug must not take the daemon down
            return Outcome("error", self.now(), f"executor failed: {exc!r}",
                           ErrorClass.PERMANENT), None
        finally:
            if deadline is not None:
                self.deadlines.release(flight, deadline)
        if result.status == "ok":
            return Outcome("ok", self.now()), result
        error_class = result.error_class or classify_text(result.error)
        return Outcome("error", self.now(), result.error or "failed", error_class,
                       result.retry_after), result

    def interrupted(self, reason: str) -> Outcome:
        """Inside a run's task that was just cancelled: the run's outcome, its task no longer
        cancelling. When the service is abandoned (a simulated kill) the cancellation goes on."""
        if self.abandoned:
            raise asyncio.CancelledError
        current = asyncio.current_task()
        if current is not None:
            current.uncancel()
        return Outcome("interrupted", self.now(), reason)

    def expire(self, flight: Flight) -> None:
        """A run outlived its job's timeout (``deadlines`` calls this at the deadline)."""
        if flight.executing and flight.task is not None and not flight.task.done() \
                and not flight.superseded:
            flight.timed_out = True
            flight.task.cancel()

    def _context(self, desired: DesiredJob, record: RunRecord, timeout: float | None
                 ) -> RunContext:
        return RunContext(desired.spec, record.run_id, record.occurrence_key,
                          record.scheduled_at, record.started_at, record.attempt,
                          record.trigger, timeout, self._memory(record))

    def _memory(self, record: RunRecord) -> Callable[[int], tuple[RunRecord, ...]]:
        """The job's runs before ``record``, newest first, loaded only when asked for."""
        def memory(count: int) -> tuple[RunRecord, ...]:
            runs = self.writer.runs(record.job, limit=count + 1, before=record.started_at)
            return tuple(run for run in runs if run.run_id != record.run_id)[:count]

        return memory

    def land(self, batch: list[Landing]) -> None:
        """Phase 3 for a batch of runs, in one transaction; events follow the commit."""
        effects: list[Callable[[], None]] = []
        with self.writer.transaction() as tx:
            for landing in batch:
                effects.append(self._land_one(tx, landing))
        for effect in effects:
            effect()

    def _land_one(self, tx: WriteTx, landing: Landing) -> Callable[[], None]:
        flight, outcome, result = landing
        name = flight.record.job
        self.forget(flight)
        summary = None if result is None else (result.summary or result.output)
        finished = evolve(flight.record, finished_at=outcome.finished_at,
                          status=outcome.status, error=outcome.error,
                          error_class=outcome.error_class, summary=summary)
        desired, state = self.desired.get(name), self.states.get(name)
        alert: Callable[[], None] = _nothing
        delivered: Callable[[], None] = _nothing
        if desired is None or state is None:
            tx.finish_run(_finish(finished, outcome))  # the job was deleted meanwhile: record, drop
        else:
            plan, delivered = self._deliveries(desired, finished, result)
            merge = merge_finish(desired, state, flight.info, outcome, flight.superseded)
            merged = evolve(merge.state, running=self._marker_after(name, state,
                                                                     flight.record.run_id))
            policy = effective_policy(desired.spec.spec.failure_alert, self.config.failure_alert)
            decision = None if flight.superseded else decide_alert(
                policy, state, merged, outcome.finished_at)
            if decision is not None:
                merged = evolve(merged, last_alert_at=decision.last_alert_at)
                self.enqueue_alert(tx, Alert(name, outcome.finished_at, decision.kind,
                                             decision.message), merged)
            disabled = self.disabled_alert(tx, merged, outcome.finished_at) \
                if merge.disabled_now else None
            deleted = _done_and_deleted(desired, outcome)
            tx.finish_run(_finish(finished, outcome, plan, None if deleted else merged))
            if deleted:
                tx.delete_job(name)
                self.states.pop(name, None)
            else:
                self.states[name] = merged

            def alert() -> None:
                if decision is not None:
                    self.sink.alert(Alert(name, outcome.finished_at, decision.kind,
                                          decision.message))
                if disabled is not None:
                    self.sink.alert(disabled)

        def effect() -> None:
            self.sink.run_finished(finished)
            delivered()
            alert()
            self._start_queued_manual(name)

        return effect

    def forget(self, flight: Flight) -> None:
        """``flight`` no longer holds a run slot or counts as its job's run."""
        name = flight.record.job
        remaining = [f for f in self.flights.get(name, []) if f is not flight]
        if remaining:
            self.flights[name] = remaining
        else:
            self.flights.pop(name, None)  # per-tick scans look only at jobs with runs
        self.in_flight -= 1

    def _marker_after(self, name: str, state: JobState, run_id: str
                      ) -> RunningMarker | None:
        if state.running is not None and state.running.run_id != run_id:
            return state.running
        others = [f for f in self.flights.get(name, []) if not f.superseded]
        if not others:
            return None
        newest = others[-1].record
        return RunningMarker(newest.run_id, newest.started_at)

    def _start_queued_manual(self, name: str) -> None:
        if name not in self.queued_manual or self.flights.get(name):
            return
        self.queued_manual.discard(name)
        if name in self.desired and name in self.states and self.accepting:
            self.launch(self._manual_record(name))

    def _deliveries(self, desired: DesiredJob, finished: RunRecord, result: RunResult | None
                    ) -> tuple[DeliveryPlan, Callable[[], None]]:
        """The run's outbox entries, which go into its finish: one transaction (issue 9)."""
        plan = plan_deliveries(desired.spec, self.channels, finished, result,
                               staleness=self.config.delivery_staleness,
                               memory=self._memory(finished))

        def announce() -> None:
            for entry in plan.deliveries:
                self.sink.delivery({"at": finished.finished_at, "job": finished.job,
                                    "runId": finished.run_id, "target": entry.target,
                                    "key": entry.idempotency_key, "status": entry.status,
                                    "error": entry.last_error})
            if plan.deliveries:
                self.outbox_wake.set()

        return plan, announce

    def enqueue_alert(self, tx: WriteTx | StateWriter, alert: Alert, state: JobState) -> None:
        """An alert goes to the job's failureAlert target (or the default) via the outbox."""
        desired = self.desired.get(alert.job)
        own = desired.spec.spec.failure_alert if desired is not None else None
        policy = effective_policy(own, self.config.failure_alert)
        notice = AlertNotice(alert.job, alert.kind, alert.at, alert.message,
                             state.consecutive_errors or None, state.last_error,
                             state.next_effective_at)
        entry = plan_alert(notice, policy, self.channels)
        if entry is not None:
            tx.enqueue(entry)
            self.outbox_wake.set()

    def disabled_alert(self, tx: WriteTx, state: JobState, at: float) -> Alert:
        """A job was just disabled: the ``auto-disabled`` alert, enqueued in ``tx`` (the
        caller emits it to the sink once ``tx`` has committed)."""
        alert = Alert(state.name, at, "auto-disabled",
                      f"{state.name} disabled: {state.disabled_reason}")
        self.enqueue_alert(tx, alert, state)
        return alert

    # ---- stale and stuck runs, shutdown ----------------------------------------------------

    def clear_stuck(self, now: float) -> None:
        """A run of ours marked running for longer than ``stuck_after`` is cancelled and
        recorded ``interrupted``: one lost process never blocks a job forever."""
        limit = self.config.stuck_after
        for flights in list(self.flights.values()):
            for flight in flights:
                if flight.executing and now - flight.record.started_at > limit:
                    text = format_duration(timedelta(seconds=limit))
                    self.supersede_one(flight, f"interrupted: stuck for more than {text}")

    def clear_orphaned_markers(self, now: float) -> None:
        """At start no run is ours: every run still marked running was cut by a previous
        process and is recorded ``interrupted`` (a transient failure)."""
        for name, state in list(self.states.items()):
            if state.running is not None:
                self._record_interrupted(name, state, state.running, now)

    def supersede_one(self, flight: Flight, reason: str) -> None:
        if flight.task is not None and not flight.task.done() and flight.executing:
            flight.reason = reason
            flight.task.cancel()

    def _record_interrupted(self, name: str, state: JobState, marker: RunningMarker,
                            now: float) -> None:
        record = self.writer.run(marker.run_id)
        message = "interrupted: the reconciler stopped during the run"
        if record is None or record.status is not None:
            cleared = replace(state, running=None)
            self.writer.put_job(cleared)
            self.states[name] = cleared
            return
        flight = Flight(record, reason=message)
        self.flights.setdefault(name, []).append(flight)
        self.in_flight += 1
        self.land([Landing(flight, Outcome("interrupted", now, message), None)])

    async def shutdown(self, grace: float) -> None:
        """Stop starting runs, give running ones ``grace`` seconds, interrupt the rest."""
        self.accepting = False
        disarmed = self.disarm(self.now() + grace)
        if disarmed:
            await asyncio.gather(*disarmed, return_exceptions=True)
        tasks = [f.task for flights in self.flights.values() for f in flights if f.task]
        if tasks and grace > 0:
            await asyncio.wait(tasks, timeout=grace)
        for flights in list(self.flights.values()):
            for flight in flights:
                self.supersede_one(flight, "interrupted: the reconciler shut down")
        remaining = [f.task for flights in self.flights.values() for f in flights if f.task]
        if remaining:
            await asyncio.gather(*remaining, return_exceptions=True)

    async def abandon(self) -> None:
        """Vanish like a killed process: runs stay marked running in the store."""
        self.abandoned = True
        self.accepting = False
        tasks = [f.task for flights in self.flights.values() for f in flights if f.task]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        self.flights.clear()
        self.in_flight = 0

