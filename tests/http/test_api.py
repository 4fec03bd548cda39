"""The JSON API over real HTTP: every read endpoint, health, readiness, and errors."""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path

from reconciler.core.timefmt import iso_utc
from tests.engine.helpers import at, job, jobs
from tests.http.harness import never, running_api


def test_jobs_and_one_job_answer_the_status_shape(tmp_path: Path) -> None:
    desired = jobs(never("alpha"), job("beta", {"cron": "30 9 * * *",
                                                 "timezone": "Asia/Shanghai"}))

    async def scenario() -> None:
        async with running_api(tmp_path, desired) as api:
            listing = (await api.client.get("/api/v1/jobs")).json()
            assert [row["name"] for row in listing["jobs"]] == ["alpha", "beta"]
            beta = listing["jobs"][1]
            for field in ("name", "suspended", "schedule", "nextRunAt", "lastRunAt",
                          "lastStatus", "consecutiveErrors", "running"):
                assert field in beta
            assert beta["schedule"] is not None and beta["running"] is None
            state = api.service.snapshot()["beta"]
            assert beta["nextRunAt"] == iso_utc(state.next_effective_at)
            one = await api.client.get("/api/v1/jobs/alpha")
            assert one.status_code == 200
            assert one.json()["nextRunAt"] == "2099-01-01T00:00:00Z"

    asyncio.run(scenario())


