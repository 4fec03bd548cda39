"""Instants as specs write them: ISO-8601 with or without offset, or a date alone.

An offset-less time is UTC (never the host's zone); a date alone is midnight UTC.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Annotated, Any

from pydantic import BeforeValidator, PlainSerializer, WithJsonSchema

TIMESTAMP_HELP = (
    "write an ISO-8601 time such as 2026-03-29T09:00:00+08:00, 2026-03-29T01:00:00Z "
    "or a date such as 2026-03-29 (no offset means UTC)"
)


def parse_timestamp(value: Any) -> datetime:
    """Parse a spec instant into an aware UTC-comparable datetime; ``ValueError`` if bad."""
    if isinstance(value, datetime):
        parsed = value
    elif isinstance(value, date):
        parsed = datetime(value.year, value.month, value.day)
    elif isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.strip())
        except ValueError:
            raise ValueError(f"invalid time {value!r}: {TIMESTAMP_HELP}") from None
    else:
        raise ValueError(f"expected a time string, got {type(value).__name__}: {TIMESTAMP_HELP}")
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed


def format_timestamp(value: datetime) -> str:
    return value.isoformat()


Timestamp = Annotated[
    datetime,
    BeforeValidator(parse_timestamp),
    PlainSerializer(format_timestamp, return_type=str),
    WithJsonSchema({"type": "string", "description": "An ISO-8601 time or date; no offset = UTC."}),
]
