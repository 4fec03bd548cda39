"""The service on virtual time: startup spacing, triggers, deletions, reads during runs."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from reconciler.core.jobview import DesiredJob
from reconciler.executors.scripted import ScriptedExecutor, ScriptedOutcome
from reconciler.runtime.events import CollectingSink
from reconciler.runtime.service import Service, ServiceConfig
from reconciler.runtime.virtual import LoopClock, run_virtual
from reconciler.store import StateReader, StateWriter
from tests.engine.helpers import at, job, jobs


def _service(writer: StateWriter, start: float, executor: ScriptedExecutor | None = None,
             sink: CollectingSink | None = None) -> Service:
    clock = LoopClock(asyncio.get_running_loop(), start)
    return Service(writer, clock, executor or ScriptedExecutor({}), sink=sink)


async def _sleep_until(service: Service, instant: float) -> None:
    await asyncio.sleep(max(0.0, instant - service.clock.now()))


def test_restart_with_12_due_jobs_starts_5_at_once_then_every_5s(tmp_path: Path) -> None:
    desired = jobs(*[job(f"job-{i:02d}", {"every": "1h", "anchor": f"2026-01-05T07:00:{i:02d}Z"})
                     for i in range(12)])
    start = at("2026-01-05T08:00:30")

    async def scenario() -> list[float]:
        with StateWriter.open(tmp_path, now=start, durable=False) as writer:
            first = _service(writer, start)
            await first.start(desired)
            await first.abandon()  # down from 08:00:30 to 11:01:00
            await _sleep_until(first, at("2026-01-05T11:01:00"))
            sink = CollectingSink()
            second = Service(writer, first.clock, ScriptedExecutor({}), sink=sink)
            await second.start(desired)
            stop = asyncio.Event()
            timer = asyncio.ensure_future(second.run_forever(stop))
            await _sleep_until(second, at("2026-01-05T11:01:00") + 40)
            stop.set()
            await timer
            await second.abandon()
            return sorted(run.started_at for run in sink.started)

    starts = run_virtual(scenario())
    base = at("2026-01-05T11:01:00")
    # Five at once, then one every 5 s, earliest-due first.
    assert [round(s - base, 3) for s in starts] == [0, 0, 0, 0, 0, 5, 10, 15, 20, 25, 30, 35]


def test_job_deleted_while_running_is_recorded_and_dropped(tmp_path: Path) -> None:
    start = at("2026-01-05T08:59:00")
    slow = job("slow", {"every": "1h", "anchor": "2026-01-05T08:00:00Z"})
    executor = ScriptedExecutor({"slow": [ScriptedOutcome(duration=timedelta(minutes=9))]})

    async def scenario() -> None:
        with StateWriter.open(tmp_path, now=start, durable=False) as writer:
            service = _service(writer, start, executor)
            await service.start(jobs(slow))
            stop = asyncio.Event()
            timer = asyncio.ensure_future(service.run_forever(stop))
            await _sleep_until(service, at("2026-01-05T09:05:00"))
            await service.apply({})  # the spec is deleted mid-run
            await _sleep_until(service, at("2026-01-05T09:20:00"))
            stop.set()
            await timer
            assert writer.job("slow") is None
            (run,) = writer.runs("slow")
            assert run.status == "ok" and run.finished_at == at("2026-01-05T09:09:00")

    run_virtual(scenario())


def test_manual_trigger_honours_forbid_and_suspend(tmp_path: Path) -> None:
    start = at("2026-01-05T08:59:00")
    busy = job("busy", {"every": "1h", "anchor": "2026-01-05T08:00:00Z"})
    paused = job("paused", {"every": "1h"}, suspend=True)
    executor = ScriptedExecutor({"busy": [ScriptedOutcome(duration=timedelta(minutes=10))]})

    async def scenario() -> None:
        with StateWriter.open(tmp_path, now=start, durable=False) as writer:
            service = _service(writer, start, executor)
            await service.start(jobs(busy, paused))
            stop = asyncio.Event()
            timer = asyncio.ensure_future(service.run_forever(stop))
            await _sleep_until(service, at("2026-01-05T09:01:00"))
            assert (await service.trigger("busy")).status == "already-running"
            assert (await service.trigger("paused")).status == "suspended"
            assert (await service.trigger("paused", force=True)).status == "started"
            assert (await service.trigger("nope")).status == "unknown-job"
            await _sleep_until(service, at("2026-01-05T09:30:00"))
            stop.set()
            await timer
            (manual,) = writer.runs("paused")
            assert manual.trigger == "manual" and manual.scheduled_at is None
            assert manual.status == "ok"

    run_virtual(scenario())


def test_reads_never_wait_for_a_running_job_and_stay_consistent(tmp_path: Path) -> None:
    start = at("2026-01-05T08:59:59")
    many = [job(f"j{i}", {"every": "1m", "anchor": "2026-01-05T08:00:00Z"}) for i in range(6)]
    executor = ScriptedExecutor({f"j{i}": [ScriptedOutcome(duration=timedelta(seconds=7 * i))
                                           for _ in range(30)] for i in range(6)})
    seen: list[tuple[int, int]] = []

    async def reader_loop(service: Service, stop: asyncio.Event) -> None:
        while not stop.is_set():
            # The service's own view: taken without the lock, never blocked by a run.
            snapshot = service.snapshot()
            assert all(state.name for state in snapshot.values())
            # A separate read-only snapshot of the store: every marker names an open run.
            with StateReader.open(tmp_path) as reader:
                for state in reader.jobs():
                    if state.running is not None:
                        run = reader.run(state.running.run_id)
                        assert run is not None and run.status is None
                running = sum(1 for s in reader.jobs() if s.running)
                seen.append((running, len(reader.jobs())))
            await asyncio.sleep(0.5)

    async def scenario() -> None:
        with StateWriter.open(tmp_path, now=start, durable=False) as writer:
            service = _service(writer, start, executor)
            await service.start(jobs(*many))
            stop = asyncio.Event()
            timer = asyncio.ensure_future(service.run_forever(stop))
            reads = asyncio.ensure_future(reader_loop(service, stop))
            await _sleep_until(service, at("2026-01-05T09:10:00"))
            async with service.lock:
                # While the writer's lock is held, a read of the snapshot still answers.
                assert len(service.snapshot()) == 6
            stop.set()
            await asyncio.gather(timer, reads)
            await service.abandon()

    run_virtual(scenario())
    assert len(seen) > 1000
    assert any(running > 0 for running, _ in seen)
    assert all(total == 6 for _, total in seen)


def _run_for(tmp_path: Path, desired: dict[str, DesiredJob], start: float, until: float,
             executor: ScriptedExecutor, config: ServiceConfig | None = None) -> CollectingSink:
    sink = CollectingSink()

    async def scenario() -> None:
        with StateWriter.open(tmp_path, now=start, durable=False) as writer:
            service = Service(writer, LoopClock(asyncio.get_running_loop(), start), executor,
                              config, sink)
            await service.start(desired)
            stop = asyncio.Event()
            timer = asyncio.ensure_future(service.run_forever(stop))
            await _sleep_until(service, until)
            stop.set()
            await timer
            await service.abandon()

    run_virtual(scenario())
    return sink


def test_over_the_global_limit_runs_wait_in_order_of_due_time(tmp_path: Path) -> None:
    names = ["a", "b", "c", "d"]
    desired = jobs(*[job(name, {"every": "1h", "anchor": f"2026-01-05T08:00:0{i}Z"})
                     for i, name in enumerate(names)])
    ten_seconds = [ScriptedOutcome(duration=timedelta(seconds=10))]
    executor = ScriptedExecutor({name: ten_seconds for name in names})
    sink = _run_for(tmp_path, desired, at("2026-01-05T08:59:00"), at("2026-01-05T09:01:00"),
                    executor, ServiceConfig(max_concurrent_runs=2))
    starts = [(run.job, run.started_at - at("2026-01-05T09:00:00")) for run in sink.started]
    # a (due :00) and b (:01) start at once; c (:02) waits for a's end at :10, d for b's at :11.
    assert starts == [("a", 0), ("b", 1), ("c", 10), ("d", 11)]
    assert {run.scheduled_at - at("2026-01-05T09:00:00") for run in sink.started} == {0, 1, 2, 3}


def test_allow_runs_up_to_max_concurrent_then_skips(tmp_path: Path) -> None:
    parallel = job("parallel", {"every": "1m", "anchor": "2026-01-05T08:00:00Z"},
                   concurrencyPolicy="Allow", maxConcurrent=2)
    long_runs = [ScriptedOutcome(duration=timedelta(seconds=150)) for _ in range(5)]
    sink = _run_for(tmp_path, jobs(parallel), at("2026-01-05T09:00:30"),
                    at("2026-01-05T09:04:30"), ScriptedExecutor({"parallel": long_runs}))
    base = at("2026-01-05T09:00:00")
    # 09:01 and 09:02 run side by side; at 09:03 two are running, so it is skipped; the 09:01
    # run ends at 09:03:30, so 09:04 starts.
    assert [run.scheduled_at - base for run in sink.started] == [60, 120, 240]
    assert [(s.scheduled_at - base, s.reason) for s in sink.skips] == [(180, "overlap")]


def test_timer_wakes_within_60s_and_never_spins_on_a_past_due_fire(tmp_path: Path) -> None:
    far = job("far", {"every": "7d", "anchor": "2026-01-01T00:00:00Z"})
    start = at("2026-01-05T09:00:00")

    async def scenario() -> None:
        with StateWriter.open(tmp_path, now=start, durable=False) as writer:
            service = _service(writer, start)
            await service.start(jobs(far))
            assert service.next_delay() == 60.0  # the next fire is days away
            # A fire that is past due but cannot start (here: no capacity) waits 2 s, not 0.
            name = "far"
            state = service.states[name]
            service.states = {name: replace(state, next_effective_at=start - 5)}
            assert service.next_delay() == 2.0
            service.states = {name: replace(state, next_effective_at=start + 12.5)}
            assert service.next_delay() == 12.5

    run_virtual(scenario())


def test_a_job_whose_zone_breaks_is_disabled_after_three_tries_while_neighbours_run(
    tmp_path: Path,
) -> None:
    # A zone that vanished from the tz database: the model accepts the string (validation
    # would reject it today), so build the job the way an old state would meet it.
    broken = job("broken", {"cron": "0 * * * *", "timezone": "Mars/Olympus"})
    neighbour = job("neighbour", {"every": "1m", "anchor": "2026-01-05T08:00:00Z"})
    sink = _run_for(tmp_path, jobs(broken, neighbour), at("2026-01-05T09:00:30"),
                    at("2026-01-05T09:05:30"), ScriptedExecutor({}))
    assert [run.job for run in sink.finished] == ["neighbour"] * 5
    (alert,) = [a for a in sink.alerts if a.job == "broken"]
    assert alert.kind == "auto-disabled"
    assert "3 times in a row" in alert.message and "Mars/Olympus" in alert.message


def test_a_failing_event_sink_never_breaks_the_others(capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    from reconciler.model.state import SkipRecord
    from reconciler.runtime.events import FanoutSink

    class Broken(CollectingSink):
        def skipped(self, skip: SkipRecord) -> None:
            raise OSError("disk full")

    good = CollectingSink()
    fanout = FanoutSink([Broken(), good])
    fanout.skipped(SkipRecord("a", 1.0, "overlap", 2.0))
    assert len(good.skips) == 1
    assert "disk full" in capsys.readouterr().err


def test_delete_after_run_removes_a_done_one_shot_and_it_never_runs_again(
    tmp_path: Path,
) -> None:
    once = job("once", {"at": "2026-01-05T09:00:00Z"}, deleteAfterRun=True)
    sink = CollectingSink()
    start = at("2026-01-05T08:59:00")

    async def scenario() -> None:
        with StateWriter.open(tmp_path, now=start, durable=False) as writer:
            service = Service(writer, LoopClock(asyncio.get_running_loop(), start),
                              ScriptedExecutor({}), sink=sink)
            await service.start(jobs(once))
            stop = asyncio.Event()
            timer = asyncio.ensure_future(service.run_forever(stop))
            await _sleep_until(service, at("2026-01-05T09:05:00"))
            assert writer.job("once") is None and "once" not in service.snapshot()
            await service.apply(jobs(once))  # the spec is still in git
            await _sleep_until(service, at("2026-01-05T10:00:00"))
            stop.set()
            await timer
            assert writer.job("once") is None
            (run,) = writer.runs("once")  # the history stays
            assert run.status == "ok"

    run_virtual(scenario())
    assert len(sink.finished) == 1


def test_a_one_shot_whose_state_was_lost_does_not_run_twice(tmp_path: Path) -> None:
    once = job("once", {"at": "2026-01-05T09:00:00Z"})
    start = at("2026-01-05T08:59:00")

    async def scenario() -> int:
        with StateWriter.open(tmp_path, now=start, durable=False) as writer:
            service = _service(writer, start)
            await service.start(jobs(once))
            stop = asyncio.Event()
            timer = asyncio.ensure_future(service.run_forever(stop))
            await _sleep_until(service, at("2026-01-05T09:01:00"))
            await service.apply({})  # the spec is removed: its state goes, history stays
            await service.apply(jobs(once))  # and comes back
            await _sleep_until(service, at("2026-01-05T10:00:00"))
            stop.set()
            await timer
            state = writer.job("once")
            assert state is not None and state.next_effective_at is None
            assert state.last_status == "ok"
            return len(writer.runs("once"))

    assert run_virtual(scenario()) == 1


def test_results_and_alerts_are_written_to_the_outbox_with_the_run(tmp_path: Path) -> None:
    from reconciler.model.job import Channel

    hooked = job("hooked", {"every": "1h", "anchor": "2026-01-05T08:00:00Z"},
                 delivery={"webhook": {"url": "http://127.0.0.1:9/results"}, "on": ["ok"]},
                 failureAlert={"channel": "ops", "after": 1})
    ops = Channel.model_validate({"apiVersion": "reconciler.dev/v1", "kind": "Channel",
                                  "metadata": {"name": "ops"},
                                  "spec": {"type": "slack", "url": "http://127.0.0.1:9/slack"}})
    executor = ScriptedExecutor({"hooked": [ScriptedOutcome(), ScriptedOutcome(
        status="error", error="boom")]})
    start = at("2026-01-05T08:59:00")

    async def scenario() -> None:
        with StateWriter.open(tmp_path, now=start, durable=False) as writer:
            service = Service(writer, LoopClock(asyncio.get_running_loop(), start), executor)
            await service.start(jobs(hooked), {"ops": ops})
            stop = asyncio.Event()
            timer = asyncio.ensure_future(service.run_forever(stop))
            await _sleep_until(service, at("2026-01-05T10:30:00"))
            stop.set()
            await timer
            ok_run, failed_run = sorted(writer.runs("hooked"), key=lambda r: r.started_at)
            assert ok_run.delivery_status == "pending"  # in the outbox, not yet sent
            assert failed_run.delivery_status == "not-requested"  # on: [ok]
            due = writer.due_deliveries(1e18, 10)
            targets = sorted(entry.target for entry in due)
            assert len(due) == 2 and targets[0] == "channel ops"
            (result,) = [e for e in due if e.run_id == ok_run.run_id]
            assert result.idempotency_key == ok_run.run_id

    run_virtual(scenario())


def test_replace_still_interrupts_when_every_run_slot_is_taken(tmp_path: Path) -> None:
    newest = job("newest", {"every": "1m", "anchor": "2026-01-05T08:00:00Z"},
                 concurrencyPolicy="Replace")
    slow = [ScriptedOutcome(duration=timedelta(minutes=5)) for _ in range(3)]
    sink = _run_for(tmp_path, jobs(newest), at("2026-01-05T09:00:30"),
                    at("2026-01-05T09:02:30"), ScriptedExecutor({"newest": slow}),
                    ServiceConfig(max_concurrent_runs=1))
    base = at("2026-01-05T09:00:00")
    # One slot, held by the 09:01 run: the 09:02 slot still replaces it.
    assert [(r.scheduled_at - base, r.status) for r in sink.finished] == [(60, "interrupted")]
    assert [r.scheduled_at - base for r in sink.started] == [60, 120]


def test_forbid_overlap_is_recorded_when_every_run_slot_is_taken(tmp_path: Path) -> None:
    busy = job("busy", {"every": "1m", "anchor": "2026-01-05T08:00:00Z"})
    sink = _run_for(tmp_path, jobs(busy), at("2026-01-05T09:00:30"),
                    at("2026-01-05T09:03:30"),
                    ScriptedExecutor({"busy": [ScriptedOutcome(duration=timedelta(minutes=10))]}),
                    ServiceConfig(max_concurrent_runs=1))
    base = at("2026-01-05T09:00:00")
    assert [(s.scheduled_at - base, s.reason) for s in sink.skips] == [
        (120, "overlap"), (180, "overlap")]
    assert [s.recorded_at - base for s in sink.skips] == [120, 180]  # on time, not later


def test_a_job_waiting_behind_its_own_run_does_not_make_another_job_start_late(
        tmp_path: Path) -> None:
    """Regression: while a due Queue job waits for its run, the timer looked again only every
    past_due_delay (2 s) from the last finish, so another job's slot came up to 2 s late."""
    minutely = {"every": "1m", "anchor": "2026-01-05T08:00:00Z"}
    queued = job("queued", minutely, concurrencyPolicy="Queue")
    punctual = job("punctual", minutely)
    executor = ScriptedExecutor({
        "queued": [ScriptedOutcome(duration=timedelta(seconds=150))],
        "punctual": [ScriptedOutcome(duration=timedelta(milliseconds=300))] * 5,
    })
    start = at("2026-01-05T08:59:30")

    async def scenario() -> list[tuple[str, float]]:
        with StateWriter.open(tmp_path, now=start, durable=False) as writer:
            sink = CollectingSink()
            service = _service(writer, start, executor, sink)
            await service.start(jobs(queued, punctual))
            stop = asyncio.Event()
            timer = asyncio.ensure_future(service.run_forever(stop))
            await _sleep_until(service, at("2026-01-05T09:04:30"))
            stop.set()
            await timer
            await service.abandon()
            return [(run.job, run.started_at) for run in sink.started if run.job == "punctual"]

    starts = run_virtual(scenario())
    assert starts == [("punctual", at(f"2026-01-05T09:0{m}:00")) for m in range(5)]
