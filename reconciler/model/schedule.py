"""The ``spec.schedule`` block: exactly one of ``cron``, ``every`` or ``at``."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Self

from pydantic import Field, ValidationInfo, field_validator, model_validator

from reconciler.model.base import SpecModel
from reconciler.model.duration import Duration
from reconciler.model.timestamp import Timestamp


class Schedule(SpecModel):
    """When a job fires. Exactly one of ``cron``, ``every`` or ``at``."""

    cron: str | None = Field(
        default=None,
        description=(
            "A cron expression: five fields (minute hour day-of-month month day-of-week) with "
            "names, ranges, steps and lists, or an alias such as @daily. With withSeconds: true, "
            "a sixth field (seconds, 0-59) follows the five."
        ),
    )
    with_seconds: bool = Field(
        default=False,
        description="Opt in to a sixth cron field holding the seconds (cron only).",
    )
    timezone: str = Field(
        default="UTC",
        description="IANA time zone whose wall clock the cron fields match. Default UTC.",
    )
    stagger: Duration | None = Field(
        default=None,
        description=(
            "Deterministic spread window: each job fires at a fixed offset inside it, derived "
            "from its name. Default 5m for top-of-hour cron expressions, else none; 0 = exact."
        ),
    )
    every: Duration | None = Field(
        default=None,
        description="A fixed interval; fires fall on anchor + k*every.",
    )
    anchor: Timestamp | None = Field(
        default=None,
        description="The grid origin of an interval; default: when the job was first reconciled.",
    )
    at: Timestamp | None = Field(
        default=None,
        description="A one-shot instant (ISO-8601; no offset = UTC; a date alone = midnight UTC).",
    )

    @field_validator("every")
    @classmethod
    def _every_positive(cls, value: timedelta | None) -> timedelta | None:
        if value is not None and value < timedelta(seconds=1):
            raise ValueError("every must be at least 1s, e.g. every: 30m")
        return value

    @field_validator("with_seconds")
    @classmethod
    def _seconds_need_cron(cls, value: bool, info: ValidationInfo) -> bool:
        if value and info.data.get("cron") is None:
            raise ValueError("withSeconds only applies to cron: remove it")
        return value

    @field_validator("anchor")
    @classmethod
    def _anchor_needs_every(cls, value: datetime | None, info: ValidationInfo) -> datetime | None:
        if value is not None and info.data.get("every") is None:
            raise ValueError("anchor only applies to every: remove it or use every")
        return value

    @model_validator(mode="after")
    def _exactly_one_kind(self) -> Self:
        kinds = [name for name in ("cron", "every", "at") if getattr(self, name) is not None]
        if len(kinds) != 1:
            found = " and ".join(kinds) if kinds else "none"
            raise ValueError(
                f"a schedule needs exactly one of cron, every or at (found {found}); "
                "e.g. schedule: {cron: '0 9 * * *'}"
            )
        if self.stagger is not None and self.at is not None:
            raise ValueError("stagger does not apply to a one-shot (at): remove it")
        return self

    @property
    def kind(self) -> str:
        """``cron``, ``every`` or ``at``."""
        if self.cron is not None:
            return "cron"
        return "every" if self.every is not None else "at"

    def anchor_or(self, first_reconciled: datetime) -> datetime:
        return self.anchor if self.anchor is not None else first_reconciled
