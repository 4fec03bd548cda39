"""Time as a parameter: the runtime holds a Clock; everything else is given instants.

Instants are UTC epoch seconds as ``float`` (or ``int`` where whole seconds are meant).
"""

from __future__ import annotations

import time
from typing import Protocol


class Clock(Protocol):
    def now(self) -> float:
        """The current instant, UTC epoch seconds."""
        ...


class SystemClock:
    """The real wall clock."""

    def now(self) -> float:
        return time.time()


class VirtualClock:
    """A clock that only moves when told to: for simulate and tests."""

    def __init__(self, start: float) -> None:
        self._now = float(start)

    def now(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("a virtual clock never goes backwards")
        self._now += seconds

    def set(self, instant: float) -> None:
        if instant < self._now:
            raise ValueError("a virtual clock never goes backwards")
        self._now = float(instant)
