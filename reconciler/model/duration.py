"""Durations as people write them in specs: ``90s``, ``10m``, ``1h30m``, ``7d``, ``250ms``.

A ``Duration`` field holds a ``datetime.timedelta``. It accepts a string of one or more
``<integer><unit>`` parts in descending unit order (units ``d``, ``h``, ``m``, ``s``, ``ms``),
or the bare number ``0`` (meaning "none"/"exact" where a field says so). Anything else is
rejected with a message that shows the accepted form.
"""

from __future__ import annotations

import functools
import re
from datetime import timedelta
from typing import Annotated, Any

from pydantic import BeforeValidator, PlainSerializer, WithJsonSchema

DURATION_PATTERN = r"^(0|([0-9]+d)?([0-9]+h)?([0-9]+m)?([0-9]+s)?([0-9]+ms)?)$"
DURATION_HELP = "write a duration like 90s, 10m, 1h30m or 7d (units d, h, m, s, ms; no spaces)"

_PART = re.compile(r"([0-9]+)(ms|d|h|m|s)")
_UNIT_MS = {"d": 86_400_000, "h": 3_600_000, "m": 60_000, "s": 1_000, "ms": 1}
_ORDER = ["d", "h", "m", "s", "ms"]


def parse_duration(text: str) -> timedelta:
    """Parse ``1h30m``-style text; raises ``ValueError`` with the accepted form on bad input."""
    raw = text.strip()
    if raw == "0":
        return timedelta(0)
    if not raw:
        raise ValueError(f"empty duration: {DURATION_HELP}")
    position = 0
    last_unit = -1
    total_ms = 0
    for match in _PART.finditer(raw):
        if match.start() != position:
            break
        unit_rank = _ORDER.index(match.group(2))
        if unit_rank <= last_unit:
            raise ValueError(f"units out of order or repeated in {text!r}: {DURATION_HELP}")
        last_unit = unit_rank
        total_ms += int(match.group(1)) * _UNIT_MS[match.group(2)]
        position = match.end()
    if position != len(raw) or last_unit < 0:
        raise ValueError(f"invalid duration {text!r}: {DURATION_HELP}")
    return timedelta(milliseconds=total_ms)


def format_duration(value: timedelta) -> str:
    """The canonical spelling: ``parse_duration(format_duration(d)) == d`` for whole ms."""
    total_ms = round(value.total_seconds() * 1000)
    if total_ms == 0:
        return "0"
    sign = "-" if total_ms < 0 else ""
    remaining = abs(total_ms)
    parts = []
    for unit in _ORDER:
        count, remaining = divmod(remaining, _UNIT_MS[unit])
        if count:
            parts.append(f"{count}{unit}")
    return sign + "".join(parts)


# Remembered: a large spec tree spells the same few durations over and over (and hashing a
# job's spec dumps about ten, most of them defaults); a daemon start does both for every job.
@functools.lru_cache(maxsize=512)
def _parsed(text: str) -> timedelta:
    return parse_duration(text)


@functools.lru_cache(maxsize=512)
def _serialized(value: timedelta) -> str:
    return format_duration(value)


def _coerce(value: Any) -> Any:
    if isinstance(value, timedelta):
        return value
    if isinstance(value, bool):
        raise ValueError(f"a duration cannot be true/false: {DURATION_HELP}")
    if isinstance(value, int) and value == 0:
        return timedelta(0)
    if isinstance(value, int | float):
        raise ValueError(
            f"a bare number {value!r} is ambiguous: add a unit, e.g. {value}s or {value}m"
        )
    if isinstance(value, str):
        return _parsed(value)
    raise ValueError(f"expected a duration string, got {type(value).__name__}: {DURATION_HELP}")


Duration = Annotated[
    timedelta,
    BeforeValidator(_coerce),
    PlainSerializer(_serialized, return_type=str),
    # The bare number 0 is accepted too ("none"/"exact"), so the schema says so.
    WithJsonSchema({"anyOf": [{"type": "string", "pattern": DURATION_PATTERN}, {"const": 0}],
                    "description": "A duration such as 90s, 10m, 1h30m or 7d (or 0)."}),
]
"""A pydantic field type for spec durations."""
