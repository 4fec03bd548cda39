"""What a finished run owes the world: the outbox entries to enqueue with its result, and why.

``plan_deliveries`` is called in phase 3 of a run (DESIGN §3.4) and its entries go into the same
``RunFinish`` as the result, so "the run ended" and "its result is owed" are one transaction.
It decides, in this order:

- ``not-requested``: no ``delivery``, ``mode: none``, a skipped run, or a result ``on`` leaves
  out (``on: [ok]``, the default, does not announce failures: alerts do that);
- ``already-delivered``: the executor said it delivered the result itself;
- ``skipped-stale``: the run started more than ``staleness`` (default 3 h) after its slot and
  the job does not say ``deliverStale: true`` — recorded, not announced;
- ``not-delivered``: the target names a channel that does not exist; the entry is recorded
  failed with that error, so it shows in status instead of vanishing;
- ``pending``: one entry, keyed by the run id (the ``Idempotency-Key`` receivers see).

``plan_alert`` builds the entry of a failure or recovery alert for the job's ``failureAlert``
target through the same machinery. Nothing here reads a clock or does I/O: instants come from
the run record or the caller.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from reconciler.core.timefmt import iso_utc
from reconciler.delivery.payload import (
    RunOutcome,
    channel_body,
    default_message,
    result_view,
    webhook_body,
)
from reconciler.delivery.request import Endpoint, Envelope
from reconciler.errors import ReconcilerError
from reconciler.executors.base import RunContext, RunResult
from reconciler.executors.templates import render, template_context
from reconciler.model.channel import ChannelSpec
from reconciler.model.delivery import Delivery as DeliverySpec
from reconciler.model.delivery import FailureAlert, WebhookTarget
from reconciler.model.enums import ChannelType
from reconciler.model.job import ScheduledJob
from reconciler.model.state import Delivery, DeliveryStatus, RunRecord

DEFAULT_STALENESS: Final[float] = 3 * 3600.0
ALERT_ERROR_EXCERPT: Final[int] = 200
Memory = Callable[[int], tuple[RunRecord, ...]]


@dataclass(frozen=True)
class DeliveryPlan:
    status: DeliveryStatus
    deliveries: tuple[Delivery, ...] = ()
    reason: str = ""


def outcome_of(run: RunRecord, result: RunResult | None) -> RunOutcome:
    """The finished ``run`` (status, times, error) with what its executor returned, if any."""
    if run.status is None or run.finished_at is None:
        raise ValueError(f"run {run.run_id} has not finished")
    return RunOutcome(
        job=run.job, run_id=run.run_id, occurrence=run.occurrence_key, status=run.status,
        scheduled_at=run.scheduled_at, started_at=run.started_at, finished_at=run.finished_at,
        attempt=run.attempt, trigger=run.trigger,
        summary=result.summary if result and result.summary is not None else run.summary,
        output=result.output if result else None, data=result.data if result else None,
        error=run.error if run.error is not None else (result.error if result else None),
    )  # fmt: skip


def _unrequested(spec: DeliverySpec | None, run: RunRecord) -> str | None:
    if spec is None or spec.mode == "none":
        return "no delivery configured" if spec is None else "delivery mode none"
    if run.status == "skipped":
        return "the run was skipped"
    wanted = {on.value for on in spec.on}
    kind = "ok" if run.status == "ok" else "error"
    if kind not in wanted:
        return f"on: {sorted(wanted)} leaves out {kind} results"
    return None


def _stale(run: RunRecord, staleness: float) -> bool:
    return run.scheduled_at is not None and run.started_at - run.scheduled_at > staleness


def plan_deliveries(
    job: ScheduledJob, channels: Mapping[str, ChannelSpec], run: RunRecord,
    result: RunResult | None, *, staleness: float = DEFAULT_STALENESS,
    memory: Memory | None = None,
) -> DeliveryPlan:
    """The entries to enqueue with ``run``'s result and the run's delivery status."""
    spec = job.spec.delivery
    reason = _unrequested(spec, run)
    if reason is not None or spec is None:
        return DeliveryPlan("not-requested", reason=reason or "")
    if result is not None and result.delivered:
        return DeliveryPlan("already-delivered", reason="the job delivered its result itself")
    if _stale(run, staleness) and not spec.deliver_stale:
        late = run.started_at - (run.scheduled_at or run.started_at)
        return DeliveryPlan("skipped-stale", reason=f"started {late:.0f}s after its slot")
    outcome = outcome_of(run, result)
    created = outcome.finished_at
    if spec.channel is not None and spec.channel not in channels:
        entry = _missing_channel(spec.channel, run.run_id, run.job, run.run_id, created)
        return DeliveryPlan("not-delivered", (entry,), entry.last_error or "")
    envelope = _result_envelope(job, spec, channels, run, outcome, memory)
    entry = Delivery(run.run_id, run.job, _label(spec.channel, envelope.endpoint),
                     envelope.dumps(), run.run_id, created)
    return DeliveryPlan("pending", (entry,))


def _label(channel: str | None, endpoint: Endpoint) -> str:
    """The entry's ``target`` as status shows it: never a URL's secret parts."""
    return f"channel {channel}" if channel is not None else endpoint.describe()


def _missing_channel(name: str, run_id: str, job: str, key: str, at: float) -> Delivery:
    error = f"channel {name!r} is not defined: add a Channel named {name} or fix the reference"
    return Delivery(run_id, job, f"channel {name}", "{}", key, at, status="failed",
                    last_error=error, updated_at=at)


def _result_envelope(job: ScheduledJob, spec: DeliverySpec, channels: Mapping[str, ChannelSpec],
                     run: RunRecord, outcome: RunOutcome, memory: Memory | None) -> Envelope:
    channel = channels[spec.channel] if spec.channel is not None else None
    endpoint = Endpoint.of_channel(channel) if channel is not None else \
        Endpoint.of_webhook(_webhook(spec))
    template = spec.format or (channel.format if channel is not None else None)
    link_template = channel.link if channel is not None else None
    variables = _variables(job, run, outcome, memory) if template or link_template else {}
    link = _render_or_none(link_template, variables, "link")
    if endpoint.kind is ChannelType.WEBHOOK:
        body = webhook_body(outcome)
        if template:
            body["text"] = _message(template, variables, outcome, link)
        return Envelope(endpoint, body)
    text = _message(template, variables, outcome, link)
    chat_id = channel.chat_id if channel is not None else None
    return Envelope(endpoint, channel_body(endpoint.kind, text, chat_id))


def _webhook(spec: DeliverySpec) -> WebhookTarget:
    if spec.webhook is None:  # the model guarantees one target; this keeps mypy honest
        raise ValueError("delivery has neither channel nor webhook")
    return spec.webhook


def _variables(job: ScheduledJob, run: RunRecord, outcome: RunOutcome,
               memory: Memory | None) -> dict[str, Any]:
    context = RunContext(job, run.run_id, run.occurrence_key, run.scheduled_at, run.started_at,
                         run.attempt, run.trigger, None, memory)
    return template_context(context, result=result_view(outcome))


def _render_or_none(template: str | None, variables: Mapping[str, Any], field: str
                    ) -> str | None:
    if not template:
        return None
    try:
        return render(template, variables, field).strip() or None
    except ReconcilerError:
        return None  # a broken link template drops the link, never the message


def _message(template: str | None, variables: Mapping[str, Any], outcome: RunOutcome,
             link: str | None) -> str:
    """The rendered ``format``; if it fails, the default message and why (never no message)."""
    if not template:
        return default_message(outcome, link)
    try:
        return render(template, variables, "delivery.format")
    except ReconcilerError as exc:
        return f"{default_message(outcome, link)}\n(format template failed: {exc})"


@dataclass(frozen=True)
class AlertNotice:
    """A failure, recovery, auto-disabled or missed alert about one job."""

    job: str
    kind: str
    at: float
    message: str
    count: int | None = None
    last_error: str | None = None
    next_attempt_at: float | None = None

    @property
    def key(self) -> str:
        """Stable per alert: re-planning the same alert after a crash keeps one entry."""
        digest = hashlib.sha256(f"{self.job}\x1f{self.kind}\x1f{self.at!r}".encode()).hexdigest()
        return f"alert-{digest[:24]}"


def failure_message(job: str, count: int, last_error: str | None,
                    next_attempt_at: float | None) -> str:
    """Job, consecutive failures, the last error's first 200 characters, the next attempt."""
    error = (last_error or "failed")[:ALERT_ERROR_EXCERPT]
    upcoming = iso_utc(next_attempt_at) or "none scheduled"
    return (f"{job} failed {count} times in a row; last error: {error}; "
            f"next attempt: {upcoming}")


