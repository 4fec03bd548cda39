"""The spec loader: files and trees, multi-document files, other manifests, YAML 1.2 scalars."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from reconciler.cli import main
from reconciler.sources.loader import discover, load_paths

JOB = """\
apiVersion: reconciler.dev/v1
kind: ScheduledJob
metadata:
  name: {name}
spec:
  schedule: {{every: 1h}}
  run: {{command: [echo, hi]}}
"""
NOW = 1_790_000_000.0  # 2026-09-21T14:13:20Z; any fixed instant keeps schedule checks stable


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_reads_directory_trees_and_both_suffixes(tmp_path: Path) -> None:
    write(tmp_path / "a.yaml", JOB.format(name="a"))
    write(tmp_path / "team" / "deep" / "b.yml", JOB.format(name="b"))
    write(tmp_path / "notes.txt", "not yaml")
    result = load_paths([str(tmp_path)], now=NOW)
    assert result.valid and result.files == 2
    assert sorted(job.name for job in result.jobs) == ["a", "b"]


def test_hidden_directories_are_skipped(tmp_path: Path) -> None:
    write(tmp_path / ".git" / "x.yaml", "::: not yaml")
    write(tmp_path / "a.yaml", JOB.format(name="a"))
    assert [p.name for p in discover([str(tmp_path)])] == ["a.yaml"]


def test_multi_document_files_and_other_manifests(tmp_path: Path) -> None:
    text = (JOB.format(name="first") + "---\napiVersion: apps/v1\nkind: Deployment\n"
            "metadata: {name: web}\n---\n---\n" + JOB.format(name="second"))
    write(tmp_path / "multi.yaml", text)
    result = load_paths([str(tmp_path)], now=NOW)
    assert result.valid
    assert [job.name for job in result.jobs] == ["first", "second"]


def test_error_in_second_document_has_its_own_line(tmp_path: Path) -> None:
    text = JOB.format(name="ok") + "---\n" + JOB.format(name="Bad")
    write(tmp_path / "two.yaml", text)
    result = load_paths([str(tmp_path)], now=NOW)
    (error,) = result.errors
    # The second document starts on line 9 (8 lines + the separator); name is its 4th line.
    assert (error.line, error.path, error.job) == (12, "metadata.name", "Bad")
    assert [job.name for job in result.jobs] == ["ok"]


def test_yaml_11_booleans_stay_strings(tmp_path: Path) -> None:
    spec = JOB.format(name="flags") + "  delivery:\n    channel: ops\n    on: [ok, error]\n"
    channel = ("---\napiVersion: reconciler.dev/v1\nkind: Channel\nmetadata: {name: ops}\n"
               "spec: {type: slack, url: {fromEnv: SLACK_URL}}\n")
    write(tmp_path / "a.yaml", spec + channel)
    result = load_paths([str(tmp_path)], now=NOW)
    assert result.valid, result.errors
    delivery = result.jobs[0].spec.delivery
    assert delivery is not None and [o.value for o in delivery.on] == ["ok", "error"]


def test_an_unquoted_clock_time_is_not_sexagesimal(tmp_path: Path) -> None:
    text = JOB.format(name="t").replace("{every: 1h}", "{at: 2030-01-01T09:00:00Z}")
    write(tmp_path / "t.yaml", text)
    result = load_paths([str(tmp_path)], now=NOW)
    assert result.valid, result.errors


def test_plain_yaml_without_kind_is_ignored_with_a_warning(tmp_path: Path) -> None:
    write(tmp_path / "values.yaml", "replicas: 3\n")
    result = load_paths([str(tmp_path)], now=NOW)
    assert result.valid and len(result.warnings) == 1
    assert "ignored" in result.warnings[0].message


def test_inline_secret_warns_and_strict_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                              ) -> None:
    write(tmp_path / "c.yaml", "apiVersion: reconciler.dev/v1\nkind: Channel\n"
          "metadata: {name: ops}\nspec: {type: slack, url: 'https://hooks.slack.com/T/B/x'}\n")
    assert main(["validate", str(tmp_path), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["valid"] is True and report["warnings"][0]["path"] == "spec.url"
    assert report["warnings"][0]["line"] == 4
    assert main(["validate", str(tmp_path), "--strict"]) == 1


def test_missing_path_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "/nonexistent/specs"]) == 2
    err = capsys.readouterr().err
    assert "no such file or directory" in err and "Traceback" not in err


def test_unreadable_encoding_is_reported(tmp_path: Path) -> None:
    (tmp_path / "latin.yaml").write_bytes(b"name: \xff\xfe\n")
    result = load_paths([str(tmp_path)], now=NOW)
    assert not result.valid and "cannot read" in result.errors[0].message


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_file_is_reported(tmp_path: Path) -> None:
    path = write(tmp_path / "secret.yaml", JOB.format(name="a"))
    path.chmod(0)
    result = load_paths([str(tmp_path)], now=NOW)
    assert not result.valid and "cannot read" in result.errors[0].message


def test_valid_json_counts_files_and_jobs(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                          ) -> None:
    write(tmp_path / "a.yaml", JOB.format(name="a") + "---\n" + JOB.format(name="b"))
    assert main(["validate", str(tmp_path), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report == {"valid": True, "files": 1, "jobs": 2, "channels": 0,
                      "errors": [], "warnings": []}


def test_text_summary_for_valid_specs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path / "a.yaml", JOB.format(name="a"))
    assert main(["validate", str(tmp_path)]) == 0
    assert capsys.readouterr().out.strip() == "valid: 1 files, 1 jobs, 0 errors, 0 warnings"


def test_github_annotations_escape_newlines_and_commas() -> None:
    from reconciler.cli.validate_cmd import github_annotation
    from reconciler.model.diagnostics import Diagnostic

    line = github_annotation(Diagnostic("error", "a\nb,c", "x,y.yaml", 3, 4, None, "spec.a"))
    assert line == "::error file=x%2Cy.yaml,line=3,col=4,title=spec.a::a%0Ab,c"


LEAP = JOB.replace("{{every: 1h}}", '{{cron: "0 0 29 2 *"}}')


def test_a_february_29th_job_is_valid_by_default(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path / "leap.yaml", LEAP.format(name="leap"))
    # From 2026-09-21 the next February 29th is in 2028, 526 days away: within the default
    # horizon of 1462 days, beyond a 300-day one.
    assert main(["validate", str(tmp_path)]) == 0
    result = load_paths([str(tmp_path)], now=NOW, horizon_days=300)
    (error,) = result.errors
    assert error.path == "spec.schedule.cron" and "300-day horizon" in error.message
    capsys.readouterr()


def test_horizon_flag_takes_a_duration(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                       ) -> None:
    write(tmp_path / "leap.yaml", LEAP.format(name="leap"))
    assert main(["validate", str(tmp_path), "--horizon", "30d"]) == 1
    assert main(["validate", str(tmp_path), "--horizon", "10 days"]) == 2
    assert "invalid duration" in capsys.readouterr().err


def test_a_closed_pipe_is_not_a_traceback(tmp_path: Path) -> None:
    import subprocess
    import sys

    for index in range(300):
        write(tmp_path / f"j{index}.yaml", JOB.format(name=f"j{index}"))
    # `reconciler next ... | head -1`: the reader leaves long before the output ends.
    command = (f"{sys.executable} -m reconciler next {tmp_path} --count 50 | head -1")
    done = subprocess.run(command, shell=True, capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() and "Traceback" not in done.stderr, done.stderr
