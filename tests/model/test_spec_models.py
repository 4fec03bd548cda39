from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from pydantic import ValidationError

from reconciler.model.enums import ConcurrencyPolicy, ErrorClass
from reconciler.model.job import Channel, ScheduledJob
from reconciler.model.schedule import Schedule


def job(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"schedule": {"every": "1h"}, "run": {"command": ["true"]}}
    base.update(spec)
    return {"apiVersion": "reconciler.dev/v1", "kind": "ScheduledJob",
            "metadata": {"name": "sample"}, "spec": base}


def test_defaults_follow_the_design() -> None:
    spec = ScheduledJob.model_validate(job()).spec
    assert spec.timeout == timedelta(minutes=10)
    assert spec.concurrency_policy is ConcurrencyPolicy.FORBID
    assert spec.catch_up.policy.value == "latest"
    assert spec.retry.max_attempts == 3
    assert spec.retry.backoff == [timedelta(seconds=30), timedelta(minutes=1),
                                  timedelta(minutes=5)]
    assert ErrorClass.PERMANENT not in spec.retry.retry_on
    assert spec.backoff[-1] == timedelta(hours=1) and len(spec.backoff) == 5
    assert spec.schedule.timezone == "UTC"
    assert spec.suspend is False


@pytest.mark.parametrize("name", ["a", "daily-digest", "x" * 63, "0abc", "a-1"])
def test_dns_labels_are_names(name: str) -> None:
    document = job()
    document["metadata"]["name"] = name
    assert ScheduledJob.model_validate(document).name == name


@pytest.mark.parametrize("name", ["A", "-a", "a-", "a_b", "a.b", "x" * 64, "", "ä"])
def test_other_names_are_refused(name: str) -> None:
    document = job()
    document["metadata"]["name"] = name
    with pytest.raises(ValidationError):
        ScheduledJob.model_validate(document)


@pytest.mark.parametrize(
    "schedule",
    [{}, {"cron": "* * * * *", "every": "1m"}, {"every": "1m", "at": "2030-01-01"},
     {"cron": "* * * * *", "at": "2030-01-01"}],
)
def test_exactly_one_schedule_kind(schedule: dict[str, Any]) -> None:
    with pytest.raises(ValidationError, match="exactly one of cron, every or at"):
        Schedule.model_validate(schedule)


def test_every_must_be_at_least_a_second() -> None:
    with pytest.raises(ValidationError, match="at least 1s"):
        Schedule.model_validate({"every": "500ms"})


def test_at_without_offset_is_utc_and_a_date_is_midnight_utc() -> None:
    assert Schedule.model_validate({"at": "2026-03-29T09:00:00"}).at == datetime(
        2026, 3, 29, 9, tzinfo=UTC)
    assert Schedule.model_validate({"at": "2026-03-29"}).at == datetime(2026, 3, 29, tzinfo=UTC)
    shanghai = Schedule.model_validate({"at": "2026-03-29T09:00:00+08:00"}).at
    assert shanghai is not None and shanghai.timestamp() == datetime(
        2026, 3, 29, 1, tzinfo=UTC).timestamp()


@pytest.mark.parametrize(
    "run",
    [{}, {"command": ["a"], "shell": "b"}, {"message": {"text": "x"}, "http": {"url": "u"}}],
)
def test_exactly_one_executor(run: dict[str, Any]) -> None:
    with pytest.raises(ValidationError, match="exactly one of command"):
        ScheduledJob.model_validate(job(run=run))


def test_secret_references_take_exactly_one_source() -> None:
    hook = {"url": "http://h", "secret": {"fromEnv": "A"}}
    spec = ScheduledJob.model_validate(job(delivery={"webhook": hook})).spec
    assert spec.delivery is not None and spec.delivery.webhook is not None
    secret = spec.delivery.webhook.secret
    assert not isinstance(secret, str) and secret is not None and secret.describe() == "env:A"
    for bad in ({}, {"fromEnv": "A", "fromFile": "/x"}):
        with pytest.raises(ValidationError, match="exactly one of fromEnv"):
            ScheduledJob.model_validate(job(delivery={"webhook": {"url": "u", "secret": bad}}))


def test_secret_key_ref_needs_name_and_key() -> None:
    ref = {"secretKeyRef": {"name": "hooks", "key": "secret"}}
    spec = ScheduledJob.model_validate(job(run={"agent": {
        "endpoint": "http://x/v1", "model": "m", "prompt": "p", "apiKey": ref}})).spec
    assert spec.run.agent is not None and not isinstance(spec.run.agent.api_key, str)
    with pytest.raises(ValidationError):
        ScheduledJob.model_validate(job(run={"agent": {
            "endpoint": "http://x/v1", "model": "m", "prompt": "p",
            "apiKey": {"secretKeyRef": {"name": "hooks"}}}}))


def test_failure_alert_false_turns_alerts_off() -> None:
    spec = ScheduledJob.model_validate(job(failureAlert=False)).spec
    assert spec.failure_alert is not None and spec.failure_alert.enabled is False
    spec = ScheduledJob.model_validate(job(failureAlert={"after": 3})).spec
    assert spec.failure_alert is not None and spec.failure_alert.cooldown == timedelta(hours=1)


def test_delivery_needs_exactly_one_target() -> None:
    for bad in ({}, {"mode": "none", "channel": "x"}):
        with pytest.raises(ValidationError, match="exactly one of mode"):
            ScheduledJob.model_validate(job(delivery=bad))
    spec = ScheduledJob.model_validate(job(delivery={"channel": "ops"})).spec
    assert spec.delivery is not None and [o.value for o in spec.delivery.on] == ["ok"]


def test_telegram_needs_token_and_chat() -> None:
    base = {"apiVersion": "reconciler.dev/v1", "kind": "Channel", "metadata": {"name": "tg"}}
    with pytest.raises(ValidationError, match="token and chatId"):
        Channel.model_validate({**base, "spec": {"type": "telegram", "token": {"fromEnv": "T"}}})
    channel = Channel.model_validate(
        {**base, "spec": {"type": "telegram", "token": {"fromEnv": "T"}, "chatId": "42"}})
    assert channel.spec.chat_id == "42"


def test_exit_codes_map_to_error_classes() -> None:
    spec = ScheduledJob.model_validate(
        job(run={"command": ["x"], "exitCodes": {75: "rate_limit"}})).spec
    assert spec.run.exit_codes == {75: ErrorClass.RATE_LIMIT}


def test_kubernetes_template_needs_containers() -> None:
    with pytest.raises(ValidationError, match=r"spec\.containers"):
        ScheduledJob.model_validate(job(run={"kubernetes": {"template": {"spec": {}}}}))
