"""The daemon's garbage-collector policy: long-lived data out of the collector's way.

A daemon holds every job's spec and state for its whole life, and a wave of runs allocates
thousands of short-lived records. With CPython's defaults, the collections those allocations
trigger keep walking the long-lived objects: at 10,000 jobs that was about a fifth of the
engine's time and made it fall behind a 10,000-runs-per-second wave. Freezing what is loaded
(``gc.freeze``) after each reconcile moves it to the permanent generation, and a larger
first-generation threshold makes young collections rarer (garbage without cycles is freed by
reference counting either way).
"""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 50_000  # allocations between young collections (CPython's default: 700)


def tune_collector() -> None:
    """Once per process, before the daemon's work starts."""
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)


def settle() -> None:
    """After loading specs and state: what is alive now is long-lived."""
    gc.freeze()
