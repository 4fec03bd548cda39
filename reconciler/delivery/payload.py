"""What a delivery says, pure: the webhook JSON of a finished run and each chat service's message.

``webhook_body`` is the generic JSON (the contract receivers code against; fields may be added,
never renamed). ``default_message`` is the text a chat channel shows when no ``format`` template
is set. ``channel_body`` wraps a text in the shape the service documents and cuts it to the
service's limit with a visible marker, so an over-long result is shortened, never rejected.

Service signatures (feishu ``sign``, dingtalk URL parameters, our HMAC headers) depend on the
moment of sending and on secrets, so they are added by ``delivery.request`` at send time, not
here.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Final

from reconciler.core.timefmt import iso_utc
from reconciler.model.duration import format_duration
from reconciler.model.enums import ChannelType

TRUNCATION_MARKER: Final[str] = "\n… [truncated]"


def _code_points(text: str) -> int:
    return len(text)


def _utf16_units(text: str) -> int:
    # Discord and Telegram count UTF-16 code units: an emoji outside the BMP counts twice.
    return len(text.encode("utf-16-le")) // 2


def _utf8_bytes(text: str) -> int:
    return len(text.encode("utf-8"))


def _json_bytes(text: str) -> int:
    # Where the limit is on the request body, escaping (quotes, control characters) counts too.
    return len(json.dumps(text, ensure_ascii=False).encode("utf-8")) - 2


Measure = Callable[[str], int]


@dataclass(frozen=True)
class TextLimit:
    """How long a message text may be, in the unit the service counts."""

    size: int
    measure: Measure
    unit: str


# Documented limits: Slack truncates a message's text beyond 40,000 characters; Discord's
# execute-webhook content is 2000 characters; Telegram's sendMessage text 1-4096 characters;
# WeCom's text content at most 2048 bytes of UTF-8; Feishu's custom-bot request body at most
# 20 KB (the text keeps 2 KB of room for the envelope and the signature); DingTalk's custom
# robot body likewise ~20 KB.
LIMITS: Final[dict[ChannelType, TextLimit]] = {
    ChannelType.SLACK: TextLimit(40_000, _code_points, "characters"),
    ChannelType.DISCORD: TextLimit(2_000, _utf16_units, "characters"),
    ChannelType.TELEGRAM: TextLimit(4_096, _utf16_units, "characters"),
    ChannelType.WECOM: TextLimit(2_048, _utf8_bytes, "bytes"),
    ChannelType.FEISHU: TextLimit(18_000, _json_bytes, "bytes"),
    ChannelType.DINGTALK: TextLimit(18_000, _json_bytes, "bytes"),
}


def truncate(text: str, limit: TextLimit) -> str:
    """``text`` if it fits, else its longest prefix that fits together with the marker."""
    if limit.measure(text) <= limit.size:
        return text
    if limit.measure(TRUNCATION_MARKER) > limit.size:
        return ""
    low, high = 0, len(text)  # invariant: text[:low] + marker fits, text[:high + 1] does not
    while low < high:
        middle = (low + high + 1) // 2
        if limit.measure(text[:middle] + TRUNCATION_MARKER) <= limit.size:
            low = middle
        else:
            high = middle - 1
    return text[:low] + TRUNCATION_MARKER


@dataclass(frozen=True)
class RunOutcome:
    """A finished run as delivery sees it: identity, timing and what the executor returned."""

    job: str
    run_id: str
    occurrence: str
    status: str  # ok | error | timeout | interrupted
    scheduled_at: float | None
    started_at: float
    finished_at: float
    attempt: int
    trigger: str
    summary: str | None = None
    output: str | None = None
    data: Any = None
    error: str | None = None

    @property
    def duration_ms(self) -> int:
        return max(0, round((self.finished_at - self.started_at) * 1000))

    @property
    def succeeded(self) -> bool:
        return self.status == "ok"


def webhook_body(outcome: RunOutcome) -> dict[str, Any]:
    """The generic webhook JSON (README "delivery"); instants are UTC ISO-8601 with ``Z``."""
    return {
        "job": outcome.job,
        "runId": outcome.run_id,
        "occurrence": outcome.occurrence,
        "status": outcome.status,
        "scheduledAt": iso_utc(outcome.scheduled_at),
        "startedAt": iso_utc(outcome.started_at),
        "finishedAt": iso_utc(outcome.finished_at),
        "durationMs": outcome.duration_ms,
        "attempt": outcome.attempt,
        "trigger": outcome.trigger,
        "summary": outcome.summary,
        "data": outcome.data,
        "error": outcome.error,
    }


def result_view(outcome: RunOutcome) -> dict[str, Any]:
    """What a ``format`` template sees as ``result``."""
    return {
        "status": outcome.status, "ok": outcome.succeeded, "summary": outcome.summary,
        "output": outcome.output, "data": outcome.data, "error": outcome.error,
        "duration": outcome.duration_ms / 1000, "duration_ms": outcome.duration_ms,
        "started_at": iso_utc(outcome.started_at), "finished_at": iso_utc(outcome.finished_at),
    }  # fmt: skip


def human_duration(milliseconds: int) -> str:
    """``850ms``, ``12s``, ``1m30s``: whole seconds from one second on."""
    if milliseconds < 1000:
        return f"{milliseconds}ms"
    return format_duration(timedelta(seconds=round(milliseconds / 1000)))


def default_message(outcome: RunOutcome, link: str | None = None) -> str:
    """Job, status, duration, then the summary (and the error of a failure), then the link."""
    icon, verb = ("✅", "in") if outcome.succeeded else ("❌", "after")
    lines = [f"{icon} {outcome.job}: {outcome.status} {verb} {human_duration(outcome.duration_ms)}"]
    if outcome.summary:
        lines.append(outcome.summary)
    if outcome.error and not outcome.succeeded:
        lines.append(f"error: {outcome.error}")
    if link:
        lines.append(link)
    return "\n".join(lines)


def channel_body(kind: ChannelType, text: str, chat_id: str | None = None) -> dict[str, Any]:
    """The message JSON ``kind`` documents for a plain text, cut to its limit.

    ``webhook`` is not a chat service: its body is ``webhook_body`` (or an alert's JSON).
    """
    limit = LIMITS.get(kind)
    cut = truncate(text, limit) if limit is not None else text
    if kind is ChannelType.SLACK:
        return {"text": cut}
    if kind is ChannelType.DISCORD:
        return {"content": cut}
    if kind is ChannelType.FEISHU:
        return {"msg_type": "text", "content": {"text": cut}}
    if kind in (ChannelType.DINGTALK, ChannelType.WECOM):
        return {"msgtype": "text", "text": {"content": cut}}
    if kind is ChannelType.TELEGRAM:
        return {"chat_id": chat_id, "text": cut}
    raise ValueError(f"{kind.value} has no chat message shape; it posts the webhook JSON")
