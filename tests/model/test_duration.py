from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from reconciler.model.duration import Duration, format_duration, parse_duration


class Holder(BaseModel):
    value: Duration


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("90s", timedelta(seconds=90)),
        ("10m", timedelta(minutes=10)),
        ("1h30m", timedelta(hours=1, minutes=30)),
        ("7d", timedelta(days=7)),
        ("1d2h3m4s5ms", timedelta(days=1, hours=2, minutes=3, seconds=4, milliseconds=5)),
        ("250ms", timedelta(milliseconds=250)),
        ("0", timedelta(0)),
        (" 5m ", timedelta(minutes=5)),
    ],
)
def test_accepted_spellings(text: str, expected: timedelta) -> None:
    assert parse_duration(text) == expected


@pytest.mark.parametrize(
    "text", ["10 minutes", "", "5", "m", "1.5h", "-5m", "5m1h", "1h1h", "1H", "10min", "P1D"]
)
def test_rejected_spellings_show_the_accepted_form(text: str) -> None:
    with pytest.raises(ValueError, match="90s, 10m, 1h30m or 7d"):
        parse_duration(text)


def test_a_bare_number_asks_for_a_unit() -> None:
    with pytest.raises(ValidationError, match=r"add a unit, e\.g\. 30s"):
        Holder(value=30)  # type: ignore[arg-type]


def test_zero_number_means_none() -> None:
    assert Holder(value=0).value == timedelta(0)  # type: ignore[arg-type]


def test_booleans_are_not_durations() -> None:
    with pytest.raises(ValidationError, match="true/false"):
        Holder(value=True)  # type: ignore[arg-type]


def test_serialises_to_the_canonical_spelling() -> None:
    assert Holder(value="90m").model_dump(mode="json") == {"value": "1h30m"}  # type: ignore[arg-type]


@given(st.integers(min_value=0, max_value=10**12))
def test_format_then_parse_round_trips(milliseconds: int) -> None:
    value = timedelta(milliseconds=milliseconds)
    assert parse_duration(format_duration(value)) == value


@given(st.text(max_size=12))
def test_any_text_parses_or_raises_value_error(text: str) -> None:
    try:
        parsed = parse_duration(text)
    except ValueError:
        return
    assert parsed >= timedelta(0)
