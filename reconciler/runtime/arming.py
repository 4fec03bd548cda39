"""Arming: deciding and recording an on-time run shortly before its slot, starting it on the dot.

Phase 1 (decide, and durably record the run and its job's running marker) costs tens of
microseconds per run, and a thousand jobs on the same slot would otherwise make the last of
them start a thousand phase-1s late. With ``arm_ahead`` > 0 the tick also looks at the jobs
whose next fire comes within that lead: a job that is idle and whose slot is a plain on-time
start (no skips, no catch-up, nothing to interrupt) is decided *as of its slot* and committed
now, and its run waits on a per-run gate that the event loop opens at the slot. At the slot the
only work left is to wake the waiting runs.

What may change inside the lead, and what it does:

- a manual trigger or a ``Replace`` sees the armed run as running (it holds a run slot and the
  job's marker); replacing it records it ``interrupted`` before it began;
- the job is removed, suspended or disabled: the armed run is recorded ``skipped`` when its
  slot comes, without executing (a skip counts as no failure);
- a spec edit: the run executes the spec current at its slot, as a run already started would;
- shutdown: an armed run whose slot comes inside the grace begins on it, like a run in
  flight; one whose slot comes later is taken back (``disarm``): its record goes and its job
  gets its pending fire back, so the next start catches the slot up by policy;
- a crash: the marker is found at the next start and the run recorded ``interrupted``, as for
  a crash just after a run started (the armed run may or may not have begun).

Everything else (slots that are late, catch-up, retries after backoff, jobs with a run in
flight, startup holds) is decided at its slot by the ordinary tick.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from reconciler import collector
from reconciler.core.due import Activity, Decision, resolve_due
from reconciler.core.outcome import Outcome
from reconciler.model.state import JobState, evolve

if TYPE_CHECKING:
    from reconciler.clock import Clock
    from reconciler.core.jobview import DesiredJob
    from reconciler.runtime.dueindex import StateTable
    from reconciler.runtime.runner import Flight
    from reconciler.store import StateWriter

# Triggers of a slot that comes at its own time (a catch-up is decided by the tick at once).
_ARMABLE_TRIGGERS = frozenset({"schedule", "retry"})


def _before_arming(current: JobState, before: JobState) -> JobState:
    """``current`` with the pending fire it had before it was armed (unless its schedule was
    edited since: then the fire the edit computed stays) and no run marked."""
    if current.schedule_hash != before.schedule_hash:
        return evolve(current, last_nominal_at=before.last_nominal_at, running=None)
    return evolve(current, next_nominal_at=before.next_nominal_at,
                  next_effective_at=before.next_effective_at,
                  last_nominal_at=before.last_nominal_at, running=None)


class ArmingMixin:
    """The arming half of ``Service``; the attributes below are the service's."""

    clock: Clock
    desired: dict[str, DesiredJob]
    states: StateTable
    flights: dict[str, list[Flight]]
    hold_until: dict[str, float]
    queued_manual: set[str]
    abandoned: bool
    started_at: float
    writer: StateWriter
    _gates: dict[float, list[Flight]]
    _idle: Activity  # what a job with no run in flight looks like since the service started

    def armable(self, name: str, slot: float) -> Decision | None:
        """The decision for ``name`` as of ``slot``, if it is a plain start that can be made
        now; ``None`` leaves the job to the tick at its slot."""
        if name in self.flights or name in self.hold_until or name in self.queued_manual:
            return None
        state = self.states[name]
        if state.schedule_errors or state.running is not None:
            return None
        decision = resolve_due(self.desired[name], state, slot, self._idle)
        if decision is None or decision.start is None or decision.skips or decision.wait \
                or decision.interrupt_running \
                or decision.start.trigger not in _ARMABLE_TRIGGERS:
            return None
        return decision

    def gate(self, flight: Flight, slot: float) -> None:
        """Hold ``flight`` until ``slot``: one timer per slot instant opens all its gates."""
        loop = asyncio.get_running_loop()
        flight.gate = loop.create_future()
        waiting = self._gates.get(slot)
        if waiting is None:
            waiting = self._gates[slot] = []
            loop.call_later(max(0.0, slot - self.clock.now()), self._open_gates, slot)
        waiting.append(flight)

    def _open_gates(self, slot: float) -> None:
        flights = self._gates.pop(slot, [])
        # No cyclic collection while the slot's runs begin: one would stall every run woken
        # after it by a millisecond or more. It runs, if due, once they have all begun.
        collecting = collector.pause()
        for flight in flights:
            if flight.gate is not None and not flight.gate.done():
                flight.gate.set_result(None)
        # Queued behind the wake-ups just scheduled: every run of the slot has begun before
        # the events (a log line each) are written, and before any of them can finish.
        asyncio.get_running_loop().call_soon(self._announce_all, flights, collecting)

    def _announce_all(self, flights: list[Flight], collecting: bool) -> None:
        collector.resume(collecting)
        for flight in flights:
            self.announce_started(flight)

    def disarm(self, until: float) -> list[asyncio.Task[None]]:
        """Take back the armed runs whose slot comes after ``until`` (the end of a shutdown
        grace): they would never begin. Their records go and their jobs get back the pending
        fire they had before arming, in one transaction, so the next start sees a slot missed
        while it was down (and catches it up by policy) instead of a run cut short. Returns
        their tasks, cancelled."""
        flights = [flight for flights in self.flights.values() for flight in flights
                   if flight.gate is not None and not flight.gate.done()
                   and flight.before is not None and flight.record.started_at > until]
        if not flights:
            return []
        staged: dict[str, JobState] = {}
        with self.writer.transaction() as tx:
            for flight in flights:
                tx.delete_unstarted_run(flight.record.run_id)
                current = self.states.get(flight.record.job)
                if current is not None and flight.before is not None:
                    staged[current.name] = _before_arming(current, flight.before)
                    tx.put_job(staged[current.name])
        tasks = []
        for flight in flights:
            flight.disarmed = True
            flight.announced = True  # its slot's gate timer must not announce it either
            self.forget(flight)
            if flight.task is not None:
                flight.task.cancel()
                tasks.append(flight.task)
        self.states.update(staged)
        return tasks

    def held_at_slot(self, flight: Flight) -> Outcome | None:
        """At its slot, an outcome if the armed run must not execute after all (its caller
        awaited ``flight.gate`` itself: one coroutine less on the path to the run's start)."""
        name = flight.record.job
        desired, state = self.desired.get(name), self.states.get(name)
        if desired is None or state is None:
            return Outcome("skipped", self.now(), "the job was removed before its slot came")
        if desired.spec.spec.suspend or state.disabled:
            why = "suspended" if desired.spec.spec.suspend else "disabled"
            return Outcome("skipped", self.now(), f"the job was {why} before its slot came")
        return None

    if TYPE_CHECKING:  # the service's, declared for the type checker only
        def now(self) -> float: ...

        def forget(self, flight: Flight) -> None: ...

        def announce_started(self, flight: Flight) -> None: ...
