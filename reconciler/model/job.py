"""The ``ScheduledJob`` and ``Channel`` kinds, the same in a git file and as a custom resource."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Annotated, Literal

from pydantic import BeforeValidator, Field, ValidationInfo, field_validator

from reconciler import API_VERSION
from reconciler.model.base import SpecModel
from reconciler.model.channel import ChannelSpec
from reconciler.model.delivery import Delivery, FailureAlert, coerce_failure_alert
from reconciler.model.duration import Duration
from reconciler.model.enums import TRANSIENT_CLASSES, CatchUpPolicy, ConcurrencyPolicy, ErrorClass
from reconciler.model.run import Run
from reconciler.model.schedule import Schedule

NAME_PATTERN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
_NAME = re.compile(NAME_PATTERN)


def _check_name(value: str) -> str:
    if len(value) > 63:
        raise ValueError(f"name is {len(value)} characters long: use at most 63")
    if not _NAME.match(value):
        suggestion = re.sub(r"[^a-z0-9-]+", "-", value.lower()).strip("-")
        raise ValueError(
            f"name {value!r} is not a DNS-1123 label: use lowercase letters, digits and '-', "
            f"starting and ending with a letter or digit (e.g. {suggestion or 'my-job'!r})"
        )
    return value


class Metadata(SpecModel):
    name: str = Field(
        description="The id: a lowercase DNS-1123 label (<= 63 chars), unique per kind.",
        json_schema_extra={"pattern": NAME_PATTERN, "maxLength": 63},
    )
    namespace: str | None = Field(default=None, description="Kubernetes namespace (cluster only).")
    labels: dict[str, str] = Field(default_factory=dict, description="Free-form labels.")
    annotations: dict[str, str] = Field(default_factory=dict, description="Free-form annotations.")

    @field_validator("name")
    @classmethod
    def _dns_label(cls, value: str) -> str:
        return _check_name(value)


class CatchUp(SpecModel):
    policy: CatchUpPolicy = Field(
        default=CatchUpPolicy.LATEST,
        description="After downtime: latest (run the newest missed slot once), all, or none.",
    )
    window: Duration | None = Field(
        default=None, description="Only slots missed within this window are caught up."
    )


class Retry(SpecModel):
    max_attempts: int = Field(
        default=3, ge=0, le=20, description="Retries of a failed one-shot after its first attempt."
    )
    backoff: list[Duration] = Field(
        default_factory=lambda: [timedelta(seconds=30), timedelta(minutes=1),
                                 timedelta(minutes=5)],
        description="Delay before each retry; the last repeats.",
    )
    retry_on: list[ErrorClass] = Field(
        default_factory=lambda: list(TRANSIENT_CLASSES),
        description="Error classes that are retried.",
    )


DEFAULT_BACKOFF = [timedelta(seconds=30), timedelta(minutes=1), timedelta(minutes=5),
                   timedelta(minutes=15), timedelta(hours=1)]


class JobSpec(SpecModel):
    description: str | None = Field(default=None, description="What the job is for.")
    schedule: Schedule = Field(description="When it fires: exactly one of cron, every, at.")
    suspend: bool = Field(default=False, description="Stop firing; the schedule is kept.")
    run: Run = Field(description="What it runs: exactly one executor.")
    timeout: Duration = Field(
        default=timedelta(minutes=10), description="Kill the run after this long; 0 = no limit."
    )
    concurrency_policy: ConcurrencyPolicy = Field(
        default=ConcurrencyPolicy.FORBID,
        description="When a run is still going: Forbid (skip), Allow, Replace or Queue.",
    )
    max_concurrent: int = Field(
        default=1, ge=1, description="Concurrent runs allowed under concurrencyPolicy Allow."
    )
    catch_up: CatchUp = Field(default_factory=CatchUp, description="Missed slots after downtime.")
    starting_deadline: Duration | None = Field(
        default=None, description="Skip (recorded missed) an occurrence that would start later."
    )
    alert_on_missed: bool = Field(default=False, description="Alert when an occurrence is missed.")
    retry: Retry = Field(default_factory=Retry, description="Retries of failed one-shots.")
    backoff: list[Duration] = Field(
        default_factory=lambda: list(DEFAULT_BACKOFF),
        description="Delays after consecutive failures of a recurring job; the last repeats.",
    )
    delivery: Delivery | None = Field(default=None, description="Where the result goes.")
    failure_alert: Annotated[
        FailureAlert | None,
        BeforeValidator(coerce_failure_alert, json_schema_input_type=FailureAlert | bool | None),
    ] = Field(
        default=None, description="Alerting on repeated failure; false turns it off."
    )
    delete_after_run: bool | None = Field(
        default=None, description="One-shots only: forget the job's state after it succeeds."
    )

    @field_validator("timeout")
    @classmethod
    def _timeout_not_negative(cls, value: timedelta) -> timedelta:
        if value < timedelta(0):
            raise ValueError("timeout cannot be negative: use e.g. 10m, or 0 for no limit")
        return value

    @field_validator("backoff")
    @classmethod
    def _backoff_not_empty(cls, value: list[timedelta]) -> list[timedelta]:
        if not value:
            raise ValueError("backoff needs at least one delay, e.g. [30s, 1m, 5m]")
        return value

    @field_validator("delete_after_run")
    @classmethod
    def _one_shot_only(cls, value: bool | None, info: ValidationInfo) -> bool | None:
        schedule = info.data.get("schedule")
        if value is not None and schedule is not None and schedule.at is None:
            raise ValueError("deleteAfterRun only applies to one-shot (at) schedules: remove it")
        return value


class ScheduledJob(SpecModel):
    """A job: when it fires, what it runs, where its result goes."""

    api_version: Literal["reconciler.dev/v1"] = Field(description=f"Always {API_VERSION}.")
    kind: Literal["ScheduledJob"] = Field(description="ScheduledJob.")
    metadata: Metadata = Field(description="Name (the id), namespace, labels, annotations.")
    spec: JobSpec = Field(description="The job: schedule, run, policies, delivery.")

    @property
    def name(self) -> str:
        return self.metadata.name


class Channel(SpecModel):
    """A named chat or webhook destination that jobs and alerts refer to."""

    api_version: Literal["reconciler.dev/v1"] = Field(description=f"Always {API_VERSION}.")
    kind: Literal["Channel"] = Field(description="Channel.")
    metadata: Metadata = Field(description="Name (the id), namespace, labels, annotations.")
    spec: ChannelSpec = Field(description="The destination: type, url or token, signing secret.")

    @property
    def name(self) -> str:
        return self.metadata.name


KINDS: dict[str, type[ScheduledJob] | type[Channel]] = {
    "ScheduledJob": ScheduledJob,
    "Channel": Channel,
}
