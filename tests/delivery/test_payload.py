"""The webhook JSON, default messages, each service's documented shape and its length limit."""

from __future__ import annotations

import json

import pytest

from reconciler.delivery.payload import (
    LIMITS,
    TRUNCATION_MARKER,
    RunOutcome,
    TextLimit,
    channel_body,
    default_message,
    human_duration,
    truncate,
    webhook_body,
)
from reconciler.model.enums import ChannelType
from tests.delivery.helpers import T0, fixture, shape

OUTCOME = RunOutcome(
    job="daily-digest", run_id="3f1c9a7e0b2d4c6e8a1b3c5d-1",
    occurrence="3f1c9a7e0b2d4c6e8a1b3c5d7e9f0a1b", status="ok", scheduled_at=T0,
    started_at=T0 + 4, finished_at=T0 + 94, attempt=1, trigger="schedule",
    summary="42 tickets", data={"tickets": 42},
)  # fmt: skip


def test_webhook_body_is_the_documented_example() -> None:
    assert webhook_body(OUTCOME) == fixture("webhook")


def test_webhook_body_of_a_manual_failure() -> None:
    failed = RunOutcome("j", "r-2", "o", "timeout", None, T0, T0 + 0.25, 2, "manual",
                        error="timed out after 10m")
    body = webhook_body(failed)
    assert body["scheduledAt"] is None and body["durationMs"] == 250
    assert body["status"] == "timeout" and body["error"] == "timed out after 10m"
    assert body["startedAt"] == "2026-03-02T09:00:00Z"
    assert body["finishedAt"] == "2026-03-02T09:00:00.250Z"


def test_default_message_names_job_status_duration_summary_and_link() -> None:
    text = default_message(OUTCOME, "https://ci.example/runs/1")
    assert text.splitlines() == [
        "✅ daily-digest: ok in 1m30s", "42 tickets", "https://ci.example/runs/1"]
    failed = RunOutcome("j", "r", "o", "error", T0, T0, T0 + 0.5, 1, "schedule",
                        error="exit status 2")
    assert default_message(failed).splitlines() == ["❌ j: error after 500ms",
                                                    "error: exit status 2"]
    assert human_duration(3_600_000) == "1h" and human_duration(61_400) == "1m1s"


@pytest.mark.parametrize(
    "kind", [ChannelType.SLACK, ChannelType.DISCORD, ChannelType.FEISHU, ChannelType.DINGTALK,
             ChannelType.WECOM, ChannelType.TELEGRAM])
def test_each_chat_body_has_the_shape_its_service_documents(kind: ChannelType) -> None:
    body = channel_body(kind, "hello", chat_id="-1001234567890")
    assert shape(body) == shape(fixture(kind.value))


def test_the_webhook_type_has_no_chat_shape() -> None:
    with pytest.raises(ValueError, match="webhook JSON"):
        channel_body(ChannelType.WEBHOOK, "hello")


def _text(kind: ChannelType, body: dict[str, object]) -> str:
    inner = {ChannelType.SLACK: lambda b: b["text"], ChannelType.DISCORD: lambda b: b["content"],
             ChannelType.FEISHU: lambda b: b["content"]["text"],
             ChannelType.DINGTALK: lambda b: b["text"]["content"],
             ChannelType.WECOM: lambda b: b["text"]["content"],
             ChannelType.TELEGRAM: lambda b: b["text"]}[kind]
    return str(inner(body))  # type: ignore[no-untyped-call]


@pytest.mark.parametrize("kind", sorted(LIMITS, key=str))
@pytest.mark.parametrize("unit", ["a", "界", "😀", '"'])
def test_an_overlong_message_is_cut_to_the_limit_with_a_visible_marker(
    kind: ChannelType, unit: str
) -> None:
    limit = LIMITS[kind]
    text = "start " + unit * (limit.size + 10)
    cut = _text(kind, channel_body(kind, text, chat_id="1"))
    assert cut.startswith("start ") and cut.endswith(TRUNCATION_MARKER)
    assert limit.measure(cut) <= limit.size
    # As long as it can be: one more character of the original would not fit.
    kept = len(cut) - len(TRUNCATION_MARKER)
    assert limit.measure(text[: kept + 1] + TRUNCATION_MARKER) > limit.size


def test_the_service_units_are_what_they_document() -> None:
    # Discord and Telegram count UTF-16 units, WeCom UTF-8 bytes, Feishu the escaped JSON.
    assert LIMITS[ChannelType.DISCORD].measure("😀") == 2
    assert LIMITS[ChannelType.WECOM].measure("界") == 3
    assert LIMITS[ChannelType.FEISHU].measure('"\n') == 4
    assert LIMITS[ChannelType.SLACK].measure("😀") == 1
    wecom = channel_body(ChannelType.WECOM, "界" * 2000)
    assert len(wecom["text"]["content"].encode()) <= 2048
    feishu = channel_body(ChannelType.FEISHU, '"' * 30_000)
    assert len(json.dumps(feishu, ensure_ascii=False).encode()) < 20_000


def test_a_message_that_fits_is_untouched_and_a_tiny_limit_never_fails() -> None:
    assert channel_body(ChannelType.DISCORD, "x" * 2000)["content"] == "x" * 2000
    assert truncate("abcdef", TextLimit(3, len, "characters")) == ""
