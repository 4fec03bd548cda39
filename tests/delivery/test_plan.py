"""What a finished run owes: statuses (not-requested, already-delivered, skipped-stale, ...),
``on`` filtering, the entry's key and payload, format templates, and alert entries."""

from __future__ import annotations

from typing import Any

import pytest

from reconciler.delivery.plan import (
    AlertNotice,
    failure_message,
    plan_alert,
    plan_deliveries,
)
from reconciler.delivery.request import Envelope
from reconciler.executors.base import RunResult
from reconciler.model.delivery import FailureAlert
from reconciler.model.enums import ChannelType
from reconciler.model.secrets import SecretRef
from tests.delivery.helpers import T0, channel, finished_run, fixture, job, shape

SLACK = {"ops": channel("slack", url={"fromEnv": "OPS_SLACK_URL"})}
HOOK = {"webhook": {"url": "https://hooks.example.com/in?token=abc", "secret": {"fromEnv": "S"}}}


def _body(plan: Any) -> dict[str, Any]:
    (entry,) = plan.deliveries
    return Envelope.loads(entry.payload).body


@pytest.mark.parametrize(
    ("spec", "status", "why"),
    [({}, "ok", "no delivery configured"),
     ({"delivery": {"mode": "none"}}, "ok", "delivery mode none"),
     ({"delivery": {"channel": "ops"}}, "error", "leaves out error"),
     ({"delivery": {"channel": "ops", "on": ["error"]}}, "ok", "leaves out ok"),
     ({"delivery": {"channel": "ops", "on": ["ok", "error"]}}, "skipped", "skipped")])
def test_not_requested(spec: dict[str, Any], status: str, why: str) -> None:
    plan = plan_deliveries(job(**spec), SLACK, finished_run(status), RunResult("ok"))
    assert plan.status == "not-requested" and plan.deliveries == () and why in plan.reason


def test_on_error_delivers_failures_timeouts_and_interruptions() -> None:
    spec = job(delivery={"channel": "ops", "on": ["error"]})
    for status in ("error", "timeout", "interrupted"):
        plan = plan_deliveries(spec, SLACK, finished_run(status, error="boom"), None)
        assert plan.status == "pending", status
        assert "boom" in _body(plan)["text"]


def test_a_result_the_job_delivered_itself_is_not_sent_again() -> None:
    plan = plan_deliveries(job(delivery={"channel": "ops"}), SLACK, finished_run(),
                           RunResult("ok", delivered=True))
    assert plan.status == "already-delivered" and plan.deliveries == ()


def test_stale_news_is_recorded_not_announced_unless_deliver_stale() -> None:
    late = finished_run(started_at=T0 + 3 * 3600 + 1)
    plan = plan_deliveries(job(delivery={"channel": "ops"}), SLACK, late, RunResult("ok"))
    assert plan.status == "skipped-stale" and plan.deliveries == ()
    eager = job(delivery={"channel": "ops", "deliverStale": True})
    assert plan_deliveries(eager, SLACK, late, RunResult("ok")).status == "pending"
    on_time = finished_run(started_at=T0 + 3 * 3600)
    assert plan_deliveries(job(delivery={"channel": "ops"}), SLACK, on_time, None).status \
        == "pending"
    custom = plan_deliveries(job(delivery={"channel": "ops"}), SLACK,
                             finished_run(started_at=T0 + 61), None, staleness=60)
    assert custom.status == "skipped-stale"
    manual = finished_run(scheduled_at=None, started_at=T0 + 10 * 3600)
    assert plan_deliveries(job(delivery={"channel": "ops"}), SLACK, manual, None).status \
        == "pending"


def test_the_entry_is_keyed_by_the_run_id_and_labelled_without_secrets() -> None:
    plan = plan_deliveries(job(delivery=HOOK), {}, finished_run(run_id="abc-1"),
                           RunResult("ok", summary="42 tickets", data={"tickets": 42}))
    (entry,) = plan.deliveries
    assert entry.idempotency_key == "abc-1" and entry.run_id == "abc-1"
    assert entry.status == "pending" and entry.created_at == T0 + 94
    assert entry.target == "webhook https://hooks.example.com/in"
    envelope = Envelope.loads(entry.payload)
    assert envelope.endpoint.secret == SecretRef(from_env="S")  # a reference, not a value
    assert shape(envelope.body) == shape(fixture("webhook"))
    assert envelope.body["summary"] == "42 tickets" and envelope.body["data"] == {"tickets": 42}
    assert "text" not in envelope.body
    slack = plan_deliveries(job(delivery={"channel": "ops"}), SLACK, finished_run(), None)
    assert slack.deliveries[0].target == "channel ops"


