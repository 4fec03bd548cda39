"""The jobs' state table, indexed by when each job next needs the timer.

A tick must find the due jobs without looking at every job: with a thousand jobs due at the
top of the hour and four run slots, the tick after every finished wave would otherwise scan
them all. Every write to the table re-indexes that job in a heap keyed by its next wake-up
(``max(next effective fire, startup hold)``); stale heap entries are skipped when popped.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable
from typing import Any

from reconciler.model.state import JobState

WakeKey = Callable[[str, JobState], float | None]


class StateTable(dict[str, JobState]):
    """A ``dict`` of job states that keeps a due-time heap in step with every write."""

    def __init__(self, states: Iterable[JobState] = (), wake_key: WakeKey | None = None
                 ) -> None:
        super().__init__()
        self._wake_key: WakeKey = wake_key or (lambda name, state: state.next_effective_at)
        self._heap: list[tuple[float, str]] = []
        self._keys: dict[str, float] = {}
        for state in states:
            self[state.name] = state

    def __setitem__(self, name: str, state: JobState) -> None:
        super().__setitem__(name, state)
        self.reindex(name)

    def __delitem__(self, name: str) -> None:
        super().__delitem__(name)
        self._keys.pop(name, None)

    def pop(self, name: str, *default: Any) -> Any:
        self._keys.pop(name, None)
        return super().pop(name, *default)

    def update(self, other: Any = (), /, **kwargs: JobState) -> None:
        for name, state in dict(other, **kwargs).items():
            self[name] = state

    def reindex(self, name: str) -> None:
        state = self.get(name)
        key = None if state is None else self._wake_key(name, state)
        if key is None:
            self._keys.pop(name, None)
            return
        if self._keys.get(name) != key:
            self._keys[name] = key
            heapq.heappush(self._heap, (key, name))

    def reindex_all(self) -> None:
        self._keys.clear()
        self._heap.clear()
        for name in self:
            self.reindex(name)

    def pop_next_due(self, now: float) -> str | None:
        """The job whose wake-up came first, if any has come; it leaves the index (a job that
        stays due must be re-indexed by its caller)."""
        popped = self.pop_next(now)
        return None if popped is None else popped[1]

    def pop_next(self, limit: float) -> tuple[float, str] | None:
        """``(wake-up, job)`` of the earliest job waking at or before ``limit``; it leaves the
        index, as with ``pop_next_due``."""
        while self._heap and self._heap[0][0] <= limit:
            key, name = heapq.heappop(self._heap)
            if self._keys.get(name) == key:
                del self._keys[name]
                return key, name
        return None

    def next_wake(self) -> float | None:
        """The earliest wake-up still indexed (stale entries are dropped on the way)."""
        while self._heap:
            key, name = self._heap[0]
            if self._keys.get(name) == key:
                return key
            heapq.heappop(self._heap)
        return None
