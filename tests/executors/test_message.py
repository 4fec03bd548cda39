"""The message executor: the rendered text is the result."""

from __future__ import annotations

import asyncio

from reconciler.executors.message import MessageExecutor
from reconciler.model.enums import ErrorClass
from reconciler.model.state import RunRecord
from tests.executors.httpserver import at, make_context, make_job

START = at("2026-03-06T16:00:00")  # Friday 16:00 in London (GMT in March)


def test_text_is_rendered_as_output_and_summary() -> None:
    job = make_job({"message": {"text": "Deploy freeze at {{ now.strftime('%H:%M %Z') }} "
                                        "for {{ job.name }} ({{ run.trigger }})"}},
                   name="freeze", schedule={"cron": "0 16 * * 5", "timezone": "Europe/London"})
    result = asyncio.run(MessageExecutor().execute(make_context(job, started_at=START)))
    assert result.status == "ok"
    assert result.output == result.summary == "Deploy freeze at 16:00 GMT for freeze (schedule)"
    assert result.error is None and not result.delivered


def test_text_sees_the_job_memory() -> None:
    previous = RunRecord("r0", "o0", "freeze", START - 3600, START - 3600, START - 3500, "ok",
                         summary="last week's note")
    job = make_job({"message": {"text": "Last time: {{ last_run.summary }}, "
                                        "{{ (run.started_at | localtime).hour }}h"}})
    result = asyncio.run(MessageExecutor().execute(
        make_context(job, started_at=START, memory=(previous,))))
    assert result.summary == "Last time: last week's note, 16h"


def test_plain_text_without_markers() -> None:
    job = make_job({"message": {"text": "Stand-up in 5 minutes"}})
    result = asyncio.run(MessageExecutor().execute(make_context(job)))
    assert result.status == "ok" and result.output == "Stand-up in 5 minutes"


def test_a_failing_template_fails_the_run_with_field_and_reason() -> None:
    job = make_job({"message": {"text": "Hello {{ nobody.name }}"}})
    result = asyncio.run(MessageExecutor().execute(make_context(job)))
    assert result.status == "error" and result.error_class is ErrorClass.PERMANENT
    assert result.output is None
    assert result.error is not None
    assert "run.message.text" in result.error and "nobody" in result.error


def test_a_syntax_error_names_the_line() -> None:
    job = make_job({"message": {"text": "ok\n{% if %}"}})
    result = asyncio.run(MessageExecutor().execute(make_context(job)))
    assert result.status == "error"
    assert result.error is not None and "line 2" in result.error
