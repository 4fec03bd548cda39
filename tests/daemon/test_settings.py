"""Daemon settings: the arming lead."""

from __future__ import annotations

from datetime import timedelta

import pytest

from reconciler.errors import UsageError
from reconciler.runtime.settings import Settings, resolve_settings


def test_arm_ahead_defaults_to_half_a_second_and_zero_turns_it_off() -> None:
    assert Settings().arm_ahead == timedelta(milliseconds=500)
    assert resolve_settings({}, environ={}).arm_ahead == timedelta(milliseconds=500)
    assert resolve_settings({"arm_ahead": "0"}, environ={}).arm_ahead == timedelta(0)
    environ = {"RECONCILER_ARM_AHEAD": "2s"}
    assert resolve_settings({}, environ=environ).arm_ahead == timedelta(seconds=2)


def test_an_arm_ahead_over_ten_seconds_is_refused_with_the_limit() -> None:
    with pytest.raises(UsageError, match=r"--arm-ahead: invalid value '11s': must be at most 10s"):
        resolve_settings({"arm_ahead": "11s"}, environ={})
