"""An asyncio event loop on virtual time, for ``simulate`` and the tests.

The runtime sleeps with ordinary ``asyncio.sleep`` and timeouts. On this loop, whenever no
callback is ready, time jumps straight to the earliest pending timer instead of waiting, so
a week of schedules runs in seconds and every timing rule is exact and repeatable. Real file
descriptors still work (they are polled without blocking), so subprocesses are not for this
loop: it pairs with in-process executors.
"""

from __future__ import annotations

import asyncio
import selectors
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class _JumpingSelector(selectors.DefaultSelector):
    def __init__(self, loop: VirtualTimeLoop) -> None:
        super().__init__()
        self._loop = loop

    def select(self, timeout: float | None = None) -> list[tuple[Any, int]]:
        events: list[tuple[Any, int]] = super().select(0)
        if events or timeout == 0:
            return events
        if timeout is None:
            raise RuntimeError("virtual time: every task is waiting and no timer is pending")
        self._loop.advance(timeout)
        return events


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    """``loop.time()`` starts at 0 and moves only by jumping to the next timer."""

    def __init__(self) -> None:
        self._virtual_now = 0.0
        super().__init__(selector=_JumpingSelector(self))
        # asyncio rounds timer deadlines with the clock resolution; ours is exact.
        self._clock_resolution = 1e-9

    def time(self) -> float:
        return self._virtual_now

    def advance(self, seconds: float) -> None:
        if seconds > 0:
            self._virtual_now += seconds


class LoopClock:
    """A ``Clock`` whose epoch time follows a (virtual) event loop's time."""

    def __init__(self, loop: asyncio.AbstractEventLoop, epoch_at_zero: float) -> None:
        self._loop = loop
        self._offset = epoch_at_zero - loop.time()

    def now(self) -> float:
        return self._loop.time() + self._offset


def run_virtual(main: Coroutine[Any, Any, T]) -> T:
    """Run ``main`` to completion on a fresh virtual-time loop."""
    loop = VirtualTimeLoop()
    try:
        asyncio.set_event_loop(loop)
        return loop.run_until_complete(main)
    finally:
        asyncio.set_event_loop(None)
        loop.close()
