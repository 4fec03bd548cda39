"""Importing realistic OpenClaw stores: every legacy shape accepted, specs that validate,
nothing dropped silently."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reconciler.model.job import NAME_PATTERN
from reconciler.sources.loader import load_paths
from reconciler.sources.openclaw.emit import UNMAPPED_FILE, planned_files, write_files
from reconciler.sources.openclaw.importer import ImportResult
from reconciler.sources.openclaw.normalize import NORMALISATIONS
from tests.openclaw.conftest import NOW


def _written(result: ImportResult, out: Path) -> Path:
    write_files(planned_files(result, out), force=False)
    return out


def test_every_normalisation_is_exercised_by_the_fixtures(
        inline: ImportResult, split: ImportResult) -> None:
    applied = {name for result in (inline, split) for job in result.jobs
               for name in job.normalised}
    assert len(NORMALISATIONS) == 25
    assert [step.number for step in NORMALISATIONS] == list(range(1, 26))
    # step 25's "kept with a warning" branch shows as a warning, its migrations as applied
    assert {step.name for step in NORMALISATIONS} - applied == set()


@pytest.mark.parametrize("store", ["inline", "split"])
def test_imported_specs_validate(store: str, request: pytest.FixtureRequest,
                                 tmp_path: Path) -> None:
    result: ImportResult = request.getfixturevalue(store)
    loaded = load_paths([str(_written(result, tmp_path))], now=NOW)
    assert loaded.errors == []
    assert {job.name for job in loaded.jobs} == {
        job.name for job in result.jobs if job.document is not None}
    assert {channel.name for channel in loaded.channels} == {
        name for name, _, _ in result.channels}


def test_no_job_is_dropped(inline: ImportResult, tmp_path: Path) -> None:
    out = _written(inline, tmp_path)
    written = {p.stem for p in (out / "jobs").glob("*.yaml")}
    kept = json.loads((out / UNMAPPED_FILE).read_text())
    assert len(written) + len(kept) == len(inline.jobs) == 9
    (broken,) = kept
    assert broken["id"] == "legacy-0008"
    assert "no text or message" in broken["reason"]
    assert broken["job"]["delivery"]["channel"] == "whatsapp"  # raw, as it was


def test_names_are_dns_labels_and_deduplicated(inline: ImportResult) -> None:
    import re

    names = [job.name for job in inline.jobs]
    assert len(set(names)) == len(names)
    assert all(re.match(NAME_PATTERN, name) for name in names)
    by_id = {job.openclaw_id: job.name for job in inline.jobs}
    # two jobs called "Daily report": both get a suffix from their id, whatever their order
    assert by_id["a1b2c3d4-0001-4000-8000-000000000001"].startswith("daily-report-")
    assert by_id["legacy-0006"].startswith("daily-report-")
    assert by_id["legacy-0007"].startswith("job-")  # "开会提醒" has no ASCII letters
    assert by_id["legacy-0002"] == "stand-up-reminder"
    assert by_id["legacy-0003"] == "pay-the-invoice"  # name inferred from the payload text


def _spec(result: ImportResult, job_id: str) -> dict:  # type: ignore[type-arg]
    job = next(job for job in result.jobs if job.openclaw_id == job_id)
    assert job.document is not None
    return job.document["spec"]  # type: ignore[no-any-return]


def test_reminders_become_message_runs_and_agent_turns_agent_runs(
        inline: ImportResult) -> None:
    assert _spec(inline, "legacy-0003")["run"] == {"message": {"text": "Pay the invoice"}}
    assert _spec(inline, "legacy-0009")["run"] == {"message": {"text": "Run the backup script"}}
    # a text with template marks is kept literal
    assert _spec(inline, "legacy-0002")["run"]["message"]["text"] == (
        "{% raw %}Stand-up in {{ room }} now{% endraw %}")
    agent = _spec(inline, "legacy-0004")["run"]["agent"]
    assert agent == {"endpoint": "http://localhost:11434/v1",
                     "model": "anthropic/claude-sonnet-4-5", "prompt": "Triage the inbox"}
    assert _spec(inline, "legacy-0005")["run"]["agent"]["model"] == "replace-me"


def test_schedules_map(inline: ImportResult, split: ImportResult) -> None:
    assert _spec(inline, "a1b2c3d4-0001-4000-8000-000000000001")["schedule"] == {
        "cron": "0 9 * * *", "timezone": "Asia/Shanghai"}
    assert _spec(inline, "legacy-0004")["schedule"] == {
        "cron": "0 * * * *", "timezone": "Europe/Berlin", "stagger": "5m"}
    assert _spec(inline, "legacy-0005")["schedule"] == {
        "every": "50m", "anchor": "2026-01-01T00:00:00.000Z"}
    assert _spec(inline, "legacy-0006")["schedule"] == {
        "cron": "30 8 * * * 15", "withSeconds": True, "timezone": "UTC", "stagger": "0"}
    assert _spec(inline, "legacy-0007")["schedule"] == {"at": "2026-06-01T01:00:00.000Z"}
    assert _spec(inline, "legacy-0007")["deleteAfterRun"] is False
    assert _spec(inline, "legacy-0003")["deleteAfterRun"] is True  # OpenClaw's default
    assert _spec(inline, "legacy-0002")["suspend"] is True
    assert _spec(split, "split-0003")["timeout"] == "0"


def test_delivery_and_alerts_map_to_channels(inline: ImportResult, split: ImportResult) -> None:
    first = _spec(inline, "a1b2c3d4-0001-4000-8000-000000000001")
    assert first["delivery"] == {"channel": "telegram-1001234567890"}
    assert first["failureAlert"] == {"after": 3, "cooldown": "2h",
                                     "channel": "telegram-1001234567890"}
    assert _spec(inline, "legacy-0004")["failureAlert"] is False
    assert _spec(inline, "legacy-0004")["delivery"] == {"channel": "slack-c0123abc"}
    assert _spec(inline, "legacy-0005")["delivery"] == {
        "webhook": {"url": "https://hooks.example.com/crm"}}
    assert _spec(inline, "legacy-0007")["delivery"] == {"mode": "none"}
    # "last", and reminders without delivery: the main-session placeholder Channel
    assert _spec(inline, "legacy-0009")["delivery"] == {"channel": "openclaw-main-session"}
    assert _spec(inline, "legacy-0003")["delivery"] == {"channel": "openclaw-main-session"}
    placeholder = {name: doc["spec"] for name, doc, _ in inline.channels}[
        "openclaw-main-session"]
    assert placeholder == {"type": "webhook",
                           "url": {"fromEnv": "OPENCLAW_MAIN_SESSION_URL"}}
    planning = _spec(split, "split-0001")
    assert planning["delivery"] == {"channel": "discord-123456789"}
    assert planning["failureAlert"] == {"after": 1, "cooldown": "0",
                                        "channel": "telegram-1009876543210"}
    channels = {name: doc["spec"] for name, doc, _ in split.channels}
    assert channels["telegram-1009876543210"] == {
        "type": "telegram", "token": {"fromEnv": "OPENCLAW_TELEGRAM_1009876543210_TOKEN"},
        "chatId": "-1009876543210"}
    assert channels["discord-123456789"] == {
        "type": "discord", "url": {"fromEnv": "OPENCLAW_DISCORD_123456789_URL"}}


def test_fields_without_equivalent_are_noted(inline: ImportResult, split: ImportResult) -> None:
    def sources(result: ImportResult, job_id: str) -> set[str]:
        job = next(job for job in result.jobs if job.openclaw_id == job_id)
        return {note.source for note in job.notes}

    assert {"payload.thinking", "delivery.threadId"} <= sources(
        inline, "a1b2c3d4-0001-4000-8000-000000000001")
    assert "schedule.tz" in sources(inline, "legacy-0002")
    assert "delivery.channel" in sources(inline, "legacy-0009")
    assert {"payload.toolsAllow", "delivery.bestEffort"} <= sources(split, "split-0001")
    assert {"delivery.failureDestination", "sessionTarget"} <= sources(split, "split-0003")
    assert any("notify" in warning for warning in inline.warnings)
    assert any("ghost" in warning for warning in split.warnings)
    assert any("state in both files" in warning for warning in split.warnings)


def test_notes_are_comments_above_their_keys(inline: ImportResult, tmp_path: Path) -> None:
    out = _written(inline, tmp_path)
    text = (out / "jobs" / "stand-up-reminder.yaml").read_text()
    assert text.startswith("# Imported from OpenClaw")
    assert "  # no tz: OpenClaw used the gateway host's zone; assumed UTC" in text
    assert text.index("# no tz") < text.index("  schedule:")


def test_existing_files_are_not_overwritten_without_force(
        inline: ImportResult, tmp_path: Path) -> None:
    from reconciler.errors import SpecLoadError

    files = planned_files(inline, tmp_path)
    write_files(files, force=False)
    write_files(files, force=False)  # same content: fine
    target = next(iter(files))
    target.write_text("# edited by hand\n")
    with pytest.raises(SpecLoadError, match="--force"):
        write_files(files, force=False)
    assert target.read_text() == "# edited by hand\n"
    write_files(files, force=True)
    assert target.read_text() == files[target]
