"""Semantic checks across loaded specs, beyond what one document's schema can say.

Pure: given the valid resources (and the instant to measure schedules from), report findings
by document and field path. The loader turns findings into file positions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from reconciler.core.schedule import ScheduleProblem, check_schedule
from reconciler.core.templating import template_syntax_problem
from reconciler.model.diagnostics import Finding
from reconciler.model.job import Channel, JobSpec, ScheduledJob
from reconciler.model.schedule import Schedule
from reconciler.model.secrets import SecretValue

Path = tuple[str | int, ...]
_CREDENTIAL_NAME = re.compile(r"(secret|token|passw|api[-_]?key|authorization|credential)", re.I)


@dataclass(frozen=True)
class Entry:
    document: int
    resource: ScheduledJob | Channel


# Four years and a day: a February 29th job is valid, a job that can never fire is not.
DEFAULT_HORIZON_DAYS = 1462


def check_all(
    entries: Sequence[Entry], now: float, horizon_days: int = DEFAULT_HORIZON_DAYS
) -> list[Finding]:
    channels = {e.resource.name for e in entries if isinstance(e.resource, Channel)}
    schedules = _ScheduleChecks(now, horizon_days)
    findings: list[Finding] = []
    for entry in entries:
        if isinstance(entry.resource, ScheduledJob):
            findings.extend(_check_job(entry.document, entry.resource, channels, schedules))
        else:
            findings.extend(_check_channel(entry.document, entry.resource))
    return findings


class _ScheduleChecks:
    """``check_schedule`` as of one instant, once per distinct schedule: it is pure, schedules
    are frozen (hashable) models, and a large tree repeats a few of them in many jobs, each
    check of a cron walking its next year of fires."""

    def __init__(self, now: float, horizon_days: int) -> None:
        self.now = now
        self.horizon_days = horizon_days
        self._problems: dict[Schedule, list[ScheduleProblem]] = {}

    def problems(self, schedule: Schedule) -> list[ScheduleProblem]:
        found = self._problems.get(schedule)
        if found is None:
            found = self._problems[schedule] = check_schedule(schedule, self.now,
                                                              self.horizon_days)
        return found


def _check_job(
    document: int, job: ScheduledJob, channels: set[str], schedules: _ScheduleChecks
) -> list[Finding]:
    spec = job.spec
    findings = [
        Finding(p.severity, document, ("spec", "schedule", p.field), p.message)
        for p in schedules.problems(spec.schedule)
    ]
    findings += _channel_refs(document, spec, channels)
    findings += _templates(document, _job_templates(spec))
    findings += _inline_secrets(document, _job_secrets(spec))
    return findings


def _check_channel(document: int, channel: Channel) -> list[Finding]:
    spec = channel.spec
    templates: list[tuple[Path, str | None]] = [
        (("spec", "format"), spec.format), (("spec", "link"), spec.link)]
    secrets: list[tuple[Path, SecretValue | None]] = [
        (("spec", "url"), spec.url), (("spec", "secret"), spec.secret),
        (("spec", "token"), spec.token),
    ]
    secrets += [(("spec", "headers", k), v) for k, v in spec.headers.items()]
    return _templates(document, templates) + _inline_secrets(document, secrets, always=True)


def _channel_refs(document: int, spec: JobSpec, channels: set[str]) -> list[Finding]:
    refs: list[tuple[Path, str]] = []
    if spec.delivery is not None and spec.delivery.channel is not None:
        refs.append((("spec", "delivery", "channel"), spec.delivery.channel))
    if spec.failure_alert is not None and spec.failure_alert.channel is not None:
        refs.append((("spec", "failureAlert", "channel"), spec.failure_alert.channel))
    known = ", ".join(sorted(channels)) or "none defined"
    return [
        Finding("error", document, path,
                f"unknown channel {name!r}: define a Channel with metadata.name: {name} "
                f"(known channels: {known})")
        for path, name in refs
        if name not in channels
    ]


def _job_templates(spec: JobSpec) -> Iterator[tuple[Path, str | None]]:
    run = spec.run
    for index, argument in enumerate(run.command or []):
        yield ("spec", "run", "command", index), argument
    yield ("spec", "run", "shell"), run.shell
    if run.http is not None:
        yield ("spec", "run", "http", "url"), run.http.url
        yield ("spec", "run", "http", "body"), run.http.body
        for key, value in run.http.query.items():
            yield ("spec", "run", "http", "query", key), value
    if run.message is not None:
        yield ("spec", "run", "message", "text"), run.message.text
    if run.agent is not None:
        yield ("spec", "run", "agent", "prompt"), run.agent.prompt
        yield ("spec", "run", "agent", "system"), run.agent.system
    if spec.delivery is not None:
        yield ("spec", "delivery", "format"), spec.delivery.format


def _templates(document: int, fields: Iterable[tuple[Path, str | None]]) -> list[Finding]:
    findings = []
    for path, text in fields:
        if text is None:
            continue
        problem = template_syntax_problem(text)
        if problem is not None:
            findings.append(
                Finding("error", document, path, problem.message, line_offset=problem.line - 1)
            )
    return findings


def _job_secrets(spec: JobSpec) -> list[tuple[Path, SecretValue | None]]:
    run = spec.run
    found: list[tuple[Path, SecretValue | None]] = [
        (("spec", "run", "env", key), value)
        for key, value in run.env.items() if _CREDENTIAL_NAME.search(key)
    ]
    if run.http is not None:
        found += [(("spec", "run", "http", "headers", key), value)
                  for key, value in run.http.headers.items() if _CREDENTIAL_NAME.search(key)]
    if run.agent is not None:
        found.append((("spec", "run", "agent", "apiKey"), run.agent.api_key))
    hooks = [("delivery", spec.delivery.webhook if spec.delivery else None),
             ("failureAlert", spec.failure_alert.webhook if spec.failure_alert else None)]
    for field, hook in hooks:
        if hook is not None:
            found.append((("spec", field, "webhook", "secret"), hook.secret))
    return found


def _inline_secrets(
    document: int, values: list[tuple[Path, SecretValue | None]], always: bool = False
) -> list[Finding]:
    return [
        Finding("warning", document, path,
                "inline secret in the spec: use a reference such as {fromEnv: NAME}, "
                "{fromFile: PATH} or {secretKeyRef: {name: ..., key: ...}}")
        for path, value in values
        if isinstance(value, str) and value and (always or not value.startswith("{{"))
    ]
