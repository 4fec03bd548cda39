"""Reads never write: status, history, plan, next and simulate leave every byte and mtime of
the state directory as it was, and a past-due job read at a past-due instant still runs."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from reconciler.cli import main
from reconciler.executors.scripted import ScriptedExecutor
from reconciler.runtime.events import CollectingSink
from reconciler.runtime.service import Service
from reconciler.runtime.virtual import LoopClock, run_virtual
from reconciler.sources.directory import DirectorySource
from reconciler.sources.speccache import CACHE_FILE
from reconciler.store import StateWriter
from tests.engine.helpers import at, job, jobs

SPEC = """\
apiVersion: reconciler.dev/v1
kind: ScheduledJob
metadata: {name: hourly}
spec:
  schedule: {every: 1h, anchor: "2026-01-05T08:00:00Z"}
  run: {command: ["true"]}
"""


def _fingerprint(directory: Path) -> dict[str, tuple[bytes, int, int]]:
    return {
        str(path.relative_to(directory)): (path.read_bytes(), path.stat().st_mtime_ns,
                                           path.stat().st_mode)
        for path in sorted(directory.rglob("*")) if path.is_file()
    }


@pytest.fixture()
def state_with_history(tmp_path: Path) -> Path:
    """A state whose job last ran at 09:00 and is due again at 10:00 (now long past due)."""
    state = tmp_path / "state"

    async def build() -> None:
        start = at("2026-01-05T08:59:00")
        with StateWriter.open(state, now=start) as writer:
            service = Service(writer, LoopClock(asyncio.get_running_loop(), start),
                              ScriptedExecutor({}))
            await service.start(jobs(job("hourly", {"every": "1h",
                                                     "anchor": "2026-01-05T08:00:00Z"})))
            stop = asyncio.Event()
            timer = asyncio.ensure_future(service.run_forever(stop))
            await asyncio.sleep(120)
            stop.set()
            await timer

    run_virtual(build())
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "hourly.yaml").write_text(SPEC)
    # The spec parse cache a daemon leaves next to its state: reads must not touch it either.
    DirectorySource(tmp_path / "specs", cache_path=state / CACHE_FILE).load(
        at("2026-01-05T10:30:00"))
    assert (state / CACHE_FILE).exists()
    return state


READS = [
    ["status", "--format", "json"],
    ["status", "hourly"],
    ["history", "hourly", "--format", "json"],
    ["plan", "--format", "json"],
    ["simulate", "--from", "2026-01-05T10:00:00Z", "--until", "2026-01-06T10:00:00Z"],
]


@pytest.mark.parametrize("argv", READS, ids=lambda argv: " ".join(argv[:2]))
def test_read_commands_change_no_byte_and_no_mtime(
    argv: list[str], state_with_history: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    specs = state_with_history.parent / "specs"
    before = _fingerprint(state_with_history)
    extra = ["--state", str(state_with_history)]
    if argv[0] in ("plan", "status", "simulate"):
        extra += ["--specs", str(specs)]
    assert main([*argv, *extra]) == 0
    capsys.readouterr()
    assert _fingerprint(state_with_history) == before


def test_next_reads_only_the_specs(state_with_history: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    before = _fingerprint(state_with_history)
    assert main(["next", str(state_with_history.parent / "specs"), "--format", "json"]) == 0
    capsys.readouterr()
    assert _fingerprint(state_with_history) == before


def test_status_at_a_past_due_instant_changes_nothing_and_the_job_still_runs(
    state_with_history: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _fingerprint(state_with_history)
    for _ in range(3):
        assert main(["status", "--format", "json", "--state", str(state_with_history)]) == 0
        (row,) = json.loads(capsys.readouterr().out)["jobs"]
        assert row["nextRunAt"] == "2026-01-05T10:00:00Z"  # long past: still pending
        assert row["lastRunAt"] == "2026-01-05T09:00:00Z"
    assert _fingerprint(state_with_history) == before

    async def restart() -> CollectingSink:
        start = at("2026-01-05T10:30:00")
        sink = CollectingSink()
        with StateWriter.open(state_with_history, now=start) as writer:
            service = Service(writer, LoopClock(asyncio.get_running_loop(), start),
                              ScriptedExecutor({}), sink=sink)
            await service.start(jobs(job("hourly", {"every": "1h",
                                                     "anchor": "2026-01-05T08:00:00Z"})))
            await service.tick()
            await asyncio.sleep(1)
        return sink

    sink = run_virtual(restart())
    (run,) = sink.finished
    assert (run.scheduled_at, run.trigger, run.status) == (at("2026-01-05T10:00:00"),
                                                            "catchup", "ok")


def test_a_reader_creates_nothing_where_there_is_no_state(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "absent"
    assert main(["status", "--state", str(missing)]) == 0
    assert "no jobs" in capsys.readouterr().out
    assert not missing.exists()
    assert not os.listdir(tmp_path)
