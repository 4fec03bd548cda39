"""Stagger (DESIGN.md §3.3): a deterministic per-job offset that spreads jobs sharing a slot.

A job's offset is ``uint32_be(sha256(name)[0:4]) mod window`` in milliseconds, so it depends on
the job's name alone: the same on every machine and across restarts, and kept by any schedule
edit that keeps the name. The window is the spec's ``stagger``; without one it is 5 minutes for
top-of-hour cron expressions (minute ``0``, hour ``*`` or ``*/N``: the slot everyone picks) and
zero otherwise. ``stagger: 0`` means exact.
"""

from __future__ import annotations

import hashlib
from datetime import timedelta

from reconciler.core.cronexpr import parse_cron
from reconciler.model.schedule import Schedule

DEFAULT_TOP_OF_HOUR_WINDOW_MS = 5 * 60 * 1000


def stagger_offset_ms(name: str, window_ms: int) -> int:
    """The job's offset inside a window of ``window_ms`` milliseconds (0 for no window)."""
    if window_ms <= 0:
        return 0
    digest = hashlib.sha256(name.encode("utf-8")).digest()
    return int.from_bytes(digest[:4], "big") % window_ms


def stagger_window_ms(schedule: Schedule) -> int:
    """The schedule's stagger window in milliseconds: explicit, or the top-of-hour default."""
    if schedule.stagger is not None:
        return _milliseconds(schedule.stagger)
    if schedule.cron is not None and parse_cron(schedule.cron, schedule.with_seconds).top_of_hour:
        return DEFAULT_TOP_OF_HOUR_WINDOW_MS
    return 0


def job_offset_ms(name: str, schedule: Schedule) -> int:
    """How many milliseconds after each nominal fire the job ``name`` actually starts."""
    return stagger_offset_ms(name, stagger_window_ms(schedule))


def _milliseconds(value: timedelta) -> int:
    return round(value.total_seconds() * 1000)
