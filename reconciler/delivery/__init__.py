"""Delivery: a run's result to a webhook or a chat channel, failure alerts, a durable outbox.

Modules, in the order a result travels:

- ``plan``: ``plan_deliveries(job, channels, run, result)`` decides what a finished run owes
  (the outbox entries and the run's delivery status); ``plan_alert`` does the same for an
  alert. Pure apart from rendering templates.
- ``payload``: the webhook JSON, the default message and each chat service's message shape,
  truncated to the service's limit (pure).
- ``request``: the stored envelope, the HTTP request it becomes at send time (secrets resolved,
  signatures added) and how a reply is judged.
- ``sender``: the one httpx adapter: ``Sender.send(payload, key, now) -> Verdict``.
- ``outbox``: ``OutboxWorker.run_once(now)``: send due entries, record attempts, retry with
  backoff until the maximum age, never drop an entry, never re-send a delivered one.
- ``redact``: ``redact_url`` and ``scrub``: no token or secret in any message.
"""

from __future__ import annotations

from reconciler.delivery.outbox import Attempt, OutboxPolicy, OutboxStats, OutboxWorker
from reconciler.delivery.payload import RunOutcome, default_message, webhook_body
from reconciler.delivery.plan import (
    DEFAULT_STALENESS,
    AlertNotice,
    DeliveryPlan,
    failure_message,
    outcome_of,
    plan_alert,
    plan_deliveries,
)
from reconciler.delivery.redact import redact_url, scrub
from reconciler.delivery.request import Verdict

__all__ = [
    "DEFAULT_STALENESS",
    "AlertNotice",
    "Attempt",
    "DeliveryPlan",
    "OutboxPolicy",
    "OutboxStats",
    "OutboxWorker",
    "RunOutcome",
    "Verdict",
    "default_message",
    "failure_message",
    "outcome_of",
    "plan_alert",
    "plan_deliveries",
    "redact_url",
    "scrub",
    "webhook_body",
]
