"""One-shot schedules (``at``): a single instant, spent once the job has completed a run for it.

A completed one-shot has no next fire, unless its ``at`` is moved later than its last run: that
is a new request, and it fires at the new instant. Retries of a failed attempt are the engine's
business (they are not schedule fires), so completion is what spends a one-shot.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class OneShot:
    """A one-shot at ``at_ms`` given what the state says about its runs (milliseconds)."""

    at_ms: int
    completed_ms: int | None = None    # when a run of the job last completed
    last_start_ms: int | None = None   # when that run (or any later one) started

    @property
    def spent(self) -> bool:
        if self.completed_ms is None:
            return False
        last_run = self.last_start_ms if self.last_start_ms is not None else self.completed_ms
        return self.at_ms <= last_run

    def next_after(self, instant_ms: int) -> int | None:
        """``at`` if it is strictly after ``instant_ms`` and not spent."""
        if self.spent or self.at_ms <= instant_ms:
            return None
        return self.at_ms

    def at_or_before(self, instant_ms: int) -> int | None:
        """``at`` if it is at or before ``instant_ms`` and not spent (a missed one-shot)."""
        if self.spent or self.at_ms > instant_ms:
            return None
        return self.at_ms
