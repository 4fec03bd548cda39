"""Each spec migration step: its fixture of the historical shape, and idempotence."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest

from reconciler.model.job import ScheduledJob
from reconciler.sources.migrate_files import migrate_text
from reconciler.sources.spec_migrations import STEPS, upgrade_document
from reconciler.sources.yamlio import load_documents

FIXTURES = Path(__file__).parent / "fixtures"
STEP_BY_NAME = {step.name: step for step in STEPS}


def _fixture_step(path: Path) -> str:
    """``schedule-string-every.yaml`` exercises ``schedule-string``: longest matching name."""
    return max((name for name in STEP_BY_NAME if path.stem.startswith(name)), key=len)


def _fixture(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    legacy, expected = load_documents(path.read_text())
    return legacy, expected


FIXTURE_FILES = sorted(FIXTURES.glob("*.yaml"))


def test_every_step_has_a_fixture() -> None:
    covered = {_fixture_step(path) for path in FIXTURE_FILES}
    assert covered == set(STEP_BY_NAME)


def test_step_names_are_unique() -> None:
    assert len(STEP_BY_NAME) == len(STEPS)


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.stem)
def test_step_upgrades_its_fixture_once(path: Path) -> None:
    legacy, _ = _fixture(path)
    step = STEP_BY_NAME[_fixture_step(path)]
    assert step.apply(legacy) is True
    once = copy.deepcopy(legacy)
    assert step.apply(legacy) is False, "applying a step twice must equal applying it once"
    assert legacy == once


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.stem)
def test_chain_turns_fixture_into_current_form(path: Path) -> None:
    legacy, expected = _fixture(path)
    assert upgrade_document(legacy) == [_fixture_step(path)]
    assert legacy == expected
    assert upgrade_document(legacy) == []
    ScheduledJob.model_validate(legacy)


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.stem)
def test_round_trip_tree_gets_the_same_upgrade(path: Path) -> None:
    text = path.read_text()
    first_document = text.split("\n---\n")[0] + "\n"
    migrated, applied = migrate_text(first_document)
    assert applied == [_fixture_step(path)]
    assert load_documents(migrated)[0] == _fixture(path)[1]


def test_other_tools_manifests_are_left_alone() -> None:
    cronjob = {"apiVersion": "batch/v1", "kind": "CronJob",
               "spec": {"schedule": "0 9 * * *", "concurrencyPolicy": "forbid",
                        "enabled": False, "timeoutSeconds": 5}}
    before = copy.deepcopy(cronjob)
    assert upgrade_document(cronjob) == []
    assert cronjob == before


def _job(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "reconciler.dev/v1", "kind": "ScheduledJob",
            "metadata": {"name": "x"}, "spec": spec}


@pytest.mark.parametrize("spec", [
    {"run": {"command": "echo 'unbalanced"}},     # shlex cannot split it: validation reports
    {"run": {"command": "   "}},                  # nothing to split
    {"timeoutSeconds": -5},                       # no duration says that
    {"timeoutSeconds": True},
    {"timeoutSeconds": "600"},
    {"timeoutSeconds": float("inf")},
    {"timeoutSeconds": 0.0001},                   # would round to 0 = no limit
    {"timeoutSeconds": 60, "timeout": "2m"},      # already has the new key
    {"enabled": "no"},                            # not a boolean
    {"enabled": False, "suspend": False},         # both: validation names the old key
    {"concurrencyPolicy": "sometimes"},
    {"schedule": {"cron": "0 9 * * *", "tz": "UTC", "timezone": "UTC"}},
])
def test_steps_leave_what_they_cannot_upgrade_unchanged(spec: dict[str, Any]) -> None:
    document = _job(**spec)
    before = copy.deepcopy(document)
    assert upgrade_document(document) == []
    assert document == before


def test_renamed_key_keeps_its_position_in_a_plain_dict() -> None:
    document = _job(schedule={"every": "1h"}, enabled=False, run={"command": ["true"]})
    upgrade_document(document)
    assert list(document["spec"]) == ["schedule", "suspend", "run"]


def test_round_trip_keeps_key_position_and_comment() -> None:
    text = ("apiVersion: reconciler.dev/v1\nkind: ScheduledJob\nmetadata: {name: x}\n"
            "spec:\n  schedule: {every: 1h}\n  timeoutSeconds: 90  # keep me\n"
            "  run: {command: [\"true\"]}\n")
    migrated, applied = migrate_text(text)
    assert applied == ["timeout-seconds"]
    # ruamel keeps the comment's column, so the padding grows where the value got shorter
    assert re.search(r"\n  timeout: 1m30s +# keep me\n  run:", migrated)
