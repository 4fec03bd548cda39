"""Build jobs and drive a Service on virtual time."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from reconciler.core.jobview import DesiredJob
from reconciler.model.job import ScheduledJob


def at(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


def job(name: str, schedule: dict[str, Any], **spec: Any) -> DesiredJob:
    body: dict[str, Any] = {"schedule": schedule, "run": {"command": ["true"]}}
    body.update(spec)
    return DesiredJob.of(ScheduledJob.model_validate({
        "apiVersion": "reconciler.dev/v1", "kind": "ScheduledJob",
        "metadata": {"name": name}, "spec": body}))


def jobs(*items: DesiredJob) -> dict[str, DesiredJob]:
    return {item.name: item for item in items}
