"""The daemon end to end, as a real process over a git repository of specs."""

from __future__ import annotations

import stat
import time
from pathlib import Path
from typing import Any

from reconciler.sources.speccache import CACHE_FILE, SpecCache, content_digest
from tests.daemon.harness import (
    DaemonProcess,
    cli_json,
    commit,
    init_repo,
    job_yaml,
    running,
    wait_for,
)


def _runs(state: Path, job: str) -> list[dict[str, Any]]:
    runs: list[dict[str, Any]] = cli_json("history", job, "--state", str(state),
                                          "--limit", "200")["runs"]
    return runs


def _finished(state: Path, job: str) -> list[dict[str, Any]]:
    return [run for run in _runs(state, job) if run["status"] != "running"]


def _status(state: Path, specs: Path) -> dict[str, Any]:
    status: dict[str, Any] = cli_json("status", "--state", str(state), "--specs", str(specs))
    return status


def test_commits_add_edit_break_and_delete_a_job(tmp_path: Path) -> None:
    repo, state = tmp_path / "repo", tmp_path / "state"
    init_repo(repo)
    with running(repo, state, tmp_path / "daemon.log"):
        (repo / "ping.yaml").write_text(job_yaml("ping", "2s", ["echo", "v1"]))
        first = commit(repo, "add ping")
        # A new job every 2 s runs within 5 s of its commit.
        wait_for(lambda: [r for r in _runs(state, "ping") if r["status"] == "ok"], 5,
                 "the new job's first run")
        status = _status(state, repo)
        (ping,) = status["jobs"]
        assert ping["sourceRevision"] == first and status["source"]["revision"] == first

        (repo / "ping.yaml").write_text(job_yaml("ping", "2s", ["echo", "v2"]))
        second = commit(repo, "edit ping")
        wait_for(lambda: [r for r in _finished(state, "ping") if r["summary"] == "v2"], 8,
                 "the edited command to run")
        # The reload kept the parse of the edited file in the state directory's cache.
        cached = SpecCache.read(state / CACHE_FILE)
        assert content_digest((repo / "ping.yaml").read_bytes()) in cached and len(cached) == 1
        assert stat.S_IMODE((state / CACHE_FILE).stat().st_mode) == 0o600

        (repo / "ping.yaml").write_text("apiVersion: reconciler.dev/v1\nkind: ScheduledJob\n"
                                        "metadata: {name: ping\nspec: [broken\n")
        commit(repo, "break ping")
        broken = wait_for(lambda: (s := _status(state, repo))["source"]["errors"] and s, 8,
                          "the spec error in status")
        (ping,) = broken["jobs"]
        assert "last good spec in use" in ping["specError"]
        assert broken["source"]["errors"][0]["file"].endswith("ping.yaml")
        seen = len(_finished(state, "ping"))
        wait_for(lambda: len(_finished(state, "ping")) >= seen + 2, 8,
                 "the last good spec to keep running")
        assert all(r["summary"] == "v2" for r in _finished(state, "ping")[:2])
        assert ping["sourceRevision"] == second

        (repo / "ping.yaml").unlink()
        commit(repo, "delete ping")
        wait_for(lambda: not _status(state, repo)["jobs"], 8, "the job to be removed")
        assert len(SpecCache.read(state / CACHE_FILE)) == 0  # its entry went with it
        settled = len(_runs(state, "ping"))
        wait_for(lambda: _status(state, repo)["source"]["errors"] == [], 3, "a clean source")
        time.sleep(3)  # longer than the job's 2 s interval
        assert len(_runs(state, "ping")) == settled  # it no longer runs


def test_sigterm_during_a_long_run_interrupts_it_and_the_next_start_catches_up(
    tmp_path: Path,
) -> None:
    specs, state = tmp_path / "specs", tmp_path / "state"
    specs.mkdir()
    (specs / "long.yaml").write_text(job_yaml("long", "3s", ["sleep", "30"], timeout="1m"))
    daemon = DaemonProcess(specs, state, tmp_path / "daemon.log")
    try:
        daemon.wait_started()
        wait_for(lambda: [r for r in _runs(state, "long") if r["status"] == "running"], 8,
                 "the long run to start")
        code = daemon.terminate(timeout=10)  # grace is 1 s
    finally:
        daemon.kill()
    assert code == 0
    (run,) = _runs(state, "long")
    assert run["status"] == "interrupted"
    assert "shut down" in run["error"]
    # Stay down (real time: this is a real process) long enough to miss two 3 s slots; the
    # next start catches up per the default policy, latest.
    time.sleep(7)
    with running(specs, state, tmp_path / "daemon2.log"):
        caught = wait_for(lambda: [r for r in _runs(state, "long") if r["trigger"] == "catchup"],
                          8, "the catch-up run")
        assert caught
    skipped = cli_json("history", "long", "--state", str(state))["skipped"]
    assert {s["reason"] for s in skipped} == {"catchup-latest"}


def test_a_second_daemon_on_the_same_state_exits_1_and_the_first_is_unharmed(
    tmp_path: Path,
) -> None:
    specs, state = tmp_path / "specs", tmp_path / "state"
    specs.mkdir()
    (specs / "tick.yaml").write_text(job_yaml("tick", "1s", ["true"]))
    with running(specs, state, tmp_path / "first.log") as first:
        second = DaemonProcess(specs, state, tmp_path / "second.log")
        assert second.process.wait(timeout=15) == 1
        second.kill()
        message = (tmp_path / "second.log").read_text()
        assert "Traceback" not in message
        assert str(first.process.pid) in message and "another" in message.lower()
        before = len(_runs(state, "tick"))
        wait_for(lambda: len(_runs(state, "tick")) > before + 1, 5, "the first to keep running")


