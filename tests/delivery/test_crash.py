"""SIGKILL the delivery path at random moments while 50 jobs deliver every second to a local
receiver, restart it, repeat: every finished run that asked for delivery reaches the receiver at
least once, and the receiver's distinct Idempotency-Keys are exactly those runs.

The process is ``crash_driver``: the store, ``plan_deliveries`` and the ``OutboxWorker`` wired
the way the daemon wires them (the result and its outbox entry in one transaction).
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from reconciler.store import StateReader
from tests.delivery.crash_driver import POLICY
from tests.delivery.receiver import Received, Receiver, Reply, serving

ROOT = Path(__file__).resolve().parents[2]
ASKED = {"pending", "delivered", "not-delivered"}  # the run asked for delivery


def _driver(state: Path, url: str, *flags: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.delivery.crash_driver", str(state), url, *flags],
        cwd=ROOT, stdout=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"})


def _wait_ready(process: subprocess.Popen[str]) -> None:
    assert process.stdout is not None
    line = process.stdout.readline()
    assert line.strip() == "ready", f"driver did not start: {line!r}"


def _crash_loop(tmp_path: Path, rounds: int, seed: int) -> None:
    rng = random.Random(seed)

    def slow_ack(_: Received) -> Reply:
        time.sleep(rng.uniform(0, 0.01))  # so that kills also land between send and record
        return Reply(200)

    state = tmp_path / "state"
    with serving(Receiver(responder=slow_ack)) as receiver:
        url = f"{receiver.url}/results"
        for _ in range(rounds):
            process = _driver(state, url)
            _wait_ready(process)
            time.sleep(rng.uniform(0.1, 1.3))
            process.send_signal(signal.SIGKILL)
            process.wait()
        drain = _driver(state, url, "--drain")
        _wait_ready(drain)
        assert drain.wait(timeout=60) == 0
        keys = [r.header("Idempotency-Key") for r in receiver.requests]
    with StateReader.open(state) as reader:
        finished = [run for job in reader.jobs() for run in reader.runs(job.name, limit=10_000)
                    if run.status is not None]
    asked = {run.run_id for run in finished if run.delivery_status in ASKED}
    assert len(asked) >= rounds * 10, "too few runs finished to prove anything"
    assert {run.delivery_status for run in finished} == {"delivered"}
    assert set(keys) == asked  # each reached the receiver; nothing else did
    # A repeat needs a kill between the receiver's answer and our record of it: at most the
    # sends in flight at each kill (the receiver drops it by its key).
    assert len(keys) - len(set(keys)) <= rounds * POLICY.concurrency


def test_sigkill_30_times_while_50_jobs_deliver_every_second(tmp_path: Path) -> None:
    _crash_loop(tmp_path, rounds=30, seed=9)
