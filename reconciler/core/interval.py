"""Anchored intervals (DESIGN.md §3.2): fires fall on ``anchor + k*every`` and nothing moves them.

All arithmetic is in integer milliseconds, so a grid point computed a million intervals out is
exactly on the grid: there is no float accumulation, and run durations are not an input at all.
The caller decides where the grid starts (``first_index``): 0 when the spec names an anchor (the
anchor is the first fire), 1 when the anchor is the moment the job was first reconciled (the
job did not exist before it, so its first fire is one interval later).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class IntervalGrid:
    """The instants ``anchor_ms + k*every_ms`` for every ``k >= first_index``."""

    anchor_ms: int
    every_ms: int
    first_index: int = 0

    def __post_init__(self) -> None:
        if self.every_ms <= 0:
            raise ValueError("an interval must be positive")

    @property
    def first_ms(self) -> int:
        return self.anchor_ms + self.first_index * self.every_ms

    def next_after(self, instant_ms: int) -> int:
        """The first grid point strictly after ``instant_ms``."""
        index = (instant_ms - self.anchor_ms) // self.every_ms + 1
        return self.anchor_ms + max(index, self.first_index) * self.every_ms

    def at_or_before(self, instant_ms: int) -> int | None:
        """The last grid point at or before ``instant_ms``; ``None`` before the first one."""
        index = (instant_ms - self.anchor_ms) // self.every_ms
        if index < self.first_index:
            return None
        return self.anchor_ms + index * self.every_ms
