"""Load specs for the commands that act on them (plan, simulate, run, trigger)."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from reconciler.core.jobview import DesiredJob
from reconciler.errors import SpecError, SpecLoadError, UsageError
from reconciler.model.job import Channel
from reconciler.sources.loader import load_paths


def load_desired(
    paths: Sequence[str], now: float | None = None, revision: str | None = None
) -> dict[str, DesiredJob]:
    """Valid jobs by name; any error stops the command with the diagnostics on stderr."""
    return load_specs(paths, now, revision)[0]


def load_specs(
    paths: Sequence[str], now: float | None = None, revision: str | None = None
) -> tuple[dict[str, DesiredJob], dict[str, Channel]]:
    """Valid jobs and channels by name; any error stops the command (diagnostics on stderr)."""
    try:
        result = load_paths(paths, now=now)
    except SpecLoadError as exc:
        raise UsageError(str(exc)) from exc
    if result.errors:
        for diagnostic in result.errors:
            print(diagnostic.render(), file=sys.stderr)
        raise SpecError(
            f"{len(result.errors)} error(s) in the specs: fix them (see `reconciler validate`)"
        )
    jobs = {job.name: DesiredJob.of(job, revision) for job in result.jobs}
    return jobs, {channel.name: channel for channel in result.channels}
