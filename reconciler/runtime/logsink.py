"""One log line per event (reconcile, run start/finish, skip, alert), for people or machines.

Text (default) reads at a glance; ``--log-format json`` prints one JSON object per line with
stable keys: ``ts``, ``event``, ``job``, ``run``, and the event's own fields.
"""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO

from reconciler.core.plan import JobChange
from reconciler.core.timefmt import iso_utc
from reconciler.model.state import RunRecord, SkipRecord
from reconciler.runtime.events import Alert


class LogSink:
    def __init__(self, fmt: str = "text", stream: TextIO | None = None) -> None:
        self._json = fmt == "json"
        self._stream = stream or sys.stderr

    def emit(self, at: float | None, event: str, **fields: Any) -> None:
        fields = {key: value for key, value in fields.items() if value is not None}
        if self._json:
            line = json.dumps({"ts": iso_utc(at), "event": event, **fields}, default=str)
        else:
            details = " ".join(f"{key}={_text(value)}" for key, value in fields.items())
            line = f"{iso_utc(at)} {event:<12} {details}".rstrip()
        print(line, file=self._stream, flush=True)

    def reconciled(self, changes: list[JobChange], at: float) -> None:
        for change in changes:
            self.emit(at, "reconcile", job=change.name, change=change.kind,
                      next=iso_utc(change.state.next_effective_at) if change.state else None,
                      effects="; ".join(change.effects) or None)

    def run_started(self, run: RunRecord) -> None:
        self.emit(run.started_at, "run-start", job=run.job, run=run.run_id,
                  slot=iso_utc(run.scheduled_at), attempt=run.attempt, trigger=run.trigger)

    def run_finished(self, run: RunRecord) -> None:
        duration = None if run.finished_at is None else round(run.finished_at - run.started_at, 3)
        self.emit(run.finished_at, "run-finish", job=run.job, run=run.run_id, status=run.status,
                  seconds=duration, error=run.error, summary=run.summary)

    def skipped(self, skip: SkipRecord) -> None:
        self.emit(skip.recorded_at, "skip", job=skip.job, slot=iso_utc(skip.scheduled_at),
                  reason=skip.reason)

    def alert(self, alert: Alert) -> None:
        self.emit(alert.at, "alert", job=alert.job, kind=alert.kind, message=alert.message)

    def delivery(self, record: dict[str, Any]) -> None:
        self.emit(record.get("at"), "delivery", **{k: v for k, v in record.items() if k != "at"})

    def info(self, at: float, event: str, **fields: Any) -> None:
        self.emit(at, event, **fields)


def _text(value: Any) -> str:
    text = str(value)
    return json.dumps(text) if (" " in text or "=" in text or not text) else text
