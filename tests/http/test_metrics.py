"""/metrics over real HTTP: event counters after real runs, state gauges, bounded labels."""

from __future__ import annotations

import asyncio
from pathlib import Path

from prometheus_client import REGISTRY

from reconciler.executors.scripted import ScriptedExecutor, ScriptedOutcome
from reconciler.model.state import RunRecord, SkipRecord
from reconciler.runtime.events import Alert
from reconciler.runtime.metrics import MetricsSink
from tests.engine.helpers import job, jobs
from tests.http.harness import TOKEN, never, running_api

AUTH = {"Authorization": f"Bearer {TOKEN}"}


def test_runs_are_counted_by_job_status_and_trigger_with_their_duration(tmp_path: Path) -> None:
    failing = ScriptedExecutor({"flaky": [ScriptedOutcome("error", "boom"),
                                          ScriptedOutcome("error", "boom again")]})

    async def scenario() -> None:
        desired = jobs(never("steady"), never("flaky"))
        async with running_api(tmp_path, desired, executor=failing) as api:
            await api.client.post("/api/v1/jobs/steady/trigger", headers=AUTH)
            await api.finished_runs("steady")
            for count in (1, 2):
                await api.client.post("/api/v1/jobs/flaky/trigger", headers=AUTH)
                await api.finished_runs("flaky", count)
            samples = await api.scrape()
            ok = (("job", "steady"), ("status", "ok"), ("trigger", "manual"))
            error = (("job", "flaky"), ("status", "error"), ("trigger", "manual"))
            assert samples[("reconciler_runs_total", ok)] == 1
            assert samples[("reconciler_runs_total", error)] == 2
            assert samples[("reconciler_run_duration_seconds_count", (("job", "flaky"),))] == 2
            # The default failure alert fires at the second failure in a row.
            kind = (("job", "flaky"), ("kind", "failure"))
            assert samples[("reconciler_alerts_total", kind)] == 1
            assert samples[("reconciler_consecutive_failures", (("job", "flaky"),))] == 2
            assert samples[("reconciler_consecutive_failures", (("job", "steady"),))] == 0
            assert samples[("reconciler_job_running", (("job", "steady"),))] == 0
            assert samples[("reconciler_jobs", ())] == 2
            assert samples[("reconciler_ready", ())] == 1
            next_fire = samples[("reconciler_next_fire_timestamp_seconds", (("job", "steady"),))]
            assert next_fire == api.service.snapshot()["steady"].next_effective_at

    asyncio.run(scenario())


def test_scheduled_runs_record_their_lag(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with running_api(tmp_path, jobs(job("tick", {"every": "1s"}))) as api:
            await api.finished_runs("tick", 2)
            samples = await api.scrape()
            labels = (("job", "tick"),)
            assert samples[("reconciler_schedule_lag_seconds_count", labels)] >= 2
            # On an idle loop a run starts well within a second of its slot.
            assert samples[("reconciler_schedule_lag_seconds_bucket",
                            (("job", "tick"), ("le", "1.0")))] >= 2
            scheduled = (("job", "tick"), ("status", "ok"), ("trigger", "schedule"))
            assert samples[("reconciler_runs_total", scheduled)] >= 2

    asyncio.run(scenario())


def test_skips_alerts_and_failed_deliveries_are_counted(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with running_api(tmp_path, jobs(never("alpha"))) as api:
            sink = api.metrics
            sink.skipped(SkipRecord("alpha", 100.0, "overlap", 101.0))
            sink.skipped(SkipRecord("alpha", 160.0, "overlap", 161.0))
            sink.alert(Alert("alpha", 200.0, "missed", "missed a slot"))
            sink.delivery({"job": "alpha", "status": "failed", "runId": "r1"})
            sink.delivery({"job": "alpha", "status": "delivered", "runId": "r2"})
            samples = await api.scrape()
            assert samples[("reconciler_skipped_total",
                            (("job", "alpha"), ("reason", "overlap")))] == 2
            assert samples[("reconciler_alerts_total",
                            (("job", "alpha"), ("kind", "missed")))] == 1
            assert samples[("reconciler_delivery_failures_total", (("job", "alpha"),))] == 1

    asyncio.run(scenario())


def test_a_removed_job_drops_its_series_and_run_ids_never_become_labels(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with running_api(tmp_path, jobs(never("alpha"), never("beta"))) as api:
            for name in ("alpha", "beta"):
                await api.client.post(f"/api/v1/jobs/{name}/trigger", headers=AUTH)
                await api.finished_runs(name)
            samples = await api.scrape()
            label_names = {name for _, labels in samples for name, _ in labels}
            assert label_names <= {"job", "status", "trigger", "reason", "kind", "le"}
            await api.service.apply(jobs(never("alpha")))
            after = await api.scrape()
            assert not [key for key in after if ("job", "beta") in key[1]]
            assert [key for key in after if key[0] == "reconciler_runs_total"
                    and ("job", "alpha") in key[1]]
            assert after[("reconciler_jobs", ())] == 1

    asyncio.run(scenario())


def test_metrics_live_on_their_own_registry() -> None:
    first, second = MetricsSink(), MetricsSink()
    first.alert(Alert("alpha", 0.0, "failure", "x"))
    assert b'reconciler_alerts_total{job="alpha",kind="failure"} 1.0' in first.render()
    assert b"alpha" not in second.render()
    assert REGISTRY.get_sample_value("reconciler_alerts_total",
                                     {"job": "alpha", "kind": "failure"}) is None


def test_the_lag_of_an_armed_run_is_when_it_was_announced_not_its_recorded_start() -> None:
    """An armed run is recorded with its slot as its start; its lag is read from the clock
    when its start is announced (after it has begun), so a late wave still shows."""
    slot = 1_767_225_600.0

    class Clock:
        def now(self) -> float:
            return slot + 0.25

    sink = MetricsSink(clock=Clock())
    armed = RunRecord("r-1", "occ", "tick", slot, slot, trigger="schedule")
    sink.run_started(armed)
    text = sink.render().decode()
    assert 'reconciler_schedule_lag_seconds_sum{job="tick"} 0.25' in text
    assert 'reconciler_schedule_lag_seconds_bucket{job="tick",le="0.1"} 0.0' in text
