"""Run timeouts: one event-loop timer per distinct deadline, not one per run.

A run's deadline is its recorded start plus its job's timeout, so the runs one tick starts (or
one armed slot opens) share a deadline and a timer. ``asyncio.timeout`` costs a timer and a
cancelled timer per run, which on a wave of a thousand runs was a quarter of the time between
the slot and the last run's start. A run that ends before its deadline leaves its group, so
finished runs are not held until a long timeout; an emptied group keeps its timer (a wave of
quick runs would otherwise arm and cancel one per run), so at most one timer per distinct start
instant within the longest timeout is pending.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Generic, TypeVar

from reconciler.clock import Clock

Watched = TypeVar("Watched")


class Deadlines(Generic[Watched]):
    """Calls ``expire(item)`` for every item still watched when its deadline passes."""

    def __init__(self, clock: Clock, expire: Callable[[Watched], None]) -> None:
        self._clock = clock
        self._expire = expire
        self._groups: dict[float, set[Watched]] = {}  # deadline -> items still watched

    def watch(self, item: Watched, deadline: float) -> None:
        group = self._groups.get(deadline)
        if group is None:
            group = self._groups[deadline] = set()
            delay = max(0.0, deadline - self._clock.now())
            asyncio.get_running_loop().call_later(delay, self._due, deadline)
        group.add(item)

    def release(self, item: Watched, deadline: float) -> None:
        group = self._groups.get(deadline)
        if group is not None:
            group.discard(item)

    def _due(self, deadline: float) -> None:
        for item in list(self._groups.pop(deadline, ())):
            self._expire(item)

    def __len__(self) -> int:
        return sum(len(group) for group in self._groups.values())