def alert_body(notice: AlertNotice) -> dict[str, Any]:
    """The webhook JSON of an alert (``kind: alert`` tells it from a run result)."""
    return {
        "kind": "alert", "alert": notice.kind, "job": notice.job, "at": iso_utc(notice.at),
        "message": notice.message, "count": notice.count,
        "lastError": (notice.last_error or "")[:ALERT_ERROR_EXCERPT] or None,
        "nextAttemptAt": iso_utc(notice.next_attempt_at),
    }  # fmt: skip


def plan_alert(notice: AlertNotice, policy: FailureAlert | None,
               channels: Mapping[str, ChannelSpec]) -> Delivery | None:
    """The outbox entry for ``notice`` to ``policy``'s channel or webhook; None without one.

    The entry's ``run_id`` is its own key, so an alert never changes a run's delivery status.
    """
    if policy is None or not policy.enabled:
        return None
    key = notice.key
    if policy.channel is not None:
        channel = channels.get(policy.channel)
        if channel is None:
            return _missing_channel(policy.channel, key, notice.job, key, notice.at)
        endpoint, label = Endpoint.of_channel(channel), f"channel {policy.channel}"
    elif policy.webhook is not None:
        endpoint = Endpoint.of_webhook(policy.webhook)
        label = endpoint.describe()
    else:
        return None
    if endpoint.kind is ChannelType.WEBHOOK:
        body = alert_body(notice)
    else:
        chat_id = channels[policy.channel].chat_id if policy.channel is not None else None
        icon = "✅" if notice.kind == "recovery" else "⚠️"
        body = channel_body(endpoint.kind, f"{icon} {notice.message}", chat_id)
    return Delivery(key, notice.job, label, Envelope(endpoint, body).dumps(), key, notice.at)
