"""``reconciler next``: JSON shape of DESIGN.md §4, the text table, options and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import reconciler.cli as cli
import reconciler.cli.next_cmd as next_cmd
from tests.schedule.support import utc

SPECS = """\
apiVersion: reconciler.dev/v1
kind: ScheduledJob
metadata: {name: nightly-backup}
spec:
  schedule: {cron: "30 2 * * *", timezone: America/New_York}
  run: {command: ["true"]}
---
apiVersion: reconciler.dev/v1
kind: ScheduledJob
metadata: {name: hourly-sync}
spec:
  schedule: {cron: "0 * * * *", timezone: America/New_York}
  run: {command: ["true"]}
---
apiVersion: reconciler.dev/v1
kind: ScheduledJob
metadata: {name: poller}
spec:
  schedule: {every: 30m}
  run: {command: ["true"]}
"""


@pytest.fixture()
def specs(tmp_path: Path) -> str:
    (tmp_path / "jobs.yaml").write_text(SPECS)
    return str(tmp_path)


@pytest.fixture(autouse=True)
def _next_is_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    # Until the command list in reconciler/cli/__init__.py names it again.
    module = "reconciler.cli.next_cmd"
    if module not in cli.COMMAND_MODULES:
        monkeypatch.setattr(cli, "COMMAND_MODULES", [*cli.COMMAND_MODULES, module])


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(["next", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_json_shape_and_the_gap_fire(specs: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, specs, "--job", "nightly-backup", "--from", "2024-03-10T05:00:00Z",
                       "--count", "2", "--format", "json")
    assert code == 0
    payload = json.loads(out)
    [job] = payload["jobs"]
    assert (job["name"], job["timezone"]) == ("nightly-backup", "America/New_York")
    # 02:30 is in the gap: runs at 03:00 EDT = 07:00Z; then 02:30 EDT = 06:30Z.
    assert job["next"] == [
        {"at": "2024-03-10T07:00:00Z", "nominal": "2024-03-10T07:00:00Z",
         "local": "2024-03-10T03:00:00-04:00"},
        {"at": "2024-03-11T06:30:00Z", "nominal": "2024-03-11T06:30:00Z",
         "local": "2024-03-11T02:30:00-04:00"},
    ]


def test_json_keeps_nominal_and_staggered_start(
    specs: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, specs, "--job", "hourly-sync", "--from", "2024-05-01T09:30:00Z",
                       "--count", "1", "--format", "json")
    assert code == 0
    # "hourly-sync" staggers by 28.258 s (sha256 prefix 0x703e41c2 mod 300000 ms).
    assert json.loads(out)["jobs"][0]["next"] == [
        {"at": "2024-05-01T10:00:28.258Z", "nominal": "2024-05-01T10:00:00Z",
         "local": "2024-05-01T06:00:28.258-04:00"},
    ]


def test_interval_without_anchor_starts_at_from(
    specs: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, specs, "--job", "poller", "--from", "2024-05-01T09:13:00Z",
                       "--count", "2", "--format", "json")
    assert code == 0
    assert [f["at"] for f in json.loads(out)["jobs"][0]["next"]] == [
        "2024-05-01T09:43:00Z", "2024-05-01T10:13:00Z",
    ]


def test_text_table_marks_dst(specs: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, specs, "--from", "2024-11-03T04:00:00Z", "--count", "3")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "next fires after 2024-11-03T04:00:00Z"
    assert any(line.startswith("nightly-backup  cron '30 2 * * *'  America/New_York")
               for line in lines)
    assert "hourly-sync  cron '0 * * * *'  America/New_York  stagger +28s258ms" in lines
    doubled = [line for line in lines if "01:00:28" in line]
    # 01:00 EDT and 01:00 EST, both marked.
    assert len(doubled) == 2
    assert "EDT" in doubled[0] and "this is the 1st time" in doubled[0]
    assert "EST" in doubled[1] and "this is the 2nd time" in doubled[1]


def test_text_marks_a_fire_moved_by_the_gap(
    specs: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, specs, "--job", "nightly-backup", "--from", "2024-03-10T05:00Z",
                       "--count", "1")
    assert code == 0
    assert "Sun 2024-03-10 03:00 EDT" in out
    assert "02:30 skipped by the clocks; runs at the jump" in out


def test_from_defaults_to_now(
    specs: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    class FixedClock:
        def now(self) -> float:
            return utc("2024-05-01 09:30Z")

    monkeypatch.setattr(next_cmd, "SystemClock", FixedClock)
    code, out, _ = run(capsys, specs, "--job", "nightly-backup", "--count", "1",
                       "--format", "json")
    assert code == 0
    # 02:30 EDT on 05-02 = 06:30Z.
    assert json.loads(out)["jobs"][0]["next"][0]["at"] == "2024-05-02T06:30:00Z"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--from", "yesterday"], "--from: invalid time 'yesterday'"),
        (["--count", "0"], "--count must be at least 1"),
        (["--job", "nope"], "no job named 'nope'"),
    ],
)
def test_usage_errors_exit_2_without_a_traceback(
    specs: str, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, out, err = run(capsys, specs, *argv)
    assert code == 2
    assert message in err
    assert "Traceback" not in err and out == ""


def test_invalid_specs_exit_1_with_the_loaders_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "bad.yaml").write_text(SPECS.replace('"30 2 * * *"', '"61 * * * *"'))
    code, out, err = run(capsys, str(tmp_path))
    assert code == 1
    assert "bad.yaml:" in err and "61 is out of range for the minute field" in err
    assert out == ""


def test_a_passed_one_shot_has_no_upcoming_fires(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "launch.yaml").write_text(
        "apiVersion: reconciler.dev/v1\nkind: ScheduledJob\nmetadata: {name: launch}\n"
        "spec:\n  schedule: {at: '2024-03-10T09:00:00+08:00'}\n  run: {command: ['true']}\n"
    )
    code, out, _ = run(capsys, str(tmp_path), "--from", "2024-03-10T02:00:00Z")
    assert code == 0 and "no upcoming fires: the one-shot time has passed" in out
    code, out, _ = run(capsys, str(tmp_path), "--from", "2024-03-10T00:00:00Z",
                       "--format", "json")
    # 09:00 +08:00 = 01:00Z, after the 00:00Z start: its only fire.
    assert json.loads(out)["jobs"][0]["next"] == [
        {"at": "2024-03-10T01:00:00Z", "nominal": "2024-03-10T01:00:00Z",
         "local": "2024-03-10T01:00:00+00:00"},
    ]
