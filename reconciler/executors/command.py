"""The command executor: ``run.command`` (an argv, no shell) and ``run.shell`` (a /bin/sh script).

Each argument (or the script) is a template rendered with the run's context. The process runs
in its own process group (see ``executors.process``) in the spec's working directory, with the
daemon's environment plus the spec's ``env`` (secret references resolved) plus the run's
identity in ``RECONCILER_*`` variables. ``RECONCILER_RESULT`` names a fresh file in a private
temporary directory: a job that writes JSON there (``status``, ``summary``, ``data``,
``delivered``, ``error``) reports a structured result.

Exit 0 is ok; anything else is an error with the exit code and the tail of stderr, classed by
the spec's ``exitCodes`` or else by its text. Nothing here raises for a failed run: failures
are results. Cancellation stops the whole process group before the CancelledError goes on.
"""

from __future__ import annotations

import json
import os
import signal
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from reconciler.core.errorclass import classify_text
from reconciler.core.timefmt import iso_utc
from reconciler.errors import PermanentError
from reconciler.executors.base import RunContext, RunResult
from reconciler.executors.process import Completed, ProcessGroup
from reconciler.executors.secrets import SecretResolver
from reconciler.executors.templates import render, template_context
from reconciler.model.enums import ErrorClass
from reconciler.model.run import Run

RESULT_FILE_LIMIT = 1024 * 1024
_ERROR_TAIL = 2000  # characters of stderr kept in an error message
_TEMPLATE_MARKS = ("{{", "{%", "{#")


@dataclass(frozen=True)
class ResultReport:
    """What a job wrote to its ``RECONCILER_RESULT`` file."""

    status: Literal["ok", "error"] | None = None
    summary: str | None = None
    data: Any = None
    delivered: bool = False
    error: str | None = None


def parse_result_file(text: str) -> ResultReport | None:
    """The job's report, None when it wrote nothing; ``ValueError`` says what is wrong."""
    if not text.strip():
        return None
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc})") from exc
    if not isinstance(raw, dict):
        raise ValueError(f"expected a JSON object, got {type(raw).__name__}")
    status = raw.get("status")
    if status not in (None, "ok", "error"):
        raise ValueError(f'status must be "ok" or "error", not {status!r}')
    delivered = raw.get("delivered", False)
    if not isinstance(delivered, bool):
        raise ValueError(f"delivered must be true or false, not {delivered!r}")
    for key in ("summary", "error"):
        if raw.get(key) is not None and not isinstance(raw[key], str):
            raise ValueError(f"{key} must be a string")
    return ResultReport(status, raw.get("summary"), raw.get("data"), delivered,
                        raw.get("error"))


def build_env(base: Mapping[str, str], spec_env: Mapping[str, str], context: RunContext,
              result_path: str) -> dict[str, str]:
    """The process environment: base + spec env + this run's ``RECONCILER_*`` variables.

    Inherited ``RECONCILER_*`` variables are the daemon's own settings (its API token among
    them) and are not passed on; the spec may still set such names explicitly.
    """
    env = {key: value for key, value in base.items() if not key.startswith("RECONCILER_")}
    env.update(spec_env)
    env.update({
        "RECONCILER_JOB": context.job.name,
        "RECONCILER_RUN_ID": context.run_id,
        "RECONCILER_OCCURRENCE": context.occurrence_key,
        "RECONCILER_SCHEDULED_AT": iso_utc(context.scheduled_at) or "",
        "RECONCILER_ATTEMPT": str(context.attempt),
        "RECONCILER_TRIGGER": context.trigger,
        "RECONCILER_RESULT": result_path,
    })
    return env


def describe_exit(returncode: int) -> str:
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = "an unknown signal"
        return f"killed by signal {name} ({-returncode})"
    return f"exit code {returncode}"


def exit_error_class(returncode: int, exit_codes: Mapping[int, ErrorClass],
                     text: str) -> ErrorClass:
    """The spec's mapping for this exit code, else what the error text says."""
    return exit_codes.get(returncode) or classify_text(text)


def last_line(text: str) -> str | None:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else None


