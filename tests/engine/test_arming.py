"""Arming (``ServiceConfig.arm_ahead``): on-time runs decided and recorded before their slot,
started on it; what happens when the job changes inside the lead."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Awaitable, Callable
from datetime import timedelta
from pathlib import Path

import pytest

from reconciler.core.jobview import DesiredJob
from reconciler.executors.base import RunContext, RunResult
from reconciler.executors.scripted import ScriptedExecutor, ScriptedOutcome
from reconciler.model.state import RunRecord
from reconciler.runtime.events import CollectingSink
from reconciler.runtime.service import Service, ServiceConfig
from reconciler.runtime.virtual import LoopClock, run_virtual
from reconciler.store import StateWriter
from tests.engine.helpers import at, job, jobs

START = at("2026-01-05T08:59:00")
SLOT = at("2026-01-05T09:00:00")
HOURLY = {"every": "1h", "anchor": "2026-01-05T08:00:00Z"}


class ClockedExecutor:
    """Notes the virtual instant each run's body begins at, then behaves as scripted."""

    def __init__(self, clock: LoopClock, script: ScriptedExecutor | None = None) -> None:
        self.clock = clock
        self.script = script or ScriptedExecutor({})
        self.began: list[tuple[str, float]] = []

    async def execute(self, context: RunContext) -> RunResult:
        self.began.append((context.job.name, self.clock.now()))
        return await self.script.execute(context)


Scenario = Callable[[Service, StateWriter, ClockedExecutor], Awaitable[None]]


def _drive(tmp_path: Path, desired: dict[str, DesiredJob], scenario: Scenario,
           arm_ahead: float = 5.0, script: ScriptedExecutor | None = None,
           **config: object) -> CollectingSink:
    sink = CollectingSink()

    async def main() -> None:
        clock = LoopClock(asyncio.get_running_loop(), START)
        executor = ClockedExecutor(clock, script)
        with StateWriter.open(tmp_path, now=START, durable=False) as writer:
            service = Service(writer, clock, executor,
                              ServiceConfig(arm_ahead=arm_ahead, **config), sink)  # type: ignore[arg-type]
            await service.start(desired)
            stop = asyncio.Event()
            timer = asyncio.ensure_future(service.run_forever(stop))
            await scenario(service, writer, executor)
            stop.set()
            await timer
            await service.shutdown(0)

    run_virtual(main())
    return sink


async def _until(service: Service, instant: float) -> None:
    await asyncio.sleep(max(0.0, instant - service.clock.now()))


def test_an_armed_run_is_recorded_before_its_slot_and_begins_exactly_on_it(tmp_path: Path
                                                                           ) -> None:
    async def scenario(service: Service, writer: StateWriter, executor: ClockedExecutor
                       ) -> None:
        await _until(service, SLOT - 3)  # inside the 5 s lead
        (run,) = writer.runs("hourly")
        assert run.status is None and run.started_at == SLOT and run.scheduled_at == SLOT
        marker = writer.job("hourly").running  # type: ignore[union-attr]
        assert marker is not None and marker.run_id == run.run_id
        assert executor.began == []  # recorded, not begun
        await _until(service, SLOT + 1)
        assert executor.began == [("hourly", SLOT)]
        (run,) = writer.runs("hourly")
        assert run.status == "ok"

    sink = _drive(tmp_path, jobs(job("hourly", HOURLY)), scenario)
    assert [run.started_at for run in sink.started] == [SLOT]


def test_the_timer_wakes_one_lead_before_the_slot_to_arm(tmp_path: Path) -> None:
    async def scenario(service: Service, writer: StateWriter, executor: ClockedExecutor
                       ) -> None:
        await _until(service, SLOT - 5.001)
        assert writer.runs("hourly") == []
        await _until(service, SLOT - 4.999)
        assert len(writer.runs("hourly")) == 1

    _drive(tmp_path, jobs(job("hourly", HOURLY)), scenario)


def test_without_a_lead_the_run_is_decided_at_its_slot(tmp_path: Path) -> None:
    async def scenario(service: Service, writer: StateWriter, executor: ClockedExecutor
                       ) -> None:
        await _until(service, SLOT - 0.001)
        assert writer.runs("hourly") == []
        await _until(service, SLOT + 1)
        assert executor.began == [("hourly", SLOT)]

    _drive(tmp_path, jobs(job("hourly", HOURLY)), scenario, arm_ahead=0.0)