def test_unknown_job_and_unknown_path_are_json_404s(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with running_api(tmp_path, jobs(never("alpha"))) as api:
            for path in ("/api/v1/jobs/nope", "/api/v1/jobs/nope/runs",
                         "/api/v1/jobs/nope/next", "/api/v1/nothing-here"):
                response = await api.client.get(path)
                assert response.status_code == 404, path
                assert "error" in response.json()
            assert "'nope'" in (await api.client.get("/api/v1/jobs/nope")).json()["error"]
            wrong_method = await api.client.delete("/api/v1/jobs/alpha")
            assert wrong_method.status_code == 405 and "error" in wrong_method.json()

    asyncio.run(scenario())


def test_next_lists_upcoming_fires_in_utc_and_the_job_zone(tmp_path: Path) -> None:
    desired = jobs(job("daily", {"cron": "30 9 * * *", "timezone": "Asia/Shanghai"}),
                   never("once"))

    async def scenario() -> None:
        async with running_api(tmp_path, desired) as api:
            body = (await api.client.get("/api/v1/jobs/daily/next?count=3")).json()
            assert body["name"] == "daily" and body["timezone"] == "Asia/Shanghai"
            fires = body["next"]
            assert len(fires) == 3
            assert all(fire["local"].endswith("T09:30:00+08:00") for fire in fires)
            assert all(fire["at"].endswith("T01:30:00Z") == fire["nominal"].endswith(
                "T01:30:00Z") for fire in fires)
            assert fires == sorted(fires, key=lambda fire: fire["at"])
            # The first fire is the one the engine holds pending, the rest follow the grid.
            pending = api.service.snapshot()["daily"].next_effective_at
            assert fires[0]["at"] == iso_utc(pending)
            default = (await api.client.get("/api/v1/jobs/daily/next")).json()
            assert len(default["next"]) == 5
            once = (await api.client.get("/api/v1/jobs/once/next?count=4")).json()
            assert once["next"] == [{"at": "2099-01-01T00:00:00Z",
                                     "nominal": "2099-01-01T00:00:00Z",
                                     "local": "2099-01-01T00:00:00+00:00"}]

    asyncio.run(scenario())


def test_bad_limit_and_count_are_400_with_a_message(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with running_api(tmp_path, jobs(never("alpha"))) as api:
            for query in ("limit=0", "limit=-3", "limit=abc", "limit=1001", "limit=2.5"):
                response = await api.client.get(f"/api/v1/jobs/alpha/runs?{query}")
                assert response.status_code == 400, query
                assert "limit must be a whole number from 1 to 1000" in response.json()["error"]
            response = await api.client.get("/api/v1/jobs/alpha/next?count=0")
            assert response.status_code == 400
            assert "count" in response.json()["error"]
            ok = await api.client.get("/api/v1/jobs/alpha/runs?limit=1000")
            assert ok.status_code == 200

    asyncio.run(scenario())


def test_readyz_is_503_until_the_first_reconcile_and_healthz_answers_throughout(
    tmp_path: Path,
) -> None:
    async def scenario() -> None:
        async with running_api(tmp_path, jobs(never("alpha")), started=False) as api:
            assert (await api.client.get("/healthz")).status_code == 200
            before = await api.client.get("/readyz")
            assert before.status_code == 503 and "not ready" in before.json()["error"]
            assert (await api.client.get("/api/v1/jobs")).json() == {"jobs": []}
            await api.start()
            after = await api.client.get("/readyz")
            assert after.status_code == 200 and after.json() == {"status": "ready", "jobs": 1}
            assert (await api.client.get("/healthz")).json() == {"status": "ok"}

    asyncio.run(scenario())


def test_healthz_is_503_once_the_loop_has_stopped(tmp_path: Path) -> None:
    loop_runs = [True]

    async def scenario() -> None:
        async with running_api(tmp_path, jobs(never("alpha")), alive=lambda: loop_runs[0]) as api:
            assert (await api.client.get("/healthz")).status_code == 200
            loop_runs[0] = False
            response = await api.client.get("/healthz")
            assert response.status_code == 503
            assert response.json() == {"error": "the reconcile loop has stopped"}

    asyncio.run(scenario())


def test_reads_are_served_while_the_writer_lock_is_held(tmp_path: Path) -> None:
    async def scenario() -> None:
        # Held as a long apply or a landing batch would hold it.
        async with running_api(tmp_path, jobs(never("alpha"))) as api, api.service.lock:
            for path in ("/api/v1/jobs", "/api/v1/jobs/alpha", "/api/v1/jobs/alpha/runs",
                         "/api/v1/jobs/alpha/next", "/healthz", "/readyz", "/metrics"):
                response = await asyncio.wait_for(api.client.get(path), timeout=5)
                assert response.status_code == 200, path

    asyncio.run(scenario())


def test_runs_are_newest_first_and_limited(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with running_api(tmp_path, jobs(never("alpha"))) as api:
            for expected in (1, 2, 3):
                assert (await api.service.trigger("alpha")).status == "started"
                await api.finished_runs("alpha", expected)
            body = (await api.client.get("/api/v1/jobs/alpha/runs?limit=2")).json()
            assert body["job"] == "alpha" and body["skipped"] == []
            runs = body["runs"]
            assert len(runs) == 2
            assert runs[0]["startedAt"] >= runs[1]["startedAt"]
            assert {run["trigger"] for run in runs} == {"manual"}
            assert {run["status"] for run in runs} == {"ok"}
            assert runs[0]["scheduledAt"] is None

    asyncio.run(scenario())


def test_a_removed_job_is_gone_from_the_api(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with running_api(tmp_path, jobs(never("alpha"), never("beta"))) as api:
            await api.service.apply(jobs(never("alpha")))
            names = [row["name"] for row in (await api.client.get("/api/v1/jobs")).json()["jobs"]]
            assert names == ["alpha"]
            assert (await api.client.get("/api/v1/jobs/beta")).status_code == 404

    asyncio.run(scenario())


def test_interval_fires_are_ahead_and_on_the_anchored_grid(tmp_path: Path) -> None:
    desired = jobs(job("often", {"every": "1h", "anchor": "2026-01-01T00:00:00Z"}))

    async def scenario() -> None:
        async with running_api(tmp_path, desired) as api:
            fires = (await api.client.get("/api/v1/jobs/often/next?count=3")).json()["next"]
            starts = [at(fire["at"].removesuffix("Z")) for fire in fires]
            assert starts[0] > api.service.clock.now()
            assert all(start % 3600 == 0 for start in starts)
            assert [b - a for a, b in itertools.pairwise(starts)] == [3600, 3600]

    asyncio.run(scenario())
