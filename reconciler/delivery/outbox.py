"""The durable outbox worker: send what is due, record every attempt, retry, never drop.

Entries arrive in the outbox in the transaction that records their run's result (see
``delivery.plan``). ``OutboxWorker.run_once(now)`` takes the pending entries that are due and:

1. claims them in one transaction: ``attempts + 1`` and the next attempt time are written
   *before* sending, so a crash mid-send retries after the backoff (with the same key) instead
   of hot-looping, and two overlapping calls never send one entry twice;
2. sends them concurrently (``Idempotency-Key``: the entry's key, the same on every attempt
   and after every restart, so receivers can drop a repeat);
3. records each outcome as soon as it is known: 2xx ``delivered`` (never sent again: only pending
   entries are ever due); a permanent failure ``failed`` at once; a retryable one ``pending``
   again after 5 s, 10 s, 20 s, ... (doubling, capped; a longer ``Retry-After`` wins) until the
   next attempt would fall beyond ``max_age`` (default 24 h) after the entry was created: then
   ``failed`` with its last error. The run's delivery status follows (``not-delivered``).

It returns when the next entry is due (``None``: nothing pending), for the service's timer. No
clock is read here: ``now`` is always given.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol

from reconciler.delivery.payload import human_duration
from reconciler.delivery.redact import scrub
from reconciler.delivery.request import Verdict
from reconciler.model.state import Delivery, evolve

# Beyond any instant the outbox will hold: "the earliest pending entry, whenever it is due".
_FOREVER = 1e18


class _Updates(Protocol):
    def update_delivery(self, delivery: Delivery) -> None: ...


class OutboxStore(Protocol):
    """What the worker needs of the state (``StateWriter`` is one)."""

    def due_deliveries(self, now: float, limit: int = 100) -> list[Delivery]: ...
    def transaction(self) -> AbstractContextManager[Any]: ...


class DeliverySender(Protocol):
    """What the worker needs of a sender (``delivery.sender.Sender`` is one)."""

    async def send(self, payload: str, key: str, now: float) -> Verdict: ...


@dataclass(frozen=True)
class OutboxPolicy:
    first_retry: float = 5.0
    max_retry_delay: float = 3600.0
    max_age: float = 24 * 3600.0
    batch: int = 100
    concurrency: int = 16

    def retry_delay(self, attempts: int) -> float:
        """After the ``attempts``-th failed attempt: 5 s, 10 s, 20 s, ... capped."""
        exponent = min(max(attempts - 1, 0), 32)  # 2**32 * 5 s already exceeds any cap
        return float(min(self.first_retry * 2**exponent, self.max_retry_delay))


@dataclass(frozen=True)
class Attempt:
    """One attempt's result, for logs and metrics: the entry as recorded and the verdict."""

    entry: Delivery
    verdict: Verdict

    def record(self) -> dict[str, Any]:
        """The event for logs and metrics (``EventSink.delivery``): no URL, no secret.

        ``status`` is the entry's: ``delivered``, ``pending`` (will retry) or ``failed``.
        """
        entry = self.entry
        return {
            "at": entry.updated_at, "job": entry.job, "runId": entry.run_id,
            "target": entry.target, "key": entry.idempotency_key, "status": entry.status,
            "attempts": entry.attempts, "outcome": self.verdict.outcome,
            "nextAttemptAt": entry.next_attempt_at, "error": entry.last_error,
        }  # fmt: skip


@dataclass
class OutboxStats:
    delivered: int = 0
    retried: int = 0
    failed: int = 0
    attempts: int = 0

    def count(self, entry: Delivery) -> None:
        self.attempts += 1
        if entry.status == "delivered":
            self.delivered += 1
        elif entry.status == "failed":
            self.failed += 1
        else:
            self.retried += 1


@dataclass
class OutboxWorker:
    store: OutboxStore
    sender: DeliverySender
    policy: OutboxPolicy = field(default_factory=OutboxPolicy)
    on_attempt: Callable[[Attempt], None] | None = None
    stats: OutboxStats = field(default_factory=OutboxStats)

    async def run_once(self, now: float) -> float | None:
        """Send every due entry (one batch); the next due instant, or None if none is pending."""
        due = self.store.due_deliveries(now, self.policy.batch)
        if due:
            claimed = self._claim(due, now)
            limit = asyncio.Semaphore(max(1, self.policy.concurrency))
            await asyncio.gather(*(self._attempt(entry, now, limit) for entry in claimed))
            if len(due) >= self.policy.batch:
                return now  # more are due: the caller comes back at once
        return self.next_due()

    def next_due(self) -> float | None:
        earliest = self.store.due_deliveries(_FOREVER, 1)
        return earliest[0].next_attempt_at if earliest else None

    def _claim(self, due: Sequence[Delivery], now: float) -> list[Delivery]:
        claimed = [
            evolve(entry, attempts=entry.attempts + 1, updated_at=now,
                   next_attempt_at=now + self.policy.retry_delay(entry.attempts + 1))
            for entry in due
        ]  # fmt: skip
        with self.store.transaction() as tx:
            for entry in claimed:
                tx.update_delivery(entry)
        return claimed

    async def _attempt(self, entry: Delivery, now: float, limit: asyncio.Semaphore) -> None:
        async with limit:
            try:
                verdict = await self.sender.send(entry.payload, entry.idempotency_key, now)
            except Exception as exc:  # a sender bug must not lose the entry: retry it
                verdict = Verdict("retry", scrub(f"sender failed: {type(exc).__name__}: {exc}"))
            # Recorded at once, not with the batch: the window in which a crash makes an
            # acknowledged entry go out again is one write, not the slowest send of the batch.
            self._record(self.settle(entry, verdict, now), verdict)

    def settle(self, entry: Delivery, verdict: Verdict, now: float) -> Delivery:
        """``entry`` (already claimed) after an attempt at ``now`` ended with ``verdict``."""
        if verdict.outcome == "delivered":
            return evolve(entry, status="delivered", next_attempt_at=None, last_error=None,
                          updated_at=now)
        if verdict.outcome == "permanent":
            return evolve(entry, status="failed", next_attempt_at=None, updated_at=now,
                          last_error=f"{verdict.detail} (permanent: not retried)")
        delay = self.policy.retry_delay(entry.attempts)
        if verdict.retry_after is not None:
            delay = max(delay, min(verdict.retry_after, self.policy.max_retry_delay))
        if now + delay > entry.created_at + self.policy.max_age:
            age = human_duration(round((now - entry.created_at) * 1000))
            return evolve(entry, status="failed", next_attempt_at=None, updated_at=now,
                          last_error=f"{verdict.detail} (gave up after {entry.attempts} "
                                     f"attempts over {age})")
        return evolve(entry, next_attempt_at=now + delay, last_error=verdict.detail,
                      updated_at=now)

    def _record(self, entry: Delivery, verdict: Verdict) -> None:
        with self.store.transaction() as tx:
            tx.update_delivery(entry)
        self.stats.count(entry)
        if self.on_attempt is not None:
            self.on_attempt(Attempt(entry, verdict))

    async def run_forever(self, now: Callable[[], float],
                          sleep: Callable[[float], Awaitable[None]], stop: asyncio.Event,
                          idle: float = 5.0) -> None:
        """Drive ``run_once`` until ``stop`` is set; ``sleep`` is the runtime's (waking early
        when a run enqueues is its business). ``idle``: the longest nap with nothing due."""
        while not stop.is_set():
            due = await self.run_once(now())
            wait = idle if due is None else min(idle, max(0.0, due - now()))
            if wait > 0:
                await sleep(wait)
