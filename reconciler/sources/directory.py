"""The directory source: the specs in a (git) directory, with the last good spec kept.

A file that becomes invalid does not remove its jobs: the jobs it defined at its last good
load keep running, and the problem is reported (Flux's "Stalled") until the file is fixed. A
file that is deleted does remove its jobs. Each load is one consistent snapshot: the reconcile
that follows applies all of its changes or none.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from reconciler import collector
from reconciler.core.jobview import DesiredJob
from reconciler.errors import SpecLoadError
from reconciler.model.diagnostics import Diagnostic
from reconciler.model.job import Channel, ScheduledJob
from reconciler.sources.gitinfo import revision
from reconciler.sources.loader import LoadResult, load_paths
from reconciler.sources.speccache import SpecCache

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SourceSnapshot:
    desired: dict[str, DesiredJob]
    channels: dict[str, Channel]
    revision: str | None
    errors: tuple[Diagnostic, ...]
    stalled: dict[str, str]  # job -> why its last good spec is still in use
    files: int


@dataclass
class _FileSpecs:
    jobs: list[ScheduledJob] = field(default_factory=list)
    channels: list[Channel] = field(default_factory=list)
    revision: str | None = None  # the commit of this file's last good load


class DirectorySource:
    """The specs of one directory. With a ``cache_path`` (the daemon's
    ``<state>/spec-cache.json``), files unchanged since the last load, in this process or
    the previous one, are not parsed again: see ``speccache``."""

    def __init__(self, directory: str | Path, cache_path: str | Path | None = None) -> None:
        self.directory = Path(directory)
        self.cache_path = Path(cache_path) if cache_path is not None else None
        self._cache: SpecCache | None = None  # read at the first load, then kept in memory
        self._last_good: dict[str, _FileSpecs] = {}

    def load(self, now: float) -> SourceSnapshot:
        """Read the directory; raises ``SpecLoadError`` only if it does not exist."""
        if not self.directory.is_dir():
            raise SpecLoadError(f"spec directory {self.directory} does not exist")
        with collector.paused():  # hashing every job allocates as much as loading them
            return self._load(now)

    def load_at_start(self, now: float) -> SourceSnapshot:
        """``load`` for a process start (the daemon's first load). What it allocates, some 25
        objects per job, lives until the specs change, as does everything allocated before it
        (imports); so it all goes to the collector's permanent generation (``gc.freeze``)
        instead of being traversed by its next few collections, which at 100,000 jobs costs a
        start over a second. Reference counting still frees what a later reload replaces."""
        snapshot = self.load(now)  # the collector is paused inside
        collector.settle()
        return snapshot

    def _load(self, now: float) -> SourceSnapshot:
        rev = revision(self.directory)
        cache = self._parse_cache()
        result = load_paths([str(self.directory)], now=now, cache=cache)
        if cache is not None:
            self._save(cache)
        broken = {d.file for d in result.errors if d.file is not None}
        current = _by_file(result, rev)
        seen = _files(result)
        stalled: dict[str, str] = {}
        for file in list(self._last_good):
            if file not in seen:
                del self._last_good[file]  # deleted: its jobs go
        for file in seen:
            if file in broken and file in self._last_good:
                why = _first_error(result.errors, file)
                for job in self._last_good[file].jobs:
                    stalled[job.name] = f"last good spec in use; {why}"
            elif file not in broken:
                self._last_good[file] = current.get(file, _FileSpecs(revision=rev))
        desired, channels = self._merged()
        return SourceSnapshot(desired, channels, rev, tuple(result.errors), stalled,
                              result.files)

    def _parse_cache(self) -> SpecCache | None:
        if self._cache is None and self.cache_path is not None:
            self._cache = SpecCache.read(self.cache_path)
        return self._cache

    def _save(self, cache: SpecCache) -> None:
        """Drop the entries of files edited or deleted since the last load and write the cache
        if anything changed. Best effort: the cache only saves time, so a state directory
        that cannot be written (yet) is no reason to fail a load."""
        cache.prune()
        if not cache.changed or self.cache_path is None:
            return
        try:
            cache.write(self.cache_path)
        except OSError as exc:
            _log.debug("spec cache %s not written: %s", self.cache_path, exc)

    def _merged(self) -> tuple[dict[str, DesiredJob], dict[str, Channel]]:
        desired: dict[str, DesiredJob] = {}
        channels: dict[str, Channel] = {}
        for file in sorted(self._last_good):
            specs = self._last_good[file]
            for job in specs.jobs:
                desired.setdefault(job.name, DesiredJob.of(job, specs.revision))
            for channel in specs.channels:
                channels.setdefault(channel.name, channel)
        return desired, channels


def _by_file(result: LoadResult, rev: str | None) -> dict[str, _FileSpecs]:
    grouped: dict[str, _FileSpecs] = {}
    for document in result.documents:
        specs = grouped.setdefault(document.file, _FileSpecs(revision=rev))
        if isinstance(document.resource, ScheduledJob):
            specs.jobs.append(document.resource)
        elif isinstance(document.resource, Channel):
            specs.channels.append(document.resource)
    return grouped


def _files(result: LoadResult) -> set[str]:
    files = {d.file for d in result.documents}
    files |= {d.file for d in result.diagnostics if d.file is not None}
    return files | set(result.file_names)


def _first_error(errors: Iterable[Diagnostic], file: str) -> str:
    for diagnostic in errors:
        if diagnostic.file == file:
            return diagnostic.render()
    return f"{file} has errors"
