"""Manual triggers: run a job now, under its concurrency policy, never shifting its schedule."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from reconciler.core.identity import manual_occurrence_key, run_id
from reconciler.core.jobview import DesiredJob
from reconciler.model.enums import ConcurrencyPolicy
from reconciler.model.state import JobState, RunningMarker, RunRecord, RunStart

if TYPE_CHECKING:
    from reconciler.runtime.dueindex import StateTable
    from reconciler.runtime.runner import Flight
    from reconciler.store import StateWriter


@dataclass(frozen=True)
class TriggerResult:
    status: str  # started | queued | already-running | suspended | disabled | unknown-job
    run_id: str | None = None
    message: str = ""


class ManualMixin:
    """The manual-trigger half of ``Service``; the attributes below are the service's."""

    lock: asyncio.Lock
    writer: StateWriter
    desired: dict[str, DesiredJob]
    states: StateTable
    flights: dict[str, list[Flight]]
    queued_manual: set[str]

    async def trigger(self, name: str, force: bool = False) -> TriggerResult:
        """Run a job now (trigger ``manual``), honouring its concurrency policy; never shifts
        its schedule. A suspended or disabled job runs only with ``force``."""
        async with self.lock:
            desired, state = self.desired.get(name), self.states.get(name)
            if desired is None or state is None:
                return TriggerResult("unknown-job", message=f"no job named {name!r}")
            if desired.spec.spec.suspend and not force:
                return TriggerResult("suspended", message="job is suspended: use --force")
            if state.disabled and not force:
                return TriggerResult("disabled", message=f"job is disabled "
                                     f"({state.disabled_reason}): use --force")
            refusal = self._manual_refusal(desired, name)
            if refusal is not None:
                return refusal
            record = self._manual_record(name)
        self.launch(record)
        return TriggerResult("started", record.run_id)

    def _manual_refusal(self, desired: DesiredJob, name: str) -> TriggerResult | None:
        running = len([f for f in self.flights.get(name, []) if not f.superseded])
        if not running:
            return None
        policy = desired.spec.spec.concurrency_policy
        if policy is ConcurrencyPolicy.REPLACE:
            self.supersede(name)
            return None
        if policy is ConcurrencyPolicy.ALLOW and running < desired.spec.spec.max_concurrent:
            return None
        if policy is ConcurrencyPolicy.QUEUE and name not in self.queued_manual:
            self.queued_manual.add(name)
            return TriggerResult("queued", message="will run when the current run finishes")
        return TriggerResult("already-running", message="a run of this job is in progress")

    def _manual_record(self, name: str) -> RunRecord:
        now = self.now()
        key = manual_occurrence_key(name, now)
        record = RunRecord(run_id(key, 1), key, name, None, now, attempt=1, trigger="manual")
        state = self.states[name]
        with self.writer.transaction() as tx:
            tx.start_run(RunStart.of(record))
        self.states[name] = replace(state, running=RunningMarker(record.run_id, now))
        return record

    if TYPE_CHECKING:  # the service's, declared for the type checker only
        def now(self) -> float: ...

        def launch(self, record: RunRecord, slot: float | None = None,
                   before: JobState | None = None) -> None: ...

        def supersede(self, name: str, reason: str = ...) -> None: ...
