"""``reconciler import openclaw``: files, report, exit codes, --state into the store."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from reconciler.cli import main
from reconciler.store import StateReader
from tests.openclaw.conftest import FIXTURES


def test_import_writes_specs_and_reports(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "specs"
    code = main(["import", "openclaw", str(FIXTURES / "split" / "jobs.json"), "--out", str(out)])
    assert code == 0
    text = capsys.readouterr().out
    assert "4 of 4 jobs imported, 3 channels, 0 not imported" in text
    assert "fill in payload: PLACEHOLDER endpoint" in text
    assert sorted(p.name for p in (out / "jobs").iterdir()) == [
        "every-2h-check.yaml", "every-35m-poll.yaml", "launch-announcement.yaml",
        "weekly-planning.yaml"]
    assert main(["validate", str(out)]) == 0


def test_unmapped_job_exits_1_and_json_lists_it(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["import", "openclaw", str(FIXTURES / "inline" / "jobs.json"),
                 "--out", str(tmp_path), "--format", "json"])
    assert code == 1
    report = json.loads(capsys.readouterr().out)
    assert report["unmapped"] == [{"id": "legacy-0008", "name": "Broken job",
                                   "reason": "payload {'kind': 'agentTurn'} has no text or "
                                             "message to run"}]
    assert len(report["jobs"]) == 9 and report["placeholders"] >= 3
    first = report["jobs"][0]
    assert first["imported"] is True and "payload-kind-case" in first["normalised"]
    assert first["state"]["nextRunAt"] == "2026-06-01T01:00:00.000Z"
    assert report["stateWritten"] is None


def test_state_is_written_into_the_store(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    state_dir = tmp_path / "state"
    args = ["import", "openclaw", str(FIXTURES / "split"), "--out", str(tmp_path / "specs"),
            "--state", str(state_dir)]
    assert main(args) == 0
    assert "state of 4 jobs written" in capsys.readouterr().out
    with StateReader.open(state_dir) as reader:
        jobs = {job.name: job for job in reader.jobs()}
        assert jobs["weekly-planning"].next_effective_at == 1_780_315_200.0
        assert jobs["every-35m-poll"].consecutive_errors == 3
        (run,) = reader.runs("weekly-planning")
        assert run.status == "ok" and run.scheduled_at == 1_779_710_400.0
    # a second import keeps the existing state and says so; --force replaces it without
    # recording the last run twice
    assert main(args) == 0
    assert "state exists" in capsys.readouterr().out
    assert main([*args, "--force"]) == 0
    with StateReader.open(state_dir) as reader:
        assert len(reader.runs("weekly-planning")) == 1


@pytest.mark.parametrize(("content", "message"), [
    (None, "no such file"),
    ("{jobs: [", "not valid JSON5"),
    ('{"jobs": {"a": 1}}', "not an OpenClaw cron store"),
    ('{"jobs": [1]}', "jobs[0] is a int"),
])
def test_bad_stores_are_clear_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                     content: str | None, message: str) -> None:
    store = tmp_path / "jobs.json"
    if content is not None:
        store.write_text(content)
    assert main(["import", "openclaw", str(store), "--out", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert str(store) in err


def test_unknown_default_timezone_is_a_usage_error(tmp_path: Path) -> None:
    assert main(["import", "openclaw", str(FIXTURES / "split"), "--out", str(tmp_path),
                 "--default-timezone", "Mars/Olympus"]) == 2


def test_legacy_webhook_migrates_notify(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "jobs.json"
    shutil.copy(FIXTURES / "inline" / "jobs.json", store)
    main(["import", "openclaw", str(store), "--out", str(tmp_path / "o"), "--format", "json",
          "--legacy-webhook", "https://hooks.example.com/legacy"])
    report = json.loads(capsys.readouterr().out)
    assert not [w for w in report["warnings"] if "notify" in w]
    (water,) = [j for j in report["jobs"] if j["id"] == "legacy-0006"]
    spec = (tmp_path / "o" / "jobs" / f"{water['name']}.yaml").read_text()
    assert "url: https://hooks.example.com/legacy" in spec