def test_a_job_suspended_inside_the_lead_records_its_armed_run_skipped(tmp_path: Path
                                                                       ) -> None:
    async def scenario(service: Service, writer: StateWriter, executor: ClockedExecutor
                       ) -> None:
        await _until(service, SLOT - 2)
        await service.apply(jobs(job("hourly", HOURLY, suspend=True)))
        await _until(service, SLOT + 1)
        assert executor.began == []
        (run,) = writer.runs("hourly")
        assert run.status == "skipped" and "suspended before its slot came" in (run.error or "")
        state = writer.job("hourly")
        assert state is not None and state.running is None and state.consecutive_errors == 0

    _drive(tmp_path, jobs(job("hourly", HOURLY)), scenario)


def test_a_job_removed_inside_the_lead_records_its_armed_run_skipped(tmp_path: Path) -> None:
    async def scenario(service: Service, writer: StateWriter, executor: ClockedExecutor
                       ) -> None:
        await _until(service, SLOT - 2)
        await service.apply({})
        await _until(service, SLOT + 1)
        assert executor.began == []
        (run,) = writer.runs("hourly")
        assert run.status == "skipped" and "removed" in (run.error or "")
        assert writer.job("hourly") is None

    _drive(tmp_path, jobs(job("hourly", HOURLY)), scenario)


def test_a_manual_trigger_inside_the_lead_sees_the_armed_run_as_running(tmp_path: Path
                                                                        ) -> None:
    async def scenario(service: Service, writer: StateWriter, executor: ClockedExecutor
                       ) -> None:
        await _until(service, SLOT - 2)
        result = await service.trigger("hourly")
        assert result.status == "already-running"  # Forbid: the armed run holds the job
        await _until(service, SLOT + 1)
        assert executor.began == [("hourly", SLOT)]

    _drive(tmp_path, jobs(job("hourly", HOURLY)), scenario)


def test_a_replace_trigger_inside_the_lead_interrupts_the_armed_run_before_it_began(
        tmp_path: Path) -> None:
    async def scenario(service: Service, writer: StateWriter, executor: ClockedExecutor
                       ) -> None:
        await _until(service, SLOT - 2)
        result = await service.trigger("hourly")
        assert result.status == "started"
        await _until(service, SLOT + 1)
        assert executor.began == [("hourly", SLOT - 2)]  # only the manual run executed
        runs = {run.trigger: run for run in writer.runs("hourly")}
        assert runs["schedule"].status == "interrupted"
        assert "before it began" in (runs["schedule"].error or "")
        assert runs["manual"].status == "ok"

    _drive(tmp_path, jobs(job("hourly", HOURLY, concurrencyPolicy="Replace")), scenario)


def test_a_job_with_a_run_in_flight_is_not_armed_but_decided_at_its_slot(tmp_path: Path
                                                                         ) -> None:
    slow = ScriptedExecutor({"hourly": [ScriptedOutcome(duration=timedelta(minutes=2))]})

    async def scenario(service: Service, writer: StateWriter, executor: ClockedExecutor
                       ) -> None:
        await _until(service, START + 1)
        assert (await service.trigger("hourly")).status == "started"  # runs to 09:00:01
        await _until(service, SLOT - 1)
        assert [run.trigger for run in writer.runs("hourly")] == ["manual"]  # not armed
        await _until(service, SLOT + 1)
        assert [(s.scheduled_at, s.reason) for s in writer.skips("hourly")] == \
            [(SLOT, "overlap")]  # Forbid, decided at the slot

    _drive(tmp_path, jobs(job("hourly", HOURLY)), scenario, script=slow)


def test_armed_runs_hold_run_slots(tmp_path: Path) -> None:
    desired = jobs(*[job(f"job-{i}", HOURLY) for i in range(3)])

    async def scenario(service: Service, writer: StateWriter, executor: ClockedExecutor
                       ) -> None:
        await _until(service, SLOT - 1)
        armed = [name for name in desired if writer.runs(name)]
        assert len(armed) == 2 and service.in_flight == 2  # the cap is 2
        await _until(service, SLOT + 1)
        assert sorted(begun for _, begun in executor.began) == [SLOT, SLOT, SLOT]

    _drive(tmp_path, desired, scenario, max_concurrent_runs=2)


def test_a_crash_inside_the_lead_records_the_armed_run_interrupted_at_the_next_start(
        tmp_path: Path) -> None:
    async def main() -> None:
        clock = LoopClock(asyncio.get_running_loop(), START)
        desired = jobs(job("hourly", HOURLY))
        with StateWriter.open(tmp_path, now=START, durable=False) as writer:
            first = Service(writer, clock, ClockedExecutor(clock), ServiceConfig(arm_ahead=5))
            await first.start(desired)
            stop = asyncio.Event()
            timer = asyncio.ensure_future(first.run_forever(stop))
            await _until(first, SLOT - 2)
            stop.set()
            await timer
            await first.abandon()  # killed with the run armed
            await _until(first, SLOT + 30)
            executor = ClockedExecutor(clock)
            second = Service(writer, clock, executor, ServiceConfig(arm_ahead=5))
            await second.start(desired)
            (run,) = writer.runs("hourly")
            assert run.status == "interrupted" and run.started_at == SLOT
            assert executor.began == []
            await second.shutdown(0)

    run_virtual(main())