def test_trigger_with_and_without_a_daemon(tmp_path: Path) -> None:
    specs, state = tmp_path / "specs", tmp_path / "state"
    specs.mkdir()
    (specs / "report.yaml").write_text(job_yaml("report", "1h", ["echo", "done"]))
    alone = cli_json("trigger", "report", "--state", str(state), "--specs", str(specs))
    assert alone["status"] == "ok" and alone["via"] == "foreground"
    assert alone["summary"] == "done"
    with running(specs, state, tmp_path / "daemon.log"):
        answer = cli_json("trigger", "report", "--state", str(state), "--specs", str(specs))
        assert answer["status"] == "started" and answer["via"] == "daemon"
        wait_for(lambda: len([r for r in _runs(state, "report") if r["status"] == "ok"]) == 2,
                 5, "the triggered run")
    assert {r["trigger"] for r in _runs(state, "report")} == {"manual"}


def test_http_api_and_metrics_against_the_running_daemon(tmp_path: Path) -> None:
    import httpx

    specs, state = tmp_path / "specs", tmp_path / "state"
    specs.mkdir()
    (specs / "tick.yaml").write_text(job_yaml("tick", "1s", ["echo", "hi"]))
    token = tmp_path / "token"
    token.write_text("s3cret\n")
    log = tmp_path / "daemon.log"
    with running(specs, state, log, "--http", "127.0.0.1:0", "--http-token-file",
                 str(token)) as daemon:
        url = wait_for(lambda: next((e["url"] for e in daemon.lines()
                                     if e.get("event") == "http"), None), 10, "the HTTP API")
        with httpx.Client(base_url=url, timeout=5) as client:
            assert client.get("/healthz").status_code == 200
            wait_for(lambda: client.get("/readyz").status_code == 200, 5, "readiness")
            # A finished run (an armed run is listed "running" from just before its slot).
            wait_for(lambda: [run for run in client.get("/api/v1/jobs/tick/runs").json()["runs"]
                              if run["status"] != "running"], 5, "a finished run over HTTP")
            jobs = client.get("/api/v1/jobs").json()["jobs"]
            assert [job["name"] for job in jobs] == ["tick"]
            assert client.get("/api/v1/jobs/nope").status_code == 404
            fires = client.get("/api/v1/jobs/tick/next", params={"count": 3}).json()
            assert len(fires["next"]) == 3
            metrics = client.get("/metrics").text
            assert 'reconciler_runs_total{' in metrics and 'job="tick"' in metrics
            assert client.post("/api/v1/jobs/tick/trigger").status_code == 401
            wrong = {"Authorization": "Bearer nope"}
            assert client.post("/api/v1/jobs/tick/trigger", headers=wrong).status_code == 401
            right = {"Authorization": "Bearer s3cret"}
            answer = client.post("/api/v1/jobs/tick/trigger", headers=right)
            assert answer.status_code in (202, 409), answer.text
    assert daemon.process.returncode is not None


def test_git_url_clones_and_fast_forwards_the_specs(tmp_path: Path) -> None:
    from tests.daemon.harness import git

    origin, work = tmp_path / "origin.git", tmp_path / "work"
    origin.mkdir()
    git(origin, "init", "-q", "--bare", "-b", "main")
    init_repo(work)
    git(work, "remote", "add", "origin", str(origin))
    (work / "ping.yaml").write_text(job_yaml("ping", "1s", ["echo", "first"]))
    commit(work, "add ping")
    git(work, "push", "-q", "origin", "main")
    checkout, state = tmp_path / "checkout", tmp_path / "state"
    with running(checkout, state, tmp_path / "daemon.log", "--git-url", str(origin),
                 "--git-ref", "main", "--git-interval", "1s"):
        wait_for(lambda: [r for r in _finished(state, "ping") if r["summary"] == "first"], 8,
                 "the cloned job to run")
        (work / "ping.yaml").write_text(job_yaml("ping", "1s", ["echo", "second"]))
        pushed = commit(work, "edit ping")
        git(work, "push", "-q", "origin", "main")
        wait_for(lambda: [r for r in _finished(state, "ping") if r["summary"] == "second"], 10,
                 "the fast-forwarded edit to run")
        status = _status(state, checkout)
        assert status["source"]["revision"] == pushed
        assert status["jobs"][0]["sourceRevision"] == pushed


def test_bad_settings_are_usage_errors_before_anything_starts(tmp_path: Path) -> None:
    import subprocess
    import sys

    specs, state = tmp_path / "specs", tmp_path / "state"
    specs.mkdir()
    for extra, code, words in [
        (["--http", "nope:x"], 2, "invalid listen address"),
        (["--max-concurrent-runs", "0"], 2, "must be at least 1"),
        (["--shutdown-grace", "soon"], 2, "invalid duration"),
        (["--arm-ahead", "1m"], 2, "must be at most 10s"),
        (["--specs", str(tmp_path / "missing")], 1, "does not exist"),
    ]:
        argv = [sys.executable, "-m", "reconciler", "run", "--specs", str(specs),
                "--state", str(state), *extra]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        assert done.returncode == code, done.stderr
        assert words in done.stderr and "Traceback" not in done.stderr
    assert not (state / "control.sock").exists()
