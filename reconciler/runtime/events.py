"""What the service tells the world: every run, skip, alert and reconcile, as it happens.

The daemon logs these; ``simulate`` collects them into its report; tests assert on them.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any, Protocol

from reconciler.core.plan import JobChange
from reconciler.model.state import RunRecord, SkipRecord


@dataclass(frozen=True)
class Alert:
    job: str
    at: float
    kind: str  # failure | recovery | auto-disabled | missed
    message: str


class EventSink(Protocol):
    def reconciled(self, changes: list[JobChange], at: float) -> None: ...
    def run_started(self, run: RunRecord) -> None: ...
    def run_finished(self, run: RunRecord) -> None: ...
    def skipped(self, skip: SkipRecord) -> None: ...
    def alert(self, alert: Alert) -> None: ...
    def delivery(self, record: dict[str, Any]) -> None: ...


@dataclass
class CollectingSink:
    """Keeps every event in memory, in order."""

    changes: list[tuple[float, JobChange]] = field(default_factory=list)
    started: list[RunRecord] = field(default_factory=list)
    finished: list[RunRecord] = field(default_factory=list)
    skips: list[SkipRecord] = field(default_factory=list)
    alerts: list[Alert] = field(default_factory=list)
    deliveries: list[dict[str, Any]] = field(default_factory=list)

    def reconciled(self, changes: list[JobChange], at: float) -> None:
        self.changes.extend((at, change) for change in changes)

    def run_started(self, run: RunRecord) -> None:
        self.started.append(run)

    def run_finished(self, run: RunRecord) -> None:
        self.finished.append(run)

    def skipped(self, skip: SkipRecord) -> None:
        self.skips.append(skip)

    def alert(self, alert: Alert) -> None:
        self.alerts.append(alert)

    def delivery(self, record: dict[str, Any]) -> None:
        self.deliveries.append(record)


class FanoutSink:
    """Hands every event to several sinks (logs, metrics, delivery), in order.

    Events are emitted after the state is committed; a sink that fails (a full disk under the
    log, a metrics bug) is reported on stderr and never breaks the writer or the other sinks.
    """

    def __init__(self, sinks: list[EventSink]) -> None:
        self.sinks = list(sinks)

    def add(self, sink: EventSink) -> None:
        self.sinks.append(sink)

    def _each(self, method: str, *args: Any) -> None:
        for sink in self.sinks:
            try:
                getattr(sink, method)(*args)
            except Exception as exc:  # a sink must never take the service down
                print(f"reconciler: event sink {type(sink).__name__}.{method} failed: {exc!r}",
                      file=sys.stderr)

    def reconciled(self, changes: list[JobChange], at: float) -> None:
        self._each("reconciled", changes, at)

    def run_started(self, run: RunRecord) -> None:
        self._each("run_started", run)

    def run_finished(self, run: RunRecord) -> None:
        self._each("run_finished", run)

    def skipped(self, skip: SkipRecord) -> None:
        self._each("skipped", skip)

    def alert(self, alert: Alert) -> None:
        self._each("alert", alert)

    def delivery(self, record: dict[str, Any]) -> None:
        self._each("delivery", record)
