"""Timeouts and the kill sequence with real processes (issue 6: a process test proves the
kill: the whole group gone after the grace period, no zombie left)."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from reconciler.executors.base import RunResult
from reconciler.executors.command import CommandExecutor
from tests.executors.command_support import (
    GRACE,
    assert_gone,
    assert_reaped,
    context,
    read_pid,
    sh,
)


async def _run_with_timeout(run: dict[str, Any], timeout: float,
                            grace: float = GRACE) -> tuple[RunResult | None, float]:
    loop = asyncio.get_running_loop()
    start = loop.time()
    try:
        result: RunResult | None = await asyncio.wait_for(
            CommandExecutor(grace=grace).execute(context(run)), timeout)
    except TimeoutError:
        result = None
    return result, loop.time() - start


def test_a_timeout_is_the_full_duration_never_earlier() -> None:
    result, elapsed = asyncio.run(_run_with_timeout(sh("sleep 0.3; echo done"), 1.0))
    assert result is not None and result.status == "ok" and result.summary == "done"
    assert 0.3 <= elapsed < 1.0
    cancelled, elapsed = asyncio.run(_run_with_timeout(sh("sleep 2"), 0.5))
    assert cancelled is None
    assert 0.5 <= elapsed < 0.5 + GRACE + 1.0  # sleep dies on SIGTERM, well before 2 s


def test_the_kill_takes_a_grandchild_that_ignores_sigterm(tmp_path: Path) -> None:
    """issue 6: the whole group is gone after the grace period and nothing is left a zombie."""
    script = (f'trap "" TERM; echo $$ > {tmp_path}/child; '
              f'sleep 60 & echo $! > {tmp_path}/grandchild; wait')
    result, elapsed = asyncio.run(_run_with_timeout(sh(script), 0.5))
    assert result is None
    assert 0.5 + GRACE <= elapsed < 0.5 + GRACE + 1.5  # SIGTERM ignored: SIGKILL after grace
    child, grandchild = read_pid(tmp_path / "child"), read_pid(tmp_path / "grandchild")
    assert_reaped(child)
    assert_gone(grandchild)


def test_the_kill_takes_a_grandchild_that_holds_the_pipes_after_the_child_died(
        tmp_path: Path) -> None:
    script = (f'python3 -c "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN);'
              f' time.sleep(60)" & echo $! > {tmp_path}/grandchild; echo $$ > {tmp_path}/child;'
              f' wait')
    result, elapsed = asyncio.run(_run_with_timeout(sh(script), 0.5))
    assert result is None and elapsed < 0.5 + GRACE + 1.5
    assert_reaped(read_pid(tmp_path / "child"))
    assert_gone(read_pid(tmp_path / "grandchild"))


def test_a_second_cancel_during_the_grace_period_kills_at_once(tmp_path: Path) -> None:
    script = f'trap "" TERM; echo $$ > {tmp_path}/child; sleep 60 & wait'

    async def scenario() -> float:
        loop = asyncio.get_running_loop()
        task = asyncio.ensure_future(CommandExecutor(grace=30).execute(context(sh(script))))
        while not (tmp_path / "child").exists():
            await asyncio.sleep(0.02)
        task.cancel()
        await asyncio.sleep(0.2)  # now inside the 30 s grace period
        start = loop.time()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return loop.time() - start

    assert asyncio.run(scenario()) < 1.0
    # SIGKILL went to the group; the loop's child watcher reaps the leader as it lands.
    child = read_pid(tmp_path / "child")
    for _ in range(50):
        if not Path(f"/proc/{child}").exists():
            break
        time.sleep(0.02)
    assert_reaped(child)


def test_processes_left_behind_by_a_finished_job_are_stopped(tmp_path: Path) -> None:
    script = f"sleep 60 & echo $! > {tmp_path}/grandchild; echo finished"
    result, elapsed = asyncio.run(_run_with_timeout(sh(script), 10))
    assert result is not None and result.status == "ok" and result.summary == "finished"
    assert result.output is not None and "left processes behind" in result.output
    assert elapsed < 1.0 + GRACE + 1.0
    assert_gone(read_pid(tmp_path / "grandchild"))


def test_a_leftover_that_ignores_sigterm_and_closed_the_pipes_is_killed(tmp_path: Path) -> None:
    script = (f'(trap "" TERM; exec sleep 60) >/dev/null 2>&1 & '
              f'echo $! > {tmp_path}/grandchild')
    result, elapsed = asyncio.run(_run_with_timeout(sh(script), 10))
    assert result is not None and result.status == "ok"
    assert elapsed >= GRACE  # it had its grace period
    assert_gone(read_pid(tmp_path / "grandchild"))


def test_a_process_that_left_the_group_holding_the_pipes_does_not_hang_the_run(
        tmp_path: Path) -> None:
    script = (f'python3 -c "import os, time; os.setsid(); time.sleep(60)" & '
              f'echo $! > {tmp_path}/escapee; echo done')
    try:
        result, elapsed = asyncio.run(_run_with_timeout(sh(script), 10))
        assert result is not None and result.status == "ok" and result.summary == "done"
        assert elapsed < 1.0 + GRACE + 1.0 + 1.0  # drain, grace, then our pipe ends are closed
    finally:
        os.kill(read_pid(tmp_path / "escapee"), signal.SIGKILL)
