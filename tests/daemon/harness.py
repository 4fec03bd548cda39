"""Run the real daemon as a subprocess on a temporary git repository of specs."""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from reconciler.cli import main

T = TypeVar("T")


def git(repo: Path, *args: str) -> str:
    result = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True,
                            check=True)
    return result.stdout.strip()


def init_repo(repo: Path) -> None:
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "test@example.invalid")
    git(repo, "config", "user.name", "test")
    (repo / "README.md").write_text("specs\n")
    commit(repo, "initial")


def commit(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def cli_json(*argv: str) -> Any:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main([*argv, "--format", "json"])
    assert code == 0, out.getvalue()
    return json.loads(out.getvalue())


def wait_for(predicate: Callable[[], T | None], timeout: float, what: str) -> T:
    """Poll ``predicate`` until it returns something truthy (the daemon is a real process)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.1)


class DaemonProcess:
    def __init__(self, specs: Path, state: Path, log: Path, *extra: str,
                 env: dict[str, str] | None = None) -> None:
        self.specs, self.state, self.log = specs, state, log
        argv = [sys.executable, "-m", "reconciler", "run", "--specs", str(specs),
                "--state", str(state), "--debounce", "200ms", "--resync-interval", "2s",
                "--shutdown-grace", "1s", "--log-format", "json", *extra]
        self._log_file = log.open("a")
        self.process = subprocess.Popen(argv, stdout=self._log_file, stderr=subprocess.STDOUT,
                                        env={**os.environ, "PYTHONUNBUFFERED": "1",
                                             **(env or {})})

    def lines(self) -> list[dict[str, Any]]:
        found = []
        for line in self.log.read_text().splitlines():
            with contextlib.suppress(ValueError):
                found.append(json.loads(line))
        return found

    def wait_started(self, timeout: float = 15) -> None:
        wait_for(lambda: any(e.get("event") == "started" for e in self.lines())
                 or self.process.poll() is not None, timeout, "the daemon to start")
        assert self.process.poll() is None, self.log.read_text()

    def terminate(self, timeout: float = 15) -> int:
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.send_signal(signal.SIGUSR1)  # the daemon dumps its stacks
            time.sleep(1)
            tail = "\n".join(self.log.read_text().splitlines()[-60:])
            raise AssertionError(f"the daemon did not stop within {timeout}s:\n{tail}") from None
        finally:
            self._log_file.close()

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self._log_file.close()


@contextlib.contextmanager
def running(specs: Path, state: Path, log: Path, *extra: str,
            env: dict[str, str] | None = None) -> Iterator[DaemonProcess]:
    daemon = DaemonProcess(specs, state, log, *extra, env=env)
    try:
        daemon.wait_started()
        yield daemon
    finally:
        daemon.kill()


def job_yaml(name: str, every: str, command: list[str], **spec: Any) -> str:
    extra = "".join(f"  {key}: {json.dumps(value)}\n" for key, value in spec.items())
    return (f"apiVersion: reconciler.dev/v1\nkind: ScheduledJob\nmetadata: {{name: {name}}}\n"
            f"spec:\n  schedule: {{every: {every}}}\n  run: {{command: {json.dumps(command)}}}\n"
            + extra)
