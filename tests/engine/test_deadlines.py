"""Run timeouts grouped by deadline (``runtime.deadlines``), on virtual time."""

from __future__ import annotations

import asyncio
import gc

from reconciler import collector
from reconciler.runtime.deadlines import Deadlines
from reconciler.runtime.virtual import LoopClock, run_virtual

T0 = 1_767_225_600.0


class Item:
    def __init__(self, name: str) -> None:
        self.name = name


def test_items_still_watched_expire_at_their_deadline_and_released_ones_do_not() -> None:
    async def main() -> list[tuple[str, float]]:
        loop = asyncio.get_running_loop()
        clock = LoopClock(loop, T0)
        expired: list[tuple[str, float]] = []
        deadlines: Deadlines[Item] = Deadlines(clock, lambda item: expired.append(
            (item.name, clock.now() - T0)))
        a, b, c, d = Item("a"), Item("b"), Item("c"), Item("d")
        deadlines.watch(a, T0 + 10)
        deadlines.watch(b, T0 + 10)  # shares a's timer
        deadlines.watch(c, T0 + 20)
        deadlines.watch(d, T0 + 10)
        deadlines.release(b, T0 + 10)
        deadlines.release(c, T0 + 20)  # its group empties; nothing expires at +20
        assert len(deadlines) == 2
        await asyncio.sleep(30)
        assert len(deadlines) == 0
        return expired

    assert sorted(run_virtual(main())) == [("a", 10.0), ("d", 10.0)]


def test_a_deadline_already_past_expires_at_once() -> None:
    async def main() -> list[str]:
        clock = LoopClock(asyncio.get_running_loop(), T0)
        expired: list[str] = []
        deadlines: Deadlines[Item] = Deadlines(clock, lambda item: expired.append(item.name))
        deadlines.watch(Item("late"), T0 - 5)
        await asyncio.sleep(0.001)
        return expired

    assert run_virtual(main()) == ["late"]


def test_releasing_an_item_never_watched_is_harmless() -> None:
    async def main() -> int:
        clock = LoopClock(asyncio.get_running_loop(), T0)
        deadlines: Deadlines[Item] = Deadlines(clock, lambda item: None)
        deadlines.release(Item("x"), T0 + 1)
        return len(deadlines)

    assert run_virtual(main()) == 0


def test_settling_freezes_what_is_alive_and_raises_the_young_threshold() -> None:
    before = gc.get_threshold()
    try:
        collector.tune()
        assert gc.get_threshold()[0] == collector.YOUNG_THRESHOLD
        assert gc.get_threshold()[1:] == before[1:]
        collector.settle()
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
