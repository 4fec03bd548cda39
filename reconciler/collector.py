"""The process's garbage-collector policy: long-lived data out of the collector's way.

A daemon holds every job's spec and state for its whole life, and a wave of runs allocates
thousands of short-lived records. With CPython's defaults the collections those allocations
trigger keep walking the long-lived objects: at 10,000 jobs that was about a fifth of the
engine's time, and loading 100,000 specs re-walked millions of new, all-alive objects. So:

- ``paused()`` around work that allocates much and frees little (loading a spec tree, the
  moment a slot's runs begin): no cyclic collection inside, one afterwards if it is due;
- ``settle()`` after the daemon loads its specs and state (and after each reconcile): what is
  alive then is long-lived and goes to the permanent generation (``gc.freeze``);
- ``tune()`` once per daemon: young collections every 50,000 allocations, not 700.

Reference counting frees everything without cycles either way; only cycles wait.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

YOUNG_THRESHOLD = 50_000  # allocations between young collections (CPython's default: 700)


def tune() -> None:
    """Once per daemon process, before its work starts."""
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)


def settle() -> None:
    """After loading specs and state: what is alive now is long-lived."""
    gc.freeze()


@contextmanager
def paused() -> Iterator[None]:
    """No cyclic collection inside (it is restored, not forced on, afterwards)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def pause() -> bool:
    """``paused()`` for a span that ends in another callback: returns what ``resume`` needs."""
    was_enabled = gc.isenabled()
    gc.disable()
    return was_enabled


def resume(was_enabled: bool) -> None:
    if was_enabled:
        gc.enable()