# 2 s: the grace ends exactly at the slot, which still counts as within it.
@pytest.mark.parametrize("grace", [30.0, 2.0])
def test_shutdown_inside_the_lead_lets_the_armed_run_begin_within_the_grace(
        tmp_path: Path, grace: float) -> None:
    async def main() -> None:
        clock = LoopClock(asyncio.get_running_loop(), START)
        executor = ClockedExecutor(clock)
        with StateWriter.open(tmp_path, now=START, durable=False) as writer:
            service = Service(writer, clock, executor, ServiceConfig(arm_ahead=5))
            await service.start(jobs(job("hourly", HOURLY)))
            stop = asyncio.Event()
            timer = asyncio.ensure_future(service.run_forever(stop))
            await _until(service, SLOT - 2)
            stop.set()
            await timer
            await service.shutdown(grace)
            assert executor.began == [("hourly", SLOT)]
            (run,) = writer.runs("hourly")
            assert run.status == "ok"

    run_virtual(main())


def test_an_armed_run_times_out_at_its_full_timeout_from_its_slot(tmp_path: Path) -> None:
    hang = ScriptedExecutor({"hourly": [ScriptedOutcome(duration=timedelta(hours=1))]})

    async def scenario(service: Service, writer: StateWriter, executor: ClockedExecutor
                       ) -> None:
        await _until(service, SLOT + 11 * 60)
        (run,) = writer.runs("hourly")
        assert run.status == "timeout" and run.finished_at == SLOT + 10 * 60

    _drive(tmp_path, jobs(job("hourly", HOURLY, timeout="10m")), scenario, script=hang)


def test_a_retry_after_backoff_is_armed_like_a_scheduled_slot(tmp_path: Path) -> None:
    flaky = ScriptedExecutor({"once": [ScriptedOutcome(status="error", error="503 busy"),
                                       ScriptedOutcome()]})
    one_shot = job("once", {"at": "2026-01-05T09:00:00Z"})

    async def scenario(service: Service, writer: StateWriter, executor: ClockedExecutor
                       ) -> None:
        await _until(service, SLOT + 29)  # the first retry is 30 s after the failure
        assert len(writer.runs("once")) == 2  # the retry is armed
        await _until(service, SLOT + 31)
        assert [begun - SLOT for _, begun in executor.began] == [0, 30]

    _drive(tmp_path, jobs(one_shot), scenario, script=flaky)


def test_a_thousand_armed_jobs_all_begin_at_their_slot_none_early(tmp_path: Path) -> None:
    desired = jobs(*[job(f"job-{i:04d}", {"every": "1m", "anchor": "2026-01-05T08:00:00Z"})
                     for i in range(1000)])

    async def scenario(service: Service, writer: StateWriter, executor: ClockedExecutor
                       ) -> None:
        await _until(service, SLOT + 61)
        began = [instant for _, instant in executor.began]
        assert len(began) == 2000 and sorted(set(began)) == [SLOT, SLOT + 60]

    sink = _drive(tmp_path, desired, scenario, max_concurrent_runs=2000)
    assert {run.started_at for run in sink.started} == {SLOT, SLOT + 60}


def test_an_armed_run_executes_the_spec_current_at_its_slot(tmp_path: Path) -> None:
    edited = job("hourly", HOURLY, description="edited inside the lead")
    seen: list[str | None] = []

    class Noting(ScriptedExecutor):
        async def execute(self, context: RunContext) -> RunResult:
            seen.append(context.job.spec.description)
            return await super().execute(context)

    async def scenario(service: Service, writer: StateWriter, executor: ClockedExecutor
                       ) -> None:
        await _until(service, SLOT - 2)
        assert len(writer.runs("hourly")) == 1  # armed with the first spec
        await service.apply(jobs(edited))
        await _until(service, SLOT + 1)
        assert executor.began == [("hourly", SLOT)]

    _drive(tmp_path, jobs(job("hourly", HOURLY)), scenario, script=Noting({}))
    assert seen == ["edited inside the lead"]


