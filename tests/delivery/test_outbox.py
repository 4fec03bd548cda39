"""The outbox worker on a real state and a real local receiver, driven by a fake clock:
retries with one Idempotency-Key, permanent failures, giving up at the maximum age, restarts."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reconciler.delivery.outbox import Attempt, OutboxPolicy, OutboxWorker
from reconciler.delivery.plan import plan_deliveries
from reconciler.delivery.request import Verdict
from reconciler.delivery.sender import Sender
from reconciler.executors.base import RunResult
from reconciler.executors.secrets import SecretResolver
from reconciler.model.state import Delivery, RunFinish, RunStart
from reconciler.store import StateReader, StateWriter
from tests.delivery.helpers import T0, finished_run, job
from tests.delivery.receiver import Receiver, Reply, serving

DONE = T0 + 94  # when finished_run() ends, and its entry is created


@pytest.fixture
def state(tmp_path: Path) -> Path:
    return tmp_path / "state"


@pytest.fixture
def writer(state: Path) -> Iterator[StateWriter]:
    opened = StateWriter.open(state, now=T0)
    yield opened
    opened.close()


def finish_with_delivery(writer: StateWriter, url: str, run_id: str = "run-1") -> Delivery:
    """Phase 1 and 3 of a run whose result goes to the webhook ``url``: one transaction."""
    run = finished_run(run_id=run_id)
    plan = plan_deliveries(job(delivery={"webhook": {"url": url}}), {}, run, RunResult("ok"))
    writer.start_run(RunStart(run.run_id, run.job, run.occurrence_key, run.scheduled_at,
                              run.started_at))
    writer.finish_run(RunFinish(run.run_id, run.job, DONE, "ok", delivery_status=plan.status,
                                deliveries=plan.deliveries))
    (entry,) = writer.deliveries_of_run(run_id)
    return entry


def run_once(writer: StateWriter, now: float, policy: OutboxPolicy | None = None,
             seen: list[Attempt] | None = None) -> float | None:
    async def go() -> float | None:
        sender = Sender(SecretResolver({}), timeout=5)
        worker = OutboxWorker(writer, sender, policy or OutboxPolicy(),
                              on_attempt=seen.append if seen is not None else None)
        try:
            return await worker.run_once(now)
        finally:
            await sender.aclose()

    return asyncio.run(go())


def test_503_twice_then_200_is_three_attempts_with_one_key(writer: StateWriter) -> None:
    script = [Reply(503, "busy"), Reply(503, "busy"), Reply(200)]
    with serving(Receiver(script=script)) as receiver:
        entry = finish_with_delivery(writer, f"{receiver.url}/in")
        assert writer.run("run-1").delivery_status == "pending"  # type: ignore[union-attr]
        assert run_once(writer, DONE) == DONE + 5  # first retry after 5 s
        (after_one,) = writer.deliveries_of_run("run-1")
        assert after_one.attempts == 1 and after_one.last_error is not None
        assert "HTTP 503: busy" in after_one.last_error
        assert run_once(writer, DONE + 4) == DONE + 5  # not due yet: nothing sent
        assert len(receiver.requests) == 1
        assert run_once(writer, DONE + 5) == DONE + 15  # then 10 s
        assert run_once(writer, DONE + 15) is None  # delivered: nothing pending
        assert run_once(writer, DONE + 10_000) is None
    keys = [r.header("Idempotency-Key") for r in receiver.requests]
    assert keys == ["run-1", "run-1", "run-1"] == [entry.idempotency_key] * 3
    (done,) = writer.deliveries_of_run("run-1")
    assert done.status == "delivered" and done.attempts == 3 and done.last_error is None
    assert writer.run("run-1").delivery_status == "delivered"  # type: ignore[union-attr]


def test_a_400_is_recorded_as_a_permanent_failure(writer: StateWriter) -> None:
    seen: list[Attempt] = []
    with serving(Receiver(default=Reply(400, "unknown field"))) as receiver:
        finish_with_delivery(writer, f"{receiver.url}/in")
        assert run_once(writer, DONE, seen=seen) is None
        assert run_once(writer, DONE + 3600) is None
    assert len(receiver.requests) == 1
    (entry,) = writer.deliveries_of_run("run-1")
    assert entry.status == "failed" and entry.attempts == 1
    assert entry.last_error == (f"{receiver.url}/in: HTTP 400: unknown field "
                                "(permanent: not retried)")
    assert writer.run("run-1").delivery_status == "not-delivered"  # type: ignore[union-attr]
    assert [a.verdict.outcome for a in seen] == ["permanent"]
    record = seen[0].record()
    assert record["status"] == "failed" and record["job"] == "daily-digest"
    assert record["runId"] == record["key"] == "run-1" and record["attempts"] == 1
    assert record["target"] == f"webhook {receiver.url}/in" and "HTTP 400" in record["error"]


def test_retries_double_until_the_maximum_age_then_fail_with_the_last_error(
    writer: StateWriter,
) -> None:
    policy = OutboxPolicy(max_age=300.0)
    with serving(Receiver(default=Reply(502, "bad gateway"))) as receiver:
        finish_with_delivery(writer, f"{receiver.url}/in")
        now: float | None = DONE
        instants = []
        while now is not None:
            instants.append(now - DONE)
            now = run_once(writer, now, policy)
    assert instants == [0, 5, 15, 35, 75, 155]  # the next (+160 s) would pass 300 s
    assert len(receiver.requests) == 6
    (entry,) = writer.deliveries_of_run("run-1")
    assert entry.status == "failed" and entry.attempts == 6
    assert entry.last_error is not None and "HTTP 502: bad gateway" in entry.last_error
    assert "gave up after 6 attempts over 2m35s" in entry.last_error
    with StateReader.open(writer.paths.root) as reader:  # and status sees it
        assert reader.run("run-1").delivery_status == "not-delivered"  # type: ignore[union-attr]


def test_backoff_doubles_from_5s_and_is_capped() -> None:
    policy = OutboxPolicy(max_retry_delay=60.0)
    assert [policy.retry_delay(n) for n in range(1, 7)] == [5, 10, 20, 40, 60, 60]
    assert OutboxPolicy().retry_delay(500) == 3600.0


def test_a_retry_after_longer_than_the_backoff_is_honoured(writer: StateWriter) -> None:
    script = [Reply(429, "slow down", {"Retry-After": "42"})]
    with serving(Receiver(script=script)) as receiver:
        finish_with_delivery(writer, f"{receiver.url}/in")
        assert run_once(writer, DONE) == DONE + 42


def test_a_second_worker_after_a_restart_never_resends_a_delivered_entry(state: Path) -> None:
    with serving() as receiver:
        first = StateWriter.open(state, now=T0)
        finish_with_delivery(first, f"{receiver.url}/a", "run-a")
        assert run_once(first, DONE) is None
        finish_with_delivery(first, f"{receiver.url}/b", "run-b")  # owed, not yet sent
        first.close()
        second = StateWriter.open(state, now=T0 + 1000)
        try:
            assert run_once(second, DONE + 1000) is None
            assert run_once(second, DONE + 2000) is None
        finally:
            second.close()
    assert [r.path for r in receiver.requests] == ["/a", "/b"]


def test_a_crash_mid_send_resends_after_the_backoff_with_the_same_key(state: Path) -> None:
    """The claim is durable before the POST: a worker killed while sending leaves the entry
    pending with its attempt counted; the next worker sends it again, same key."""
    with serving() as receiver:
        first = StateWriter.open(state, now=T0)
        finish_with_delivery(first, f"{receiver.url}/in")

        class Dies:
            async def send(self, payload: str, key: str, now: float) -> Verdict:
                raise asyncio.CancelledError  # the process dies here

        with pytest.raises(asyncio.CancelledError):
            asyncio.run(OutboxWorker(first, Dies()).run_once(DONE))
        first.close()
        second = StateWriter.open(state, now=DONE + 1)
        try:
            (claimed,) = second.deliveries_of_run("run-1")
            assert claimed.status == "pending" and claimed.attempts == 1
            assert run_once(second, DONE + 1) == DONE + 5  # not before the backoff
            assert run_once(second, DONE + 5) is None
            (entry,) = second.deliveries_of_run("run-1")
        finally:
            second.close()
    assert entry.status == "delivered" and entry.attempts == 2
    assert [r.header("Idempotency-Key") for r in receiver.requests] == ["run-1"]


def test_a_sender_bug_is_a_retry_not_a_lost_entry(writer: StateWriter) -> None:
    class Broken:
        async def send(self, payload: str, key: str, now: float) -> Verdict:
            raise RuntimeError("boom at https://h.example/p?token=abc")

    finish_with_delivery(writer, "http://127.0.0.1:9/in")
    assert asyncio.run(OutboxWorker(writer, Broken()).run_once(DONE)) == DONE + 5
    (entry,) = writer.deliveries_of_run("run-1")
    assert entry.status == "pending" and entry.last_error is not None
    assert "token" not in entry.last_error and "https://h.example/p" in entry.last_error


def test_a_full_batch_asks_to_be_called_again_at_once(writer: StateWriter) -> None:
    with serving() as receiver:
        for n in range(5):
            finish_with_delivery(writer, f"{receiver.url}/{n}", f"run-{n}")
        policy = OutboxPolicy(batch=2, concurrency=2)
        assert run_once(writer, DONE, policy) == DONE
        assert run_once(writer, DONE, policy) == DONE
        assert run_once(writer, DONE, policy) is None
    assert sorted(r.path for r in receiver.requests) == [f"/{n}" for n in range(5)]


def test_run_forever_sends_and_stops(writer: StateWriter) -> None:
    clock = {"now": DONE}
    naps: list[float] = []

    async def go(url: str) -> None:
        stop = asyncio.Event()
        sender = Sender(SecretResolver({}))

        async def sleep(seconds: float) -> None:
            naps.append(seconds)
            clock["now"] += seconds
            if len(naps) == 3:
                stop.set()

        worker = OutboxWorker(writer, sender)
        await worker.run_forever(lambda: clock["now"], sleep, stop)
        await sender.aclose()
        assert worker.stats.delivered == 1 and worker.stats.retried == 1

    script: list[Any] = [Reply(503), Reply(200)]
    with serving(Receiver(script=script)) as receiver:
        finish_with_delivery(writer, f"{receiver.url}/in")
        asyncio.run(go(receiver.url))
    assert naps == [5.0, 5.0, 5.0] and len(receiver.requests) == 2
