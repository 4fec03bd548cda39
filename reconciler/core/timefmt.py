"""Instants for people and for JSON: UTC ISO-8601 with ``Z``, or local with the offset."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from reconciler.model.timestamp import parse_timestamp


def iso_utc(instant: float | None) -> str | None:
    """``2026-03-29T01:00:00Z``; milliseconds only when the instant has them."""
    if instant is None:
        return None
    moment = datetime.fromtimestamp(round(instant, 3), UTC)
    spec = "milliseconds" if moment.microsecond else "seconds"
    return moment.replace(tzinfo=None).isoformat(timespec=spec) + "Z"


def iso_local(instant: float, zone: str) -> str:
    moment = datetime.fromtimestamp(round(instant, 3), ZoneInfo(zone))
    spec = "milliseconds" if moment.microsecond else "seconds"
    return moment.isoformat(timespec=spec)


def parse_instant(text: str) -> float:
    """An ISO-8601 time (no offset = UTC) or a date (midnight UTC) as a UTC epoch, read the
    way specs read times; raises ``ValueError`` with the accepted form."""
    return parse_timestamp(text).timestamp()