def outcome(completed: Completed, report: ResultReport | None, problem: str | None,
            exit_codes: Mapping[int, ErrorClass]) -> RunResult:
    """The run's result from the exit status, the output and the RESULT file (or its problem)."""
    stdout = completed.stdout.text()
    if completed.leftovers:
        stdout += "\n[reconciler: the job left processes behind; its process group was stopped]"
    summary = (report.summary if report else None) or last_line(
        completed.stdout.tail_text(_ERROR_TAIL))
    data, delivered = (report.data, report.delivered) if report else (None, False)
    failures: list[str] = []  # what the job said and did; classified by their text
    if report is not None and report.status == "error":
        failures.append(report.error or "the job reported status error")
    if completed.returncode != 0:
        tail = (completed.stderr.tail_text(_ERROR_TAIL)
                or completed.stdout.tail_text(_ERROR_TAIL)).strip()
        failures.append(describe_exit(completed.returncode) + (f": {tail}" if tail else ""))
    if not failures and problem is None:
        return RunResult("ok", summary=summary, output=stdout, data=data, delivered=delivered)
    # A malformed RESULT file is a bug in the job: permanent, and never classed by its text.
    error_class = exit_error_class(completed.returncode, exit_codes, "; ".join(failures)) \
        if failures else ErrorClass.PERMANENT
    if problem is not None:
        failures.append(f"RECONCILER_RESULT file: {problem}")
    return RunResult("error", summary=summary, output=stdout, data=data,
                     error="; ".join(failures), error_class=error_class, delivered=delivered)


def failure(message: str, error_class: ErrorClass = ErrorClass.PERMANENT) -> RunResult:
    return RunResult("error", error=message, error_class=error_class)


class CommandExecutor:
    """Runs ``run.command`` and ``run.shell`` jobs as local processes."""

    def __init__(self, secrets: SecretResolver | None = None, grace: float = 10.0,
                 output_limit: int = 64 * 1024, memory: int = 3,
                 base_env: Mapping[str, str] | None = None) -> None:
        self._secrets = secrets or SecretResolver()
        self._grace = grace
        self._output_limit = output_limit
        self._memory = memory
        self._base_env = base_env
        # After the leader exits, how long the rest of its group may take to finish by itself.
        self._drain = min(grace, 1.0)

    async def execute(self, context: RunContext) -> RunResult:
        run = context.job.spec.run
        try:
            argv = self._argv(context, run)
            spec_env = self._secrets.resolve_map(run.env)
        except PermanentError as exc:
            return failure(str(exc))
        cwd = run.working_dir
        if cwd is not None and not Path(cwd).is_dir():
            return failure(f"working directory not found: {cwd}")
        with tempfile.TemporaryDirectory(prefix="reconciler-run-") as private:
            result_path = Path(private) / "result.json"
            result_path.touch(mode=0o600)
            base = os.environ if self._base_env is None else self._base_env
            env = build_env(base, spec_env, context, str(result_path))
            try:
                group = await ProcessGroup.start(argv, env, cwd, self._output_limit, self._grace)
            except OSError as exc:
                return _start_failure(exc, argv[0], cwd)
            completed = await group.wait(self._drain)
            report, problem = _read_report(result_path)
        return outcome(completed, report, problem, run.exit_codes)

    def _argv(self, context: RunContext, run: Run) -> list[str]:
        """The rendered argv (raises ``TemplateRenderError``); the context is built lazily
        because it loads the job's memory."""
        if run.shell is not None:
            fields = [("spec.run.shell", run.shell)]
        else:
            assert run.command is not None, "CommandExecutor runs only command and shell jobs"
            fields = [(f"spec.run.command[{i}]", arg) for i, arg in enumerate(run.command)]
        variables: dict[str, Any] | None = None
        rendered: list[str] = []
        for field, text in fields:
            if any(mark in text for mark in _TEMPLATE_MARKS):
                if variables is None:
                    variables = template_context(context, memory=self._memory)
                text = render(text, variables, field)
            rendered.append(text)
        return ["/bin/sh", "-c", rendered[0]] if run.shell is not None else rendered


def _read_report(path: Path) -> tuple[ResultReport | None, str | None]:
    try:
        if path.stat().st_size > RESULT_FILE_LIMIT:
            return None, f"larger than {RESULT_FILE_LIMIT} bytes"
        return parse_result_file(path.read_text(encoding="utf-8", errors="replace")), None
    except FileNotFoundError:
        return None, None  # the job removed it: it reported nothing
    except (OSError, ValueError) as exc:
        return None, str(exc)


def _start_failure(exc: OSError, program: str, cwd: str | None) -> RunResult:
    if cwd is not None and exc.filename == cwd:
        return failure(f"working directory {cwd}: {exc.strerror}")
    if isinstance(exc, FileNotFoundError):
        return failure(f"command not found: {program}")
    if isinstance(exc, PermissionError):
        return failure(f"command not executable: {program} (permission denied)")
    return failure(f"cannot start {program}: {exc.strerror or exc}")
