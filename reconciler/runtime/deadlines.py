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
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from reconciler.clock import Clock

Watched = TypeVar("Watched")


@dataclass(eq=False)
class _Group(Generic[Watched]):
    members: set[Watched] = field(default_factory=set)


class Deadlines(Generic[Watched]):
    """Calls ``expire(item)`` for every item still watched when its deadline passes."""

    def __init__(self, clock: Clock, expire: Callable[[Watched], None]) -> None:
        self._clock = clock
        self._expire = expire
        self._groups: dict[float, _Group[Watched]] = {}

    def watch(self, item: Watched, deadline: float) -> None:
        group = self._groups.get(deadline)
        if group is None:
            group = self._groups[deadline] = _Group()
            delay = max(0.0, deadline - self._clock.now())
            asyncio.get_running_loop().call_later(delay, self._due, deadline)
        group.members.add(item)

    def release(self, item: Watched, deadline: float) -> None:
        group = self._groups.get(deadline)
        if group is not None:
            group.members.discard(item)

    def _due(self, deadline: float) -> None:
        group = self._groups.pop(deadline, None)
        for item in () if group is None else list(group.members):
            self._expire(item)

    def __len__(self) -> int:
        return sum(len(group.members) for group in self._groups.values())