def test_a_missing_channel_is_recorded_not_delivered_with_its_error() -> None:
    plan = plan_deliveries(job(delivery={"channel": "gone"}), SLACK, finished_run(), None)
    (entry,) = plan.deliveries
    assert plan.status == "not-delivered" and entry.status == "failed"
    assert "channel 'gone' is not defined" in (entry.last_error or "")


def test_format_template_renders_with_result_job_and_run() -> None:
    fmt = ("{{ job.name }} {{ result.status }} {{ result.summary }} {{ result.data.n }} "
           "{{ result.duration | duration }} {{ run.attempt }}")
    plan = plan_deliveries(job(delivery={"channel": "ops", "format": fmt}), SLACK,
                           finished_run(), RunResult("ok", summary="done", data={"n": 7}))
    assert _body(plan) == {"text": "daily-digest ok done 7 1m30s 1"}


def test_channel_format_and_link_apply_and_the_job_format_wins() -> None:
    chat = {"ops": channel("discord", url="https://discord.example/api/webhooks/1/x",
                           format="[{{ result.status }}]", link="https://ci/{{ run.id }}")}
    spec = job(delivery={"channel": "ops"})
    assert _body(plan_deliveries(spec, chat, finished_run(), None)) == {"content": "[ok]"}
    linked = {"ops": chat["ops"].model_copy(update={"format": None})}
    text = _body(plan_deliveries(spec, linked, finished_run(), None))["content"]
    assert text.endswith("\nhttps://ci/run-1")
    own = job(delivery={"channel": "ops", "format": "mine"})
    assert _body(plan_deliveries(own, chat, finished_run(), None)) == {"content": "mine"}


def test_a_broken_template_falls_back_to_the_default_message_and_says_why() -> None:
    spec = job(delivery={"channel": "ops", "format": "{{ result.nope.deeper }}"})
    text = _body(plan_deliveries(spec, SLACK, finished_run(), None))["text"]
    assert text.startswith("✅ daily-digest: ok in 1m30s") and "format template failed" in text


def test_webhook_with_a_format_adds_the_text_to_the_json() -> None:
    spec = job(delivery={**HOOK, "format": "{{ job.name }}: {{ result.status }}"})
    body = _body(plan_deliveries(spec, {}, finished_run(), None))
    assert body["text"] == "daily-digest: ok" and body["runId"] == "run-1"


def test_alert_entries_go_to_the_failure_alert_target() -> None:
    message = failure_message("nightly", 3, "x" * 500, T0 + 60)
    assert message == ("nightly failed 3 times in a row; last error: " + "x" * 200
                       + "; next attempt: 2026-03-02T09:01:00Z")
    notice = AlertNotice("nightly", "failure", T0, message, 3, "x" * 500, T0 + 60)
    entry = plan_alert(notice, FailureAlert(channel="ops"), SLACK)
    assert entry is not None and entry.target == "channel ops"
    assert entry.idempotency_key == notice.key == entry.run_id
    assert Envelope.loads(entry.payload).body == {"text": f"⚠️ {message}"}
    hook = plan_alert(notice, FailureAlert.model_validate(HOOK), {})
    assert hook is not None
    body = Envelope.loads(hook.payload).body
    assert body["kind"] == "alert" and body["alert"] == "failure" and body["count"] == 3
    assert len(body["lastError"]) == 200 and body["nextAttemptAt"] == "2026-03-02T09:01:00Z"
    assert plan_alert(notice, FailureAlert(), SLACK) is None
    assert plan_alert(notice, FailureAlert(enabled=False, channel="ops"), SLACK) is None
    missing = plan_alert(notice, FailureAlert(channel="gone"), SLACK)
    assert missing is not None and missing.status == "failed"


def test_telegram_alert_carries_the_chat_id() -> None:
    chats = {"tg": channel("telegram", token={"fromEnv": "TG"}, chatId="-100")}
    notice = AlertNotice("j", "recovery", T0, "j recovered")
    entry = plan_alert(notice, FailureAlert(channel="tg"), chats)
    assert entry is not None
    envelope = Envelope.loads(entry.payload)
    assert envelope.endpoint.kind is ChannelType.TELEGRAM
    assert envelope.body == {"chat_id": "-100", "text": "✅ j recovered"}
