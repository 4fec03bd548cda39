"""Jobs, contexts and process checks for the command executor tests."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from reconciler.executors.base import RunContext, RunResult
from reconciler.executors.command import CommandExecutor
from reconciler.model.job import ScheduledJob
from reconciler.model.state import Trigger

SCHEDULED = 1_780_000_000.0  # 2026-05-28T20:26:40Z
GRACE = 0.3


def job(run: dict[str, Any], name: str = "sample") -> ScheduledJob:
    return ScheduledJob.model_validate({
        "apiVersion": "reconciler.dev/v1", "kind": "ScheduledJob",
        "metadata": {"name": name}, "spec": {"schedule": {"every": "1h"}, "run": run}})


def context(run: dict[str, Any], scheduled_at: float | None = SCHEDULED, attempt: int = 1,
            trigger: Trigger = "schedule") -> RunContext:
    return RunContext(job(run), "run-1", "occ-1", scheduled_at, SCHEDULED + 2, attempt,
                      trigger, timeout=None)


def execute(run: dict[str, Any], executor: CommandExecutor | None = None,
            **kwargs: Any) -> RunResult:
    executor = executor or CommandExecutor(grace=GRACE)
    return asyncio.run(executor.execute(context(run, **kwargs)))


def sh(script: str, **run: Any) -> dict[str, Any]:
    return {"command": ["/bin/sh", "-c", script], **run}


def read_pid(path: Path) -> int:
    return int(path.read_text().strip())


def _stat(pid: int) -> list[str] | None:
    """State, ppid, ... of ``pid`` from /proc, or None when no such process exists."""
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def assert_reaped(pid: int) -> None:
    """Our own child: dead and waited for, so not even a zombie is left."""
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # no such child: it was reaped
    assert _stat(pid) is None, f"{pid} still exists: {_stat(pid)}"


def assert_gone(pid: int) -> None:
    """A grandchild: dead. Orphans belong to init, and an init that never reaps (as in some
    containers) leaves them zombies, which are dead all the same but not ours to reap."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return
    stat = _stat(pid)
    assert stat is not None and stat[0] == "Z", f"{pid} is still running: {stat}"
    assert int(stat[1]) != os.getpid(), f"{pid} is a zombie child of ours"
