"""``reconciler simulate``: the real service, planner and policies on a virtual clock.

Time jumps to the next pending wake-up whenever nothing else can proceed, so a week of a
thousand jobs takes seconds. Runs are scripted (``--outcomes``); events script downtime
(``stop``/``start``), manual triggers and spec edits (``apply``). The state starts empty, or
as a copy of an existing state directory that is only ever read. Nothing outside a temporary
directory is written.

A ``stop`` is abrupt, like a killed process: runs in flight stay marked running, and the next
``start`` records them ``interrupted`` and catches up per policy.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from reconciler.core.jobview import DesiredJob
from reconciler.core.timefmt import iso_utc, parse_instant
from reconciler.errors import SpecError
from reconciler.executors.scripted import ScriptedExecutor, ScriptedOutcome
from reconciler.model.job import Channel
from reconciler.model.state import JobState, RunRecord
from reconciler.runtime.events import CollectingSink
from reconciler.runtime.service import Service, ServiceConfig
from reconciler.runtime.virtual import LoopClock, run_virtual
from reconciler.store import StatePaths, StateReader, StateWriter

ACTIONS = ("stop", "start", "trigger", "apply")


@dataclass(frozen=True)
class SimEvent:
    at: float
    action: str
    job: str | None = None
    specs: str | None = None
    force: bool = False


@dataclass
class Simulation:
    desired: dict[str, DesiredJob]
    start: float
    until: float
    outcomes: Mapping[str, list[ScriptedOutcome]] = field(default_factory=dict)
    events: list[SimEvent] = field(default_factory=list)
    state_from: str | None = None
    config: ServiceConfig = field(default_factory=ServiceConfig)
    load_specs: Callable[[str], tuple[dict[str, DesiredJob], dict[str, Channel]]] | None = None
    channels: dict[str, Channel] = field(default_factory=dict)


@dataclass
class SimReport:
    sink: CollectingSink
    final: dict[str, JobState]
    in_flight: list[RunRecord]
    trigger_results: list[dict[str, Any]]


def parse_events(raw: Any) -> list[SimEvent]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise SpecError("events must be a list of {at, action, job?, specs?}")
    events = []
    for index, item in enumerate(raw, start=1):
        where = f"event {index}"
        if not isinstance(item, Mapping) or "at" not in item or "action" not in item:
            raise SpecError(f"{where}: needs at and action (one of {', '.join(ACTIONS)})")
        unknown = set(item) - {"at", "action", "job", "specs", "force"}
        if unknown:
            raise SpecError(f"{where}: unknown field(s) {sorted(unknown)}")
        if item["action"] not in ACTIONS:
            raise SpecError(f"{where}: action must be one of {', '.join(ACTIONS)}")
        if item["action"] == "trigger" and not item.get("job"):
            raise SpecError(f"{where}: trigger needs job")
        if item["action"] == "apply" and not item.get("specs"):
            raise SpecError(f"{where}: apply needs specs (a path)")
        try:
            at = parse_instant(str(item["at"]))
        except ValueError as exc:
            raise SpecError(f"{where}: {exc}") from exc
        events.append(SimEvent(at, item["action"], item.get("job"), item.get("specs"),
                               bool(item.get("force", False))))
    return sorted(events, key=lambda event: event.at)


def run_simulation(simulation: Simulation) -> SimReport:
    with tempfile.TemporaryDirectory(prefix="reconciler-simulate-") as workdir:
        if simulation.state_from is not None:
            _copy_state(simulation.state_from, workdir)
        return run_virtual(_simulate(simulation, workdir))


def _copy_state(source: str, target: str) -> None:
    """A scratch copy of an existing state; not a byte of the source changes."""
    with StateReader.open(source) as reader:
        if reader.exists:
            reader.copy_to(StatePaths.of(target).db)


class _Driver:
    def __init__(self, simulation: Simulation, writer: StateWriter) -> None:
        loop = asyncio.get_running_loop()
        self.simulation = simulation
        self.clock = LoopClock(loop, simulation.start)
        self.writer = writer
        self.sink = CollectingSink()
        self.executor = ScriptedExecutor(simulation.outcomes)
        self.desired = dict(simulation.desired)
        self.channels = dict(simulation.channels)
        self.service: Service | None = None
        self.stop = asyncio.Event()
        self.timer: asyncio.Task[None] | None = None
        self.triggers: list[dict[str, Any]] = []

    async def start(self) -> None:
        config = replace(self.simulation.config, arm_until=self.simulation.until)
        self.service = Service(self.writer, self.clock, self.executor, config, self.sink)
        await self.service.start(self.desired, self.channels)
        self.stop = asyncio.Event()
        self.timer = asyncio.ensure_future(self.service.run_forever(self.stop))

    async def halt(self) -> list[RunRecord]:
        if self.service is None:
            return []
        self.stop.set()
        if self.timer is not None:
            await self.timer
        in_flight = [f.record for flights in self.service.flights.values() for f in flights]
        await self.service.abandon()
        self.service = None
        return in_flight

    async def sleep_until(self, instant: float) -> None:
        delay = instant - self.clock.now()
        if delay > 0:
            await asyncio.sleep(delay)

    async def handle(self, event: SimEvent) -> None:
        if event.action == "stop":
            await self.halt()
        elif event.action == "start" and self.service is None:
            await self.start()
        elif event.action == "trigger":
            await self._trigger(event)
        elif event.action == "apply":
            if self.simulation.load_specs is None or event.specs is None:
                raise SpecError("apply needs a spec loader and a specs path")
            self.desired, self.channels = self.simulation.load_specs(event.specs)
            if self.service is not None:
                await self.service.apply(self.desired, self.channels)

    async def _trigger(self, event: SimEvent) -> None:
        assert event.job is not None
        if self.service is None:
            self.triggers.append({"job": event.job, "at": iso_utc(event.at),
                                  "status": "daemon-stopped"})
            return
        result = await self.service.trigger(event.job, force=event.force)
        self.triggers.append({"job": event.job, "at": iso_utc(event.at),
                              "status": result.status, "runId": result.run_id})


async def _simulate(simulation: Simulation, workdir: str) -> SimReport:
    writer = StateWriter.open(workdir, now=simulation.start, durable=False)
    try:
        driver = _Driver(simulation, writer)
        await driver.start()
        for event in simulation.events:
            if event.at > simulation.until:
                break
            await driver.sleep_until(event.at)
            await driver.handle(event)
        await driver.sleep_until(simulation.until)
        in_flight = await driver.halt()
        final = {state.name: state for state in writer.jobs()}
        return SimReport(driver.sink, final, in_flight, driver.triggers)
    finally:
        writer.close()
