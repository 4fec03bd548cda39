"""The service's timer: when to tick next.

It arms one wake-up for the earliest effective fire (``arm_ahead`` before it when arming is
on), never more than ``max_timer_delay`` away (a clock jump or a suspended laptop is noticed)
and, when the earliest fire is past due and waiting (for its job's run or for a run slot), no
sooner than ``past_due_delay`` (no hot loop) unless another fire comes first. A finishing run
wakes it early. Ticks never overlap: one loop calls them in turn.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from reconciler.model.state import JobState

if TYPE_CHECKING:
    from reconciler.core.jobview import DesiredJob
    from reconciler.runtime.dueindex import StateTable
    from reconciler.runtime.service import ServiceConfig


class TimerMixin:
    """The timer half of ``Service``; the attributes below are the service's."""

    config: ServiceConfig
    desired: dict[str, DesiredJob]
    states: StateTable
    hold_until: dict[str, float]
    wake: asyncio.Event
    _wake_at: float | None
    _upcoming: float | None

    def _earliest_to_come(self, now: float, waiting: list[str]) -> float | None:
        """The earliest wake-up after ``now``, which must wake the timer on time even while a
        due job waits (the timer otherwise looks again only after ``past_due_delay``): the
        index's first entry before the waiting jobs go back in, or a waiting job's own fire
        inside the arming lead."""
        keys = [key for name in waiting
                if (key := self._wake_key(name, self.states[name])) is not None and key > now]
        first = self.states.next_wake()
        if first is not None and first > now:
            keys.append(first)
        return min(keys, default=None)

    def _wake_key(self, name: str, state: JobState) -> float | None:
        """When the timer must look at this job next; None: never (disabled, not desired,
        nothing pending). A job whose schedule could not be computed is retried every tick."""
        if state.disabled or name not in self.desired:
            return None
        if state.schedule_errors:
            return float("-inf")
        if state.next_effective_at is None:
            return None
        return max(state.next_effective_at, self.hold_until.get(name, float("-inf")))

    async def run_forever(self, stop: asyncio.Event) -> None:
        """Tick, sleep until the next fire (bounded), repeat until ``stop`` is set."""
        while not stop.is_set():
            self.wake.clear()
            await self.tick()
            delay = self._delay(self._wake_at, self._upcoming)
            stopper = asyncio.ensure_future(stop.wait())
            waker = asyncio.ensure_future(self.wake.wait())
            try:
                await asyncio.wait({stopper, waker}, timeout=delay,
                                   return_when=asyncio.FIRST_COMPLETED)
            finally:
                stopper.cancel()
                waker.cancel()

    def next_delay(self) -> float:
        """How long the timer would sleep now, computed from every job (the timer itself uses
        what its last tick found, so an idle daemon does no O(jobs) work per wake-up)."""
        now = self.now()
        keys = [key for key in (self._wake_key(name, state)
                                for name, state in self.states.items()) if key is not None]
        upcoming = min((key for key in keys if key > now), default=None)
        return self._delay(min(keys, default=None), upcoming)

    def _delay(self, earliest: float | None, upcoming: float | None = None) -> float:
        """How long to sleep, given the earliest wake-up and the earliest one still to come
        (they differ while a due job waits for its run or for a run slot)."""
        if earliest is None:
            return self.config.max_timer_delay
        now = self.now()
        if earliest <= now:
            # Looked at again after a pause (no hot loop), or sooner if a fire comes first.
            delay = self.config.past_due_delay
            if upcoming is not None and upcoming > now:
                delay = min(delay, self._until(upcoming, now))
            return delay
        return min(self._until(earliest, now), self.config.max_timer_delay)

    def _until(self, fire: float, now: float) -> float:
        # Wake to arm it ``arm_ahead`` early; inside the lead already, it was left to its slot.
        arm_at = fire - self.config.arm_ahead
        return arm_at - now if arm_at > now else fire - now

    if TYPE_CHECKING:  # the service's, declared for the type checker only
        def now(self) -> float: ...

        async def tick(self) -> None: ...