def test_run_started_events_come_at_the_slot_after_every_run_of_it_began_and_before_any_ends(
        tmp_path: Path) -> None:
    desired = jobs(*[job(f"job-{i}", HOURLY) for i in range(3)])
    order: list[str] = []

    class Recording(CollectingSink):
        def run_started(self, run: RunRecord) -> None:
            order.append(f"started {run.job}")
            super().run_started(run)

        def run_finished(self, run: RunRecord) -> None:
            order.append(f"finished {run.job}")
            super().run_finished(run)

    class Beginning(ScriptedExecutor):
        async def execute(self, context: RunContext) -> RunResult:
            order.append(f"began {context.job.name}")
            return await super().execute(context)

    async def main() -> None:
        clock = LoopClock(asyncio.get_running_loop(), START)
        with StateWriter.open(tmp_path, now=START, durable=False) as writer:
            service = Service(writer, clock, Beginning({}), ServiceConfig(arm_ahead=5),
                              Recording())
            await service.start(desired)
            stop = asyncio.Event()
            timer = asyncio.ensure_future(service.run_forever(stop))
            await _until(service, SLOT - 1)
            assert order == []  # armed: nothing announced before the slot
            await _until(service, SLOT + 1)
            stop.set()
            await timer
            await service.shutdown(0)

    run_virtual(main())
    assert [entry.split()[0] for entry in order] == ["began"] * 3 + ["started"] * 3 + \
        ["finished"] * 3


def test_the_collector_is_paused_only_while_a_slots_runs_begin(tmp_path: Path) -> None:
    states: list[bool] = []

    class Probing(ScriptedExecutor):
        async def execute(self, context: RunContext) -> RunResult:
            states.append(gc.isenabled())
            return await super().execute(context)

    async def scenario(service: Service, writer: StateWriter, executor: ClockedExecutor
                       ) -> None:
        await _until(service, SLOT + 1)
        states.append(gc.isenabled())

    assert gc.isenabled()
    _drive(tmp_path, jobs(job("hourly", HOURLY)), scenario, script=Probing({}))
    assert states == [False, True]


def test_a_shutdown_whose_grace_ends_before_the_slot_takes_the_armed_run_back(
        tmp_path: Path) -> None:
    """The run never began: its record goes and the job gets its pending fire back, so the
    next start catches the slot up like any slot missed while down, not a failure."""
    async def main() -> None:
        clock = LoopClock(asyncio.get_running_loop(), START)
        desired = jobs(job("hourly", HOURLY))
        with StateWriter.open(tmp_path, now=START, durable=False) as writer:
            first_executor = ClockedExecutor(clock)
            first_sink = CollectingSink()
            first = Service(writer, clock, first_executor, ServiceConfig(arm_ahead=5),
                            first_sink)
            await first.start(desired)
            stop = asyncio.Event()
            timer = asyncio.ensure_future(first.run_forever(stop))
            await _until(first, SLOT - 2)
            assert len(writer.runs("hourly")) == 1  # armed
            stop.set()
            await timer
            await first.shutdown(1)  # the grace ends a second before the slot
            assert writer.runs("hourly") == []
            state = writer.job("hourly")
            assert state is not None and state.running is None
            assert (state.next_nominal_at, state.next_effective_at) == (SLOT, SLOT)
            assert first.in_flight == 0 and first.flights == {}
            await _until(first, SLOT + 30)
            assert first_executor.began == [] and first_sink.started == []  # no event either
            executor = ClockedExecutor(clock)
            second = Service(writer, clock, executor, ServiceConfig(arm_ahead=5))
            await second.start(desired)
            stop = asyncio.Event()
            timer = asyncio.ensure_future(second.run_forever(stop))
            await _until(second, SLOT + 31)
            stop.set()
            await timer
            await second.shutdown(0)
            (run,) = writer.runs("hourly")
            assert (run.scheduled_at, run.trigger, run.status) == (SLOT, "catchup", "ok")
            assert executor.began == [("hourly", SLOT + 30)]

    run_virtual(main())


def test_an_edit_of_the_schedule_inside_the_lead_survives_taking_the_run_back(
        tmp_path: Path) -> None:
    two_hourly = {"every": "2h", "anchor": "2026-01-05T08:00:00Z"}

    async def main() -> None:
        clock = LoopClock(asyncio.get_running_loop(), START)
        with StateWriter.open(tmp_path, now=START, durable=False) as writer:
            service = Service(writer, clock, ClockedExecutor(clock), ServiceConfig(arm_ahead=5))
            await service.start(jobs(job("hourly", HOURLY)))
            stop = asyncio.Event()
            timer = asyncio.ensure_future(service.run_forever(stop))
            await _until(service, SLOT - 3)
            await service.apply(jobs(job("hourly", two_hourly)))
            edited = writer.job("hourly")
            assert edited is not None
            stop.set()
            await timer
            await service.shutdown(0)
            state = writer.job("hourly")
            assert state is not None and state.running is None and writer.runs("hourly") == []
            assert state.next_effective_at == edited.next_effective_at  # the edit's fire

    run_virtual(main())
