"""Jobs, channels, finished runs and fixtures for the delivery tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from reconciler.model.channel import ChannelSpec
from reconciler.model.job import ScheduledJob
from reconciler.model.state import RunRecord

T0 = 1_772_442_000.0  # 2026-03-02T09:00:00Z
FIXTURES = Path(__file__).parent / "fixtures"


def job(name: str = "daily-digest", **spec: Any) -> ScheduledJob:
    body: dict[str, Any] = {"schedule": {"cron": "0 9 * * *"}, "run": {"command": ["true"]}}
    body.update(spec)
    return ScheduledJob.model_validate({
        "apiVersion": "reconciler.dev/v1", "kind": "ScheduledJob",
        "metadata": {"name": name}, "spec": body})


def channel(kind: str, **fields: Any) -> ChannelSpec:
    return ChannelSpec.model_validate({"type": kind, **fields})


def finished_run(status: str = "ok", *, job: str = "daily-digest", run_id: str = "run-1",
                 scheduled_at: float | None = T0, started_at: float = T0 + 4,
                 duration: float = 90.0, **fields: Any) -> RunRecord:
    return RunRecord(run_id=run_id, occurrence_key=f"occ-{run_id}", job=job,
                     scheduled_at=scheduled_at, started_at=started_at,
                     finished_at=started_at + duration, status=status,  # type: ignore[arg-type]
                     **fields)


def fixture(name: str) -> Any:
    return json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))["example"]


def shape(value: Any) -> Any:
    """The structure of a JSON value: keys and value types, not the values."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [shape(value[0])] if value else []
    return type(value).__name__


SLACK_LIKE = {"ops": channel("slack", url={"fromEnv": "OPS_SLACK_URL"})}
