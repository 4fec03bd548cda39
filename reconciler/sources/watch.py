"""File events for the spec directory (watchdog), reduced to "something changed".

The only module that imports watchdog. Events arrive on watchdog's thread and are handed to
the caller's thread-safe callback; the daemon debounces them and also re-reads periodically,
so a missed event is never permanent.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

from reconciler.sources.loader import SPEC_SUFFIXES


class _Handler(FileSystemEventHandler):
    def __init__(self, on_change: Callable[[], None]) -> None:
        self._on_change = on_change

    def on_any_event(self, event: FileSystemEvent) -> None:
        paths = [str(event.src_path), str(getattr(event, "dest_path", "") or "")]
        if event.is_directory or any(p.endswith(SPEC_SUFFIXES) for p in paths):
            self._on_change()


class SpecWatcher:
    """Calls ``on_change`` (from another thread) when a spec file may have changed."""

    def __init__(self, directory: str | Path, on_change: Callable[[], None]) -> None:
        self._observer = Observer()
        self._observer.daemon = True
        self._observer.schedule(_Handler(on_change), str(directory), recursive=True)

    def start(self) -> None:
        self._observer.start()

    def stop(self) -> None:
        self._observer.stop()
        self._observer.join(timeout=5)
