"""POST /api/v1/jobs/{name}/trigger over real HTTP: the bearer token, and each outcome."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

import pytest

from reconciler.errors import UsageError
from reconciler.executors.scripted import ScriptedExecutor, ScriptedOutcome
from reconciler.runtime.http import build_app
from tests.engine.helpers import jobs
from tests.http.harness import TOKEN, never, running_api

AUTH = {"Authorization": f"Bearer {TOKEN}"}


def test_trigger_needs_the_right_bearer_token(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with running_api(tmp_path, jobs(never("alpha"))) as api:
            refusals = [
                {},
                {"Authorization": "Bearer wrong-token"},
                {"Authorization": f"Bearer {TOKEN}x"},
                {"Authorization": f"Basic {TOKEN}"},
                {"Authorization": TOKEN},
                {"Authorization": "Bearer"},
            ]
            for headers in refusals:
                response = await api.client.post("/api/v1/jobs/alpha/trigger", headers=headers)
                assert response.status_code == 401, headers
                assert response.headers["www-authenticate"].startswith("Bearer")
                assert "token" in response.json()["error"]
            # Refused without a trace: nothing ran.
            assert api.writer.runs("alpha") == []
            # The scheme is case-insensitive (RFC 6750).
            lower = {"Authorization": f"bearer {TOKEN}"}
            accepted = await api.client.post("/api/v1/jobs/alpha/trigger", headers=lower)
            assert accepted.status_code == 202

    asyncio.run(scenario())


def test_without_a_configured_token_trigger_is_disabled(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with running_api(tmp_path, jobs(never("alpha")), token=None) as api:
            for headers in ({}, AUTH, {"Authorization": "Bearer"}):
                response = await api.client.post("/api/v1/jobs/alpha/trigger", headers=headers)
                assert response.status_code == 403
                assert response.json() == {
                    "error": "trigger over HTTP is disabled: set a token"}
            assert api.writer.runs("alpha") == []
            # Reads still work without a token.
            assert (await api.client.get("/api/v1/jobs")).status_code == 200

    asyncio.run(scenario())


def test_an_empty_token_is_refused_at_build_time() -> None:
    with pytest.raises(UsageError, match="token is empty"):
        build_app(object(), token=" \n", now=lambda: 0.0)  # type: ignore[arg-type]


def test_a_token_file_newline_is_ignored(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with running_api(tmp_path, jobs(never("alpha")), token=f"{TOKEN}\n") as api:
            response = await api.client.post("/api/v1/jobs/alpha/trigger", headers=AUTH)
            assert response.status_code == 202

    asyncio.run(scenario())


def test_a_triggered_run_is_accepted_and_appears_in_history(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with running_api(tmp_path, jobs(never("alpha"))) as api:
            response = await api.client.post("/api/v1/jobs/alpha/trigger", headers=AUTH)
            assert response.status_code == 202
            body = response.json()
            assert body["job"] == "alpha" and body["status"] == "started" and body["runId"]
            (run,) = await api.finished_runs("alpha")
            assert run["runId"] == body["runId"]
            assert run["trigger"] == "manual" and run["status"] == "ok"
            status = (await api.client.get("/api/v1/jobs/alpha")).json()
            assert status["lastStatus"] == "ok" and status["running"] is None
            # A manual run never moves the schedule.
            assert status["nextRunAt"] == "2099-01-01T00:00:00Z"

    asyncio.run(scenario())


def test_unknown_job_is_404_and_running_job_is_409(tmp_path: Path) -> None:
    slow = ScriptedExecutor({"slow": [ScriptedOutcome(duration=timedelta(seconds=30))]})

    async def scenario() -> None:
        async with running_api(tmp_path, jobs(never("slow")), executor=slow) as api:
            unknown = await api.client.post("/api/v1/jobs/nope/trigger", headers=AUTH)
            assert unknown.status_code == 404 and unknown.json()["status"] == "unknown-job"
            assert unknown.json()["error"] == "no job named 'nope'"
            first = await api.client.post("/api/v1/jobs/slow/trigger", headers=AUTH)
            assert first.status_code == 202
            running = (await api.client.get("/api/v1/jobs/slow")).json()["running"]
            assert running["runId"] == first.json()["runId"]
            again = await api.client.post("/api/v1/jobs/slow/trigger", headers=AUTH)
            assert again.status_code == 409
            assert again.json()["status"] == "already-running"
            assert "in progress" in again.json()["message"]

    asyncio.run(scenario())


def test_a_suspended_job_runs_only_with_force(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with running_api(tmp_path, jobs(never("paused", suspend=True))) as api:
            refused = await api.client.post("/api/v1/jobs/paused/trigger", headers=AUTH)
            assert refused.status_code == 409 and refused.json()["status"] == "suspended"
            bad = await api.client.post("/api/v1/jobs/paused/trigger?force=maybe",
                                        headers=AUTH)
            assert bad.status_code == 400 and "force" in bad.json()["error"]
            forced = await api.client.post("/api/v1/jobs/paused/trigger?force=true",
                                           headers=AUTH)
            assert forced.status_code == 202 and forced.json()["status"] == "started"
            (run,) = await api.finished_runs("paused")
            assert run["status"] == "ok"

    asyncio.run(scenario())


def test_trigger_only_answers_post(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with running_api(tmp_path, jobs(never("alpha"))) as api:
            response = await api.client.get("/api/v1/jobs/alpha/trigger", headers=AUTH)
            assert response.status_code == 405
            assert api.writer.runs("alpha") == []

    asyncio.run(scenario())
