"""Property: any mix of OpenClaw's legacy shapes imports without raising, and every job is
accounted for: imported as a spec that validates, or reported with a reason."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reconciler.model.job import ScheduledJob
from reconciler.sources.openclaw.importer import import_store
from reconciler.sources.openclaw.normalize import NormalizeContext, normalize_job
from tests.openclaw.conftest import NOW

MS = st.integers(1_700_000_000_000, 1_800_000_000_000)
SCHEDULES = st.one_of(
    st.sampled_from(["0 9 * * *", " */15 * * * * ", "0 0 12 * * *", "0 8 * * 1-5"]),
    st.fixed_dictionaries({"kind": st.just("cron"), "expr": st.sampled_from(
        ["0 * * * *", "30 6 * * *"])}, optional={"tz": st.sampled_from(
            ["UTC", "Asia/Shanghai", "Nowhere/Land"]), "staggerMs": st.integers(0, 600_000)}),
    st.fixed_dictionaries({"cron": st.just("5 4 * * *")}),
    st.fixed_dictionaries({"kind": st.just("every"), "everyMs": st.one_of(
        st.integers(1, 10**8), st.floats(1000, 10**8))}, optional={"anchorMs": MS}),
    st.fixed_dictionaries({"atMs": st.one_of(MS, MS.map(str))}),
    st.fixed_dictionaries({"kind": st.just("at"), "at": st.sampled_from(
        ["2026-06-01T09:00:00+08:00", "2026-07-01", "not a date"])}),
)
PAYLOADS = st.one_of(
    st.fixed_dictionaries({"kind": st.sampled_from(["systemEvent", "systemevent"]),
                           "text": st.text(max_size=30)}),
    st.fixed_dictionaries({"kind": st.sampled_from(["agentTurn", "AgentTurn"]),
                           "message": st.text(max_size=30)},
                          optional={"model": st.text(max_size=10),
                                    "thinking": st.just("high"),
                                    "timeoutSeconds": st.floats(0, 10_000)}),
    st.fixed_dictionaries({"message": st.text(min_size=1, max_size=10)}),
)
DELIVERIES = st.fixed_dictionaries({}, optional={
    "mode": st.sampled_from(["announce", "deliver", "webhook", "none", None]),
    "channel": st.sampled_from(["telegram", "slack", "whatsapp", "last", "Discord"]),
    "to": st.sampled_from(["-100123", "C01", "https://h.example/x", ""]),
    "threadId": st.integers(1, 9),
})
JOBS = st.fixed_dictionaries(
    {"schedule": SCHEDULES},
    optional={
        "id": st.text(max_size=12), "jobId": st.text(max_size=12),
        "name": st.text(max_size=40), "enabled": st.sampled_from([True, False, "false", 1]),
        "payload": PAYLOADS, "text": st.text(max_size=20), "message": st.text(max_size=20),
        "command": st.text(max_size=20), "model": st.just("m"), "provider": st.just("Slack"),
        "deliver": st.booleans(), "to": st.just("C09"), "delivery": DELIVERIES,
        "failureAlert": st.one_of(st.just(False), st.fixed_dictionaries(
            {}, optional={"after": st.integers(0, 5), "cooldownMs": st.integers(-5, 10**7),
                          "channel": st.just("telegram"), "to": st.just("-1")})),
        "notify": st.booleans(), "isolation": st.just({"x": 1}),
        "sessionTarget": st.sampled_from(["main", "ISOLATED", "current", "session: s1", "?"]),
        "state": st.one_of(st.just("junk"), st.fixed_dictionaries({}, optional={
            "nextRunAtMs": st.one_of(MS, st.just(0)), "lastRunAtMs": MS,
            "lastStatus": st.sampled_from(["ok", "error", "skipped", "weird"]),
            "consecutiveErrors": st.integers(0, 9), "runningAtMs": MS})),
        "createdAtMs": MS,
    },
)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(JOBS, min_size=1, max_size=6))
def test_every_job_is_imported_or_reported(tmp_path: Path, jobs: list[dict[str, Any]]) -> None:
    store = tmp_path / "jobs.json"
    store.write_text(json.dumps({"version": 1, "jobs": jobs}))
    result = import_store(store, NOW)
    assert len(result.jobs) == len(jobs)
    assert len({job.name for job in result.jobs}) == len(jobs)
    for job in result.jobs:
        if job.document is None:
            assert job.error
        else:
            ScheduledJob.model_validate(job.document)
            assert job.state is not None and job.state.job_state.name == job.name


@given(JOBS)
def test_normalising_twice_equals_once(job: dict[str, Any]) -> None:
    once, _ = normalize_job(job, NormalizeContext())
    twice, applied = normalize_job(once, NormalizeContext())
    assert twice == once
    assert applied == []
