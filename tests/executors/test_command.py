"""The command executor with real processes: results, environment, RESULT file, templates,
output bounds. Timeouts and kills: test_command_kill.py."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from reconciler.executors.base import RunResult
from reconciler.executors.command import CommandExecutor
from reconciler.executors.secrets import SecretResolver
from reconciler.model.enums import ErrorClass
from tests.executors.command_support import GRACE, context, execute, sh

# --- exit status -------------------------------------------------------------------------

def test_exit_zero_is_ok_with_the_last_stdout_line_as_summary() -> None:
    result = execute(sh("echo hello; echo world; echo"))
    assert result.status == "ok" and result.error is None
    assert result.output == "hello\nworld\n\n"
    assert result.summary == "world"


def test_non_zero_exit_is_an_error_with_the_code_and_the_stderr_tail() -> None:
    result = execute(sh("echo progress; echo 'config missing' >&2; exit 3"))
    assert result.status == "error"
    assert result.error == "exit code 3: config missing"
    assert result.error_class is ErrorClass.PERMANENT
    assert result.output == "progress\n"


def test_the_spec_maps_exit_codes_to_error_classes() -> None:
    result = execute(sh("echo 'try later' >&2; exit 75", exitCodes={75: "rate_limit"}))
    assert result.error_class is ErrorClass.RATE_LIMIT
    unmapped = execute(sh("exit 4", exitCodes={75: "rate_limit"}))
    assert unmapped.error == "exit code 4" and unmapped.error_class is ErrorClass.PERMANENT


def test_stderr_text_classifies_an_unmapped_failure() -> None:
    result = execute(sh("echo 'HTTP 429 Too Many Requests' >&2; exit 1"))
    assert result.error_class is ErrorClass.RATE_LIMIT
    network = execute(sh("echo 'curl: (7) Connection refused' >&2; exit 7"))
    assert network.error_class is ErrorClass.NETWORK


def test_death_by_signal_is_reported_as_such() -> None:
    result = execute(sh("kill -KILL $$"))
    assert result.status == "error"
    assert result.error == "killed by signal SIGKILL (9)"


def test_a_missing_executable_is_a_clean_permanent_error() -> None:
    result = execute({"command": ["no-such-command-for-reconciler", "--flag"]})
    assert result.error == "command not found: no-such-command-for-reconciler"
    assert result.error_class is ErrorClass.PERMANENT


def test_a_file_that_is_not_executable_is_a_clean_error(tmp_path: Path) -> None:
    script = tmp_path / "job.sh"
    script.write_text("echo hi\n")
    result = execute({"command": [str(script)]})
    assert result.error == f"command not executable: {script} (permission denied)"


# --- working directory ---------------------------------------------------------------------

def test_a_missing_working_directory_is_a_clean_error(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    result = execute(sh(f"touch {marker}", workingDir=str(tmp_path / "nope")))
    assert result.status == "error" and result.error_class is ErrorClass.PERMANENT
    assert result.error == f"working directory not found: {tmp_path / 'nope'}"
    assert not marker.exists()


def test_a_relative_working_directory_is_relative_to_the_daemons_cwd(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "jobs").mkdir()
    monkeypatch.chdir(tmp_path)
    result = execute({"command": ["pwd"], "workingDir": "jobs"})
    assert result.summary == str(tmp_path / "jobs")


# --- environment ---------------------------------------------------------------------------

def _env_of(result: RunResult) -> dict[str, str]:
    assert result.status == "ok", result.error
    assert result.output is not None
    return dict(line.split("=", 1) for line in result.output.splitlines() if "=" in line)


def test_the_environment_has_base_spec_secrets_and_the_runs_identity() -> None:
    executor = CommandExecutor(
        secrets=SecretResolver(environ={"API_KEY": "s3cret"}), grace=GRACE,
        base_env={"PATH": os.environ["PATH"], "KEEP": "base", "OVERRIDE": "base",
                  "RECONCILER_HTTP_TOKEN": "daemon-only"})
    env = _env_of(execute({"command": ["env"], "env": {
        "TOKEN": {"fromEnv": "API_KEY"}, "OVERRIDE": "spec",
        "RECONCILER_JOB": "spoofed"}}, executor, attempt=2))
    assert env["KEEP"] == "base" and env["OVERRIDE"] == "spec" and env["TOKEN"] == "s3cret"
    assert "RECONCILER_HTTP_TOKEN" not in env  # the daemon's settings stay with the daemon
    assert env["RECONCILER_JOB"] == "sample"
    assert env["RECONCILER_RUN_ID"] == "run-1"
    assert env["RECONCILER_OCCURRENCE"] == "occ-1"
    assert env["RECONCILER_SCHEDULED_AT"] == "2026-05-28T20:26:40Z"
    assert env["RECONCILER_ATTEMPT"] == "2"
    assert env["RECONCILER_TRIGGER"] == "schedule"
    result_file = Path(env["RECONCILER_RESULT"])
    assert result_file.name == "result.json"
    assert not result_file.parent.exists()  # the private directory is cleaned up


def test_a_manual_run_has_an_empty_scheduled_at() -> None:
    env = _env_of(execute({"command": ["env"]}, scheduled_at=None, trigger="manual"))
    assert env["RECONCILER_SCHEDULED_AT"] == "" and env["RECONCILER_TRIGGER"] == "manual"


def test_the_result_file_is_private_and_empty_at_start() -> None:
    result = execute(sh('stat -c %a "$RECONCILER_RESULT" "$(dirname "$RECONCILER_RESULT")"; '
                        'wc -c < "$RECONCILER_RESULT"'))
    assert result.output is not None
    assert result.output.split() == ["600", "700", "0"]


def test_a_missing_secret_fails_the_run_without_starting_it(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    executor = CommandExecutor(secrets=SecretResolver(environ={}), grace=GRACE)
    result = execute(sh(f"touch {marker}", env={"TOKEN": {"fromEnv": "MISSING_KEY"}}),
                     executor)
    assert result.status == "error" and result.error_class is ErrorClass.PERMANENT
    assert result.error is not None and "env:MISSING_KEY" in result.error
    assert not marker.exists()


# --- the RESULT file -----------------------------------------------------------------------

def _reporting(json_text: str, exit_code: int = 0) -> dict[str, Any]:
    return sh(f"echo 'plain output'; cat > \"$RECONCILER_RESULT\" <<'EOF'\n{json_text}\nEOF\n"
              f"exit {exit_code}")


def test_a_result_file_reports_summary_data_and_delivery() -> None:
    result = execute(_reporting(
        '{"status": "ok", "summary": "3 tickets", "data": {"tickets": 3}, "delivered": true}'))
    assert result.status == "ok"
    assert result.summary == "3 tickets" and result.data == {"tickets": 3}
    assert result.delivered is True and result.output == "plain output\n"


def test_a_result_file_can_report_an_error_classified_by_its_text() -> None:
    result = execute(_reporting('{"status": "error", "error": "upstream said 429"}'))
    assert result.status == "error" and result.error == "upstream said 429"
    assert result.error_class is ErrorClass.RATE_LIMIT
    bare = execute(_reporting('{"status": "error"}'))
    assert bare.error == "the job reported status error"


def test_a_non_zero_exit_wins_over_a_result_file_saying_ok() -> None:
    result = execute(_reporting('{"status": "ok", "summary": "half done"}', exit_code=2))
    assert result.status == "error" and result.error == "exit code 2: plain output"
    assert result.summary == "half done"


def test_invalid_json_in_the_result_file_is_an_error_that_says_so() -> None:
    result = execute(_reporting('{"status": "ok", oops 529'))
    assert result.status == "error" and result.error_class is ErrorClass.PERMANENT
    assert result.error is not None
    assert result.error.startswith("RECONCILER_RESULT file: not valid JSON")


def test_wrong_types_in_the_result_file_are_errors() -> None:
    assert execute(_reporting('{"status": "done"}')).error == \
        "RECONCILER_RESULT file: status must be \"ok\" or \"error\", not 'done'"
    assert execute(_reporting('{"delivered": "yes"}')).error == \
        "RECONCILER_RESULT file: delivered must be true or false, not 'yes'"
    assert execute(_reporting("[1, 2]")).error == \
        "RECONCILER_RESULT file: expected a JSON object, got list"


def test_a_job_that_removes_its_result_file_reported_nothing() -> None:
    result = execute(sh('rm "$RECONCILER_RESULT"; echo fine'))
    assert result.status == "ok" and result.summary == "fine"


# --- templates and shell -------------------------------------------------------------------

def test_arguments_are_rendered_with_the_run_context() -> None:
    result = execute({"command": ["echo", "{{ job.name }}", "attempt={{ run.attempt }}",
                                  "{{ run.scheduled_at }}", "{literal}"]}, attempt=3)
    assert result.summary == "sample attempt=3 2026-05-28T20:26:40Z {literal}"


def test_a_template_error_fails_the_run_without_starting_it(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    result = execute({"command": ["touch", str(marker), "{{ nothing.here }}"]})
    assert result.status == "error" and result.error_class is ErrorClass.PERMANENT
    assert result.error is not None and result.error.startswith("spec.run.command[2]:")
    assert "nothing" in result.error
    assert not marker.exists()


def test_a_shell_script_runs_under_bin_sh_and_is_a_template() -> None:
    result = execute({"shell": 'echo "$RECONCILER_JOB {{ run.trigger }}" | tr a-z A-Z'})
    assert result.summary == "SAMPLE SCHEDULE"
    broken = execute({"shell": "echo {{ run.attempt"})
    assert broken.error is not None and broken.error.startswith("spec.run.shell:")


# --- output bounds -------------------------------------------------------------------------

def test_huge_output_keeps_the_head_and_the_tail() -> None:
    script = "import sys\nfor i in range(100000): print(f'line {i}')\n" \
             "print('the end', file=sys.stderr); sys.exit(1)"
    executor = CommandExecutor(grace=GRACE, output_limit=4096)
    result = execute({"command": [sys.executable, "-c", script]}, executor)
    assert result.output is not None and len(result.output) < 4096 + 100
    assert result.output.startswith("line 0\nline 1\n")
    assert result.output.endswith("line 99998\nline 99999\n")
    assert "bytes elided ...]" in result.output
    assert result.summary == "line 99999" and result.error == "exit code 1: the end"


def test_a_concurrent_flood_on_stdout_and_stderr_does_not_deadlock() -> None:
    # Written in alternation, 8 MiB each: a reader of one pipe only would block the other.
    script = ("import sys\nblock = b'x' * 65536 + b'\\n'\nfor _ in range(128):\n"
              "    sys.stdout.buffer.write(block); sys.stdout.flush()\n"
              "    sys.stderr.buffer.write(block); sys.stderr.flush()\n")
    executor = CommandExecutor(grace=GRACE, output_limit=1024)

    async def flood() -> RunResult:
        return await asyncio.wait_for(
            executor.execute(context({"command": [sys.executable, "-c", script]})), 20)

    result = asyncio.run(flood())
    assert result.status == "ok"
    assert result.output is not None and len(result.output) < 1200
