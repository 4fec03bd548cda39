"""Soak: 200 jobs every second; every occurrence either ran or was recorded skipped with a
reason. CI runs the short form; set RECONCILER_SOAK_SECONDS=60 for the full one."""

from __future__ import annotations

import os
import time
from datetime import datetime
from pathlib import Path

import pytest

from reconciler.store import StateReader
from tests.daemon.harness import DaemonProcess, job_yaml

JOBS = 200
SECONDS = float(os.environ.get("RECONCILER_SOAK_SECONDS", "12"))


def _epoch(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


@pytest.mark.slow
def test_every_occurrence_of_200_jobs_every_second_is_run_or_skipped(tmp_path: Path) -> None:
    specs, state = tmp_path / "specs", tmp_path / "state"
    specs.mkdir()
    for index in range(JOBS):
        (specs / f"job-{index:03d}.yaml").write_text(
            job_yaml(f"job-{index:03d}", "1s", ["true"]))
    daemon = DaemonProcess(specs, state, tmp_path / "daemon.log", "--max-concurrent-runs", "32")
    try:
        daemon.wait_started(timeout=60)
        time.sleep(SECONDS)
        assert daemon.terminate(timeout=30) == 0
    finally:
        daemon.kill()
    with StateReader.open(state) as reader:
        states = {s.name: s for s in reader.jobs()}
        assert len(states) == JOBS
        for name, job in states.items():
            runs = reader.runs(name, limit=10_000)
            skips = reader.skips(name, limit=10_000)
            handled = {round(r.scheduled_at, 3) for r in runs if r.scheduled_at is not None}
            handled |= {round(s.scheduled_at, 3) for s in skips}
            assert all(s.reason for s in skips)
            assert job.anchor is not None and job.last_nominal_at is not None
            # Every slot from the first one to the last one consumed is accounted for.
            first = job.anchor + 1
            expected = {round(first + k, 3)
                        for k in range(int(job.last_nominal_at - first) + 1)}
            missing = expected - handled
            assert not missing, f"{name}: {len(missing)} slots neither run nor recorded"
            # How many ran depends on the machine (a busy one records more catch-up skips);
            # that none is lost does not.
            assert runs, f"{name} never ran"
    log = (tmp_path / "daemon.log").read_text()
    assert "Traceback" not in log
