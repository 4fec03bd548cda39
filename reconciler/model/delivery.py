"""Where a job's result goes (``spec.delivery``) and who hears about failures (``failureAlert``)."""

from __future__ import annotations

from datetime import timedelta
from typing import Literal, Self

from pydantic import Field, model_validator

from reconciler.model.base import SpecModel
from reconciler.model.duration import Duration
from reconciler.model.enums import DeliveryOn
from reconciler.model.secrets import SecretValue


class WebhookTarget(SpecModel):
    """POST the result as JSON, signed with HMAC-SHA256 when a secret is set."""

    url: SecretValue = Field(description="Receiver URL (or a reference to it).")
    secret: SecretValue | None = Field(
        default=None, description="HMAC secret for X-Reconciler-Signature (use a reference)."
    )
    headers: dict[str, SecretValue] = Field(default_factory=dict, description="Extra headers.")


class Delivery(SpecModel):
    """Exactly one of mode: none, channel or webhook."""

    mode: Literal["none"] | None = Field(default=None, description="none: deliver nothing.")
    channel: str | None = Field(default=None, min_length=1, description="Name of a Channel.")
    webhook: WebhookTarget | None = Field(default=None, description="A signed webhook.")
    on: list[DeliveryOn] = Field(
        default_factory=lambda: [DeliveryOn.OK],
        description="Which results are delivered: ok, error (default [ok]).",
    )
    format: str | None = Field(default=None, description="Message template; default per channel.")
    deliver_stale: bool = Field(
        default=False, description="Deliver results of runs that started long after their slot."
    )

    @model_validator(mode="after")
    def _exactly_one_target(self) -> Self:
        targets = [t for t in (self.mode, self.channel, self.webhook) if t is not None]
        if len(targets) != 1:
            raise ValueError(
                "delivery needs exactly one of mode: none, channel: NAME or webhook: {url: ...}"
            )
        return self


class FailureAlert(SpecModel):
    """Alert after repeated failures, then at most once per cooldown; a recovery notice follows."""

    enabled: bool = Field(default=True, description="false turns alerts off for this job.")
    channel: str | None = Field(default=None, min_length=1, description="Name of a Channel.")
    webhook: WebhookTarget | None = Field(default=None, description="A signed webhook.")
    after: int = Field(default=2, ge=1, description="Consecutive failures before alerting.")
    cooldown: Duration = Field(
        default=timedelta(hours=1), description="Minimum time between two alerts of one job."
    )

    @model_validator(mode="after")
    def _one_target(self) -> Self:
        if self.channel is not None and self.webhook is not None:
            raise ValueError("failureAlert takes a channel or a webhook, not both")
        return self


def coerce_failure_alert(value: object) -> object:
    """``failureAlert: false`` is the short way to write ``{enabled: false}``."""
    if value is False:
        return {"enabled": False}
    if value is True:
        return {}
    return value
