"""``reconciler migrate``: the diff mode, --write (golden file, comments kept), bad input."""

from __future__ import annotations

import json
import re
import shutil
import stat
from pathlib import Path

import pytest

from reconciler.cli import main

GOLDEN = Path(__file__).parent / "golden"


@pytest.fixture
def legacy(tmp_path: Path) -> Path:
    path = tmp_path / "specs.yaml"
    shutil.copy(GOLDEN / "legacy.yaml", path)
    return path


def _comments(text: str) -> list[str]:
    return re.findall(r"#.*", text)


def test_write_matches_the_golden_file_and_keeps_every_comment(legacy: Path) -> None:
    assert main(["migrate", "--write", str(legacy)]) == 0
    migrated = legacy.read_text()
    assert migrated == (GOLDEN / "legacy.migrated.yaml").read_text()
    assert _comments(migrated) == _comments((GOLDEN / "legacy.yaml").read_text())


def test_golden_result_validates_without_migration_warnings() -> None:
    from reconciler.sources.loader import load_paths

    result = load_paths([str(GOLDEN / "legacy.migrated.yaml")], now=1_780_000_000)
    assert result.valid, result.errors
    assert not [w for w in result.warnings if "migrate" in w.message]
    assert len(result.jobs) == 2


def test_loader_upgrades_the_legacy_file_in_memory_and_warns() -> None:
    from reconciler.sources.loader import load_paths

    result = load_paths([str(GOLDEN / "legacy.yaml")], now=1_780_000_000)
    assert result.valid, result.errors
    assert sum("reconciler migrate --write" in w.message for w in result.warnings) == 2


def test_check_mode_prints_a_diff_exits_1_and_changes_nothing(
        legacy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = legacy.read_bytes()
    assert main(["migrate", str(legacy)]) == 1
    out, err = capsys.readouterr()
    assert legacy.read_bytes() == before
    assert f"--- {legacy}\n+++ {legacy}\n" in out
    assert "-  timeoutSeconds: 600  # ten minutes\n" in out
    assert "+  timeout: 10m         # ten minutes\n" in out
    assert "would migrate" in err


def test_nothing_to_do_exits_0_silently_on_stdout(
        legacy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["migrate", "--write", str(legacy)])
    capsys.readouterr()
    assert main(["migrate", str(legacy)]) == 0
    out, err = capsys.readouterr()
    assert out == ""
    assert "0 files would be migrated, 1 unchanged" in err


def test_write_keeps_the_file_mode(legacy: Path) -> None:
    legacy.chmod(0o640)
    main(["migrate", "--write", str(legacy)])
    assert stat.S_IMODE(legacy.stat().st_mode) == 0o640
    assert [p.name for p in legacy.parent.iterdir()] == ["specs.yaml"]  # no temp file left


def test_json_output(legacy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["migrate", "--format", "json", str(legacy.parent)]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["changed"] is True and report["write"] is False
    (entry,) = report["files"]
    assert entry["file"] == str(legacy) and entry["written"] is False
    assert "timeout-seconds" in entry["steps"] and entry["diff"].startswith("---")
    assert report["errors"] == []


def test_bad_yaml_is_reported_with_its_position_without_traceback(
        tmp_path: Path, legacy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: reconciler.dev/v1\nspec: [unclosed\n")
    assert main(["migrate", "--write", str(tmp_path)]) == 1
    _, err = capsys.readouterr()
    assert re.search(rf"{re.escape(str(bad))}:3:1: YAML syntax error: ", err)
    assert "Traceback" not in err
    assert legacy.read_text() == (GOLDEN / "legacy.migrated.yaml").read_text()  # others done


def test_missing_path_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["migrate", str(tmp_path / "nope.yaml")]) == 2
    assert "no such file or directory" in capsys.readouterr().err


def test_unreadable_file_is_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    binary = tmp_path / "latin1.yaml"
    binary.write_bytes(b"name: caf\xe9\n")
    assert main(["migrate", str(binary)]) == 1
    assert "cannot read the file" in capsys.readouterr().err


def test_windows_line_endings_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "crlf.yaml"
    text = (GOLDEN / "legacy.yaml").read_text()
    path.write_bytes(text.replace("\n", "\r\n").encode())
    assert main(["migrate", "--write", str(path)]) == 0
    expected = (GOLDEN / "legacy.migrated.yaml").read_text().replace("\n", "\r\n")
    assert path.read_bytes().decode() == expected


def test_a_symlink_keeps_pointing_at_the_migrated_file(legacy: Path) -> None:
    link = legacy.parent / "link.yaml"
    link.symlink_to(legacy.name)
    assert main(["migrate", "--write", str(link)]) == 0
    assert link.is_symlink()
    assert legacy.read_text() == (GOLDEN / "legacy.migrated.yaml").read_text()
