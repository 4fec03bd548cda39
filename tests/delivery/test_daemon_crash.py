"""Issue 9's crash test on the real daemon: SIGKILL ``reconciler run`` at random moments while
50 jobs deliver every second to a local receiver, restart it, 30 times. Every finished run that
asked for delivery reaches the receiver at least once, and the receiver's distinct
Idempotency-Keys are exactly those runs. CI runs a short form; the full one is ``slow``."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from reconciler.store import StateReader
from tests.daemon.harness import DaemonProcess, job_yaml, wait_for
from tests.delivery.receiver import Received, Receiver, Reply, serving

JOBS = 50
ASKED = {"pending", "delivered", "not-delivered"}


def _write_specs(specs: Path, url: str, suspend: bool = False) -> None:
    for index in range(JOBS):
        name = f"job-{index:02d}"
        (specs / f"{name}.yaml").write_text(job_yaml(
            name, "1s", ["true"], delivery={"webhook": {"url": url}}, suspend=suspend))


def _settled(state: Path) -> bool:
    with StateReader.open(state) as reader:
        return not reader.due_deliveries(1e18, 1) and not reader.running_jobs()


def _crash_daemon(tmp_path: Path, rounds: int, seed: int) -> None:
    rng = random.Random(seed)
    specs, state = tmp_path / "specs", tmp_path / "state"
    specs.mkdir()

    def ack(_: Received) -> Reply:
        time.sleep(rng.uniform(0, 0.01))
        return Reply(200)

    with serving(Receiver(responder=ack)) as receiver:
        _write_specs(specs, f"{receiver.url}/results")
        for round_ in range(rounds):
            # One log per process: "started" must be this process's own.
            daemon = DaemonProcess(specs, state, tmp_path / f"daemon-{round_}.log",
                                   "--max-concurrent-runs", "32")
            daemon.wait_started(timeout=60)
            time.sleep(rng.uniform(0.5, 2.0))
            daemon.kill()  # SIGKILL
        assert receiver.requests, "the daemon delivered nothing"
        _write_specs(specs, f"{receiver.url}/results", suspend=True)  # no new runs: drain
        daemon = DaemonProcess(specs, state, tmp_path / "daemon-drain.log")
        try:
            daemon.wait_started(timeout=60)
            # Entries claimed by killed daemons wait out their backoff (5 s, 10 s, ...) first.
            wait_for(lambda: _settled(state), 300, "the outbox to drain")
            assert daemon.terminate(timeout=30) == 0
        finally:
            daemon.kill()
        keys = [r.header("Idempotency-Key") for r in receiver.requests]
    with StateReader.open(state) as reader:
        finished = [run for job in reader.jobs() for run in reader.runs(job.name, limit=10_000)
                    if run.status is not None]
    asked = {run.run_id for run in finished if run.delivery_status in ASKED}
    assert len(asked) >= rounds * 5, "too few runs finished to prove anything"
    assert {r.delivery_status for r in finished if r.run_id in asked} == {"delivered"}
    assert set(keys) == asked


def test_sigkill_the_daemon_while_it_delivers(tmp_path: Path) -> None:
    _crash_daemon(tmp_path, rounds=3, seed=3)


@pytest.mark.slow
def test_sigkill_the_daemon_30_times_while_50_jobs_deliver(tmp_path: Path) -> None:
    _crash_daemon(tmp_path, rounds=30, seed=30)
