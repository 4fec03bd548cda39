"""The 25 normalisations one by one, the JSON5 reader, and the name rules."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from reconciler.sources.openclaw.names import slug, unique_names
from reconciler.sources.openclaw.normalize import (
    NORMALISATIONS,
    NormalizeContext,
    normalize_job,
)
from reconciler.sources.openclaw.reader import OpenClawStoreError, read_store

STEP = {step.number: step for step in NORMALISATIONS}

# (step number, legacy job, the job after that step alone)
CASES: list[tuple[int, dict[str, Any], dict[str, Any]]] = [
    (1, {"state": None}, {"state": {}}),
    (2, {"jobId": " j1 "}, {"id": "j1"}),
    (3, {"schedule": " 0 9 * * * "}, {"schedule": {"kind": "cron", "expr": "0 9 * * *"}}),
    (4, {"name": "  ", "payload": {"text": "Call mum\nsoon"}},
     {"name": "Call mum", "payload": {"text": "Call mum\nsoon"}}),
    (5, {"description": "  "}, {}),
    (6, {"sessionKey": " k "}, {"sessionKey": "k"}),
    (7, {"enabled": "false"}, {"enabled": False}),
    (8, {"wakeMode": " Next-Heartbeat "}, {"wakeMode": "next-heartbeat"}),
    (9, {"command": "ls"}, {"command": "ls", "payload": {"kind": "systemEvent", "text": "ls"}}),
    (10, {"payload": {"kind": "system_event"}}, {"payload": {"kind": "systemEvent"}}),
    (11, {"payload": {"message": "m"}}, {"payload": {"message": "m", "kind": "agentTurn"}}),
    (12, {"model": "m", "timeoutSeconds": 9.9, "payload": {"kind": "agentTurn"}},
     {"model": "m", "timeoutSeconds": 9.9,
      "payload": {"kind": "agentTurn", "model": "m", "timeoutSeconds": 9}}),
    (13, {"text": "t", "timeout": 5, "name": "n"}, {"name": "n"}),
    (14, {"payload": {"provider": " Telegram "}}, {"payload": {"channel": "telegram"}}),
    (15, {"schedule": {"atMs": 1}}, {"schedule": {"atMs": 1, "kind": "at"}}),
    (16, {"schedule": {"kind": "at", "atMs": "1780300800000", "tz": "UTC"}},
     {"schedule": {"kind": "at", "at": "2026-06-01T08:00:00.000Z"}}),
    (17, {"schedule": {"kind": "every", "everyMs": "60000.7", "expr": "x"}},
     {"schedule": {"kind": "every", "everyMs": 60000}}),
    (18, {"updatedAtMs": 5, "schedule": {"kind": "every", "everyMs": 1}},
     {"updatedAtMs": 5, "schedule": {"kind": "every", "everyMs": 1, "anchorMs": 5}}),
    (19, {"schedule": {"cron": " 0 9 * * * ", "atMs": 1}},
     {"schedule": {"expr": "0 9 * * *", "kind": "cron"}}),
    (20, {"schedule": {"kind": "cron", "expr": "0 */3 * * *"}},
     {"schedule": {"kind": "cron", "expr": "0 */3 * * *", "staggerMs": 300000}}),
    (21, {"delivery": {"mode": "deliver"}}, {"delivery": {"mode": "announce"}}),
    (22, {"isolation": {"x": 1}}, {}),
    (23, {"sessionTarget": "current"}, {"sessionTarget": "isolated"}),
    (24, {"sessionTarget": "isolated", "payload": {
        "kind": "agentTurn", "deliver": True, "channel": "Slack", "threadId": 7,
        "bestEffortDeliver": True}},
     {"sessionTarget": "isolated", "payload": {"kind": "agentTurn"},
      "delivery": {"mode": "announce", "channel": "slack", "threadId": "7",
                   "bestEffort": True}}),
    (25, {"notify": False}, {}),
]


def test_cases_cover_all_25() -> None:
    assert sorted({number for number, _, _ in CASES}) == list(range(1, 26))


@pytest.mark.parametrize(("number", "legacy", "expected"), CASES,
                         ids=[f"{n}-{STEP[n].name}" for n, _, _ in CASES])
def test_step_upgrades_its_legacy_shape_once(number: int, legacy: dict[str, Any],
                                             expected: dict[str, Any]) -> None:
    context = NormalizeContext()
    job = copy.deepcopy(legacy)
    assert STEP[number].apply(job, context) is True
    assert job == expected
    assert STEP[number].apply(job, context) is False  # idempotent
    assert job == expected


@pytest.mark.parametrize(("number", "legacy", "expected"), CASES,
                         ids=[f"{n}" for n, _, _ in CASES])
def test_whole_chain_is_idempotent(number: int, legacy: dict[str, Any],
                                   expected: dict[str, Any]) -> None:
    once, _ = normalize_job(legacy, NormalizeContext())
    twice, applied = normalize_job(once, NormalizeContext())
    assert twice == once and applied == []


def test_notify_true_with_legacy_webhook() -> None:
    step = STEP[25]
    job: dict[str, Any] = {"notify": True, "delivery": {"mode": "none"}}
    assert step.apply(job, NormalizeContext(legacy_webhook="https://h"))
    assert job == {"delivery": {"mode": "webhook", "to": "https://h"}}
    job = {"notify": True, "delivery": {"mode": "webhook", "to": "https://mine"}}
    assert step.apply(job, NormalizeContext()) and job == {
        "delivery": {"mode": "webhook", "to": "https://mine"}}
    context = NormalizeContext()
    job = {"id": "j", "notify": True, "delivery": {"mode": "announce"}}
    assert not step.apply(job, context) and "notify" in job and context.warnings


def test_top_of_hour_default_only_for_wildcard_hours() -> None:
    for expr, stagger in (("0 * * * *", 300000), ("0 0 */2 * * *", 300000),
                          ("0 9 * * *", None), ("5 * * * *", None)):
        job, _ = normalize_job({"schedule": {"kind": "cron", "expr": expr}}, NormalizeContext())
        assert job["schedule"].get("staggerMs") == stagger, expr


def test_json5_hand_edits_and_bare_list(tmp_path: Path) -> None:
    store = tmp_path / "jobs.json"
    store.write_text("// comment\n[{id: 'a', name: 'x', /* c */ enabled: true,},]")
    assert read_store(store).jobs == [{"id": "a", "name": "x", "enabled": True}]


def test_json5_error_names_file_and_line(tmp_path: Path) -> None:
    store = tmp_path / "jobs.json"
    store.write_text('{\n  "jobs": [\n    {id: }\n  ]\n}')
    with pytest.raises(OpenClawStoreError, match=r"jobs\.json:3 .*not valid JSON5"):
        read_store(store)


def test_split_state_as_a_list(tmp_path: Path) -> None:
    (tmp_path / "jobs.json").write_text('{"jobs": [{"id": "a"}]}')
    (tmp_path / "jobs-state.json").write_text('{"jobs": [{"id": "a", "state": {"x": 1}}]}')
    assert read_store(tmp_path).jobs == [{"id": "a", "state": {"x": 1}}]


def test_names() -> None:
    assert slug("Café Report — Daily!") == "cafe-report-daily"
    assert slug("开会提醒") == ""
    assert len(slug("x" * 100)) == 63
    names = unique_names([("Same", "1"), ("Same", "2"), ("开会", "3"), ("Other", "4")])
    assert names[3] == "other"
    assert names[0] != names[1] and names[0].startswith("same-")
    assert names[2].startswith("job-")
    # order does not matter
    assert unique_names([("Same", "2"), ("Same", "1")]) == [names[1], names[0]]


def test_escaped_astral_characters_are_joined(tmp_path: Path) -> None:
    store = tmp_path / "jobs.json"
    store.write_text('{"jobs": [{"name": "\\ud83d\\ude00 party", "text": "\\ud800 lone"}]}')
    (job,) = read_store(store).jobs
    assert job["name"] == "\U0001f600 party"
    assert job["text"] == "\ufffd lone"
