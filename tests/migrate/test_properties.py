"""Property tests: random legacy documents through the migration chain.

A current document is drawn from the fields the steps touch, then written in a random mix of
legacy spellings. After the chain it must equal the current document (so it validates to the
same job), and running the chain again changes nothing. Random junk in the same fields must
never make a step raise, and is idempotent too.
"""

from __future__ import annotations

import copy
import io
import shlex
from datetime import timedelta
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from reconciler.model.duration import format_duration
from reconciler.model.enums import ConcurrencyPolicy
from reconciler.model.job import ScheduledJob
from reconciler.sources.migrate_files import migrate_text
from reconciler.sources.spec_migrations import upgrade_document
from reconciler.sources.yamlio import load_documents

ZONES = ["UTC", "Asia/Shanghai", "Europe/Berlin", "America/New_York"]
CRONS = ["0 9 * * *", "*/5 * * * *", "30 7 * * 1-5", "@daily"]
TOKEN = st.text(alphabet="abcXYZ019-_./=' ", min_size=1, max_size=12)


@st.composite
def current_and_legacy(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the current spelling, a legacy spelling of the same job)."""
    current: dict[str, Any] = {}
    legacy: dict[str, Any] = {}
    _schedule(draw, current, legacy)
    seconds = draw(st.none() | st.integers(0, 10**6))
    if seconds is not None:
        current["timeout"] = format_duration(timedelta(seconds=seconds))
        legacy.update({"timeoutSeconds": seconds} if draw(st.booleans())
                      else {"timeout": current["timeout"]})
    suspend = draw(st.none() | st.booleans())
    if suspend is not None:
        current["suspend"] = suspend
        legacy.update({"enabled": not suspend} if draw(st.booleans()) else {"suspend": suspend})
    policy = draw(st.none() | st.sampled_from([p.value for p in ConcurrencyPolicy]))
    if policy is not None:
        current["concurrencyPolicy"] = policy
        legacy["concurrencyPolicy"] = draw(st.sampled_from(
            [policy, policy.lower(), policy.upper()]))
    argv = draw(st.lists(TOKEN, min_size=1, max_size=5))
    current["run"] = {"command": argv}
    legacy["run"] = {"command": shlex.join(argv) if draw(st.booleans()) else list(argv)}
    api = draw(st.sampled_from(["v1", "v1alpha1", "v1beta1"]))
    return _wrap(current, "v1"), _wrap(legacy, api)


def _schedule(draw: st.DrawFn, current: dict[str, Any], legacy: dict[str, Any]) -> None:
    cron = draw(st.sampled_from(CRONS))
    zone = draw(st.none() | st.sampled_from(ZONES))
    if zone is None:
        current["schedule"] = {"cron": cron}
        legacy["schedule"] = cron if draw(st.booleans()) else {"cron": cron}
        return
    current["schedule"] = {"cron": cron, "timezone": zone}
    key = draw(st.sampled_from(["timezone", "tz", "timeZone"]))
    legacy["schedule"] = {"cron": cron, key: zone}


def _wrap(spec: dict[str, Any], version: str) -> dict[str, Any]:
    return {"apiVersion": f"reconciler.dev/{version}", "kind": "ScheduledJob",
            "metadata": {"name": "prop-job"}, "spec": spec}


@given(current_and_legacy())
def test_chain_upgrades_any_legacy_mix_to_the_current_form(
        pair: tuple[dict[str, Any], dict[str, Any]]) -> None:
    current, legacy = pair
    upgrade_document(legacy)
    assert legacy == current
    assert ScheduledJob.model_validate(legacy) == ScheduledJob.model_validate(current)


@given(current_and_legacy())
def test_chain_twice_equals_chain_once(pair: tuple[dict[str, Any], dict[str, Any]]) -> None:
    _, legacy = pair
    upgrade_document(legacy)
    once = copy.deepcopy(legacy)
    assert upgrade_document(legacy) == []
    assert legacy == once


@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow])
@given(current_and_legacy())
def test_round_trip_files_get_the_same_upgrade(
        pair: tuple[dict[str, Any], dict[str, Any]]) -> None:
    current, legacy = pair
    text = io.StringIO()
    YAML().dump(legacy, text)
    migrated, _ = migrate_text(text.getvalue())
    assert load_documents(migrated) == [current]
    assert migrate_text(migrated) == (migrated, [])


JUNK = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["cron", "tz", "timeZone", "timezone", "command", "every"]), inner,
        max_size=3),
    max_leaves=8,
)
FIELDS = ["schedule", "timeoutSeconds", "timeout", "enabled", "suspend", "concurrencyPolicy",
          "run"]


@given(st.dictionaries(st.sampled_from(FIELDS), JUNK, max_size=6),
       st.sampled_from(["reconciler.dev/v1", "reconciler.dev/v1alpha1", "batch/v1", None]))
def test_junk_never_raises_and_is_idempotent(spec: dict[str, Any], api: str | None) -> None:
    document = {"apiVersion": api, "kind": "ScheduledJob", "metadata": {"name": "j"},
                "spec": spec}
    upgrade_document(document)
    once = copy.deepcopy(document)
    upgrade_document(document)
    assert document == once or _has_nan(once)


def _has_nan(value: Any) -> bool:
    if isinstance(value, float):
        return value != value
    if isinstance(value, dict):
        return any(_has_nan(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_nan(v) for v in value)
    return False
