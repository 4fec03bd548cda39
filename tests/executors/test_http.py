"""The http executor against a real server on 127.0.0.1."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from email.utils import format_datetime
from typing import Any

import pytest

from reconciler.executors.base import RunResult
from reconciler.executors.http import OUTPUT_EXCERPT, HttpExecutor
from reconciler.executors.httpclient import HttpResponse, connect_timeout_for
from reconciler.executors.secrets import SecretResolver
from reconciler.model.enums import ErrorClass
from tests.executors.httpserver import (
    Reply,
    closed_port,
    make_context,
    make_job,
    serving,
)


def run_http(http: dict[str, Any], *, timeout: float | None = 10.0,
             environ: dict[str, str] | None = None) -> RunResult:
    context = make_context(make_job({"http": http}), timeout=timeout)
    executor = HttpExecutor(SecretResolver(environ=environ or {}))
    return asyncio.run(executor.execute(context))


def test_success_renders_templates_and_sends_the_secret_header() -> None:
    with serving(lambda request: Reply(200, "fine")) as server:
        result = run_http({
            "url": server.url + "/hooks/{{ job.name }}",
            "method": "POST",
            "headers": {"Authorization": {"fromEnv": "TOKEN"}, "X-Run": "{{ run.id }}"},
            "query": {"attempt": "{{ run.attempt }}", "plain": "a b"},
            "body": '{"job": "{{ job.name }}", "at": "{{ now.isoformat() }}"}',
        }, environ={"TOKEN": "Bearer s3cret"})
    assert result.status == "ok", result
    assert result.output == "fine"
    assert result.summary is not None and "HTTP 200" in result.summary
    [request] = server.requests
    assert request.method == "POST" and request.path == "/hooks/probe"
    assert request.headers["authorization"] == "Bearer s3cret"
    assert request.headers["x-run"] == "run-1"
    assert request.query == {"attempt": ["1"], "plain": ["a b"]}
    assert request.json() == {"job": "probe", "at": "2026-05-28T20:26:40+00:00"}


def test_json_response_lands_in_data() -> None:
    with serving(lambda request: Reply(200, {"processed": 3, "items": ["a"]})) as server:
        result = run_http({"url": server.url + "/report"})
    assert result.status == "ok"
    assert result.data == {"processed": 3, "items": ["a"]}


def test_text_response_has_no_data() -> None:
    with serving(lambda request: Reply(200, "not json {")) as server:
        result = run_http({"url": server.url})
    assert result.status == "ok" and result.data is None


def test_4xx_is_permanent_with_an_excerpt_of_the_body() -> None:
    with serving(lambda request: Reply(404, "no such hook")) as server:
        result = run_http({"url": server.url + "/missing?token=hidden"})
    assert result.status == "error"
    assert result.error_class is ErrorClass.PERMANENT
    assert result.error is not None and "HTTP 404" in result.error
    assert "no such hook" in result.error
    assert "hidden" not in result.error and "hidden" not in (result.summary or "")


def test_429_is_rate_limit_and_reports_retry_after_seconds() -> None:
    reply = Reply(429, "slow down", {"Retry-After": "7"})
    with serving(lambda request: reply) as server:
        result = run_http({"url": server.url})
    assert result.status == "error"
    assert result.error_class is ErrorClass.RATE_LIMIT
    assert result.retry_after == 7.0


def test_retry_after_as_an_http_date_is_measured_against_the_response_date() -> None:
    sent = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
    retry = datetime(2026, 3, 1, 12, 2, 0, tzinfo=UTC)
    headers = {"Retry-After": format_datetime(retry, usegmt=True),
               "Date": format_datetime(sent, usegmt=True)}
    with serving(lambda request: Reply(503, "maintenance", headers)) as server:
        result = run_http({"url": server.url})
    assert result.error_class is ErrorClass.SERVER_ERROR
    assert result.retry_after == 120.0


@pytest.mark.parametrize(("status", "expected"), [
    (503, ErrorClass.SERVER_ERROR), (500, ErrorClass.SERVER_ERROR),
    (529, ErrorClass.OVERLOADED), (401, ErrorClass.PERMANENT),
])
def test_error_statuses_are_classified(status: int, expected: ErrorClass) -> None:
    with serving(lambda request: Reply(status, "nope")) as server:
        result = run_http({"url": server.url})
    assert result.status == "error"
    assert result.error_class is expected
    assert result.retry_after is None


def test_connection_refused_is_network() -> None:
    result = run_http({"url": f"http://127.0.0.1:{closed_port()}/"})
    assert result.status == "error"
    assert result.error_class is ErrorClass.NETWORK
    assert result.error is not None and "connection failed" in result.error


def test_slow_response_hits_the_read_timeout() -> None:
    with serving(lambda request: Reply(200, "late", delay=1.5)) as server:
        result = run_http({"url": server.url}, timeout=0.3)
    assert result.status == "error"
    assert result.error_class is ErrorClass.TIMEOUT


def test_cancellation_propagates_and_closes_the_request() -> None:
    async def scenario(url: str) -> None:
        executor = HttpExecutor(SecretResolver(environ={}))
        task = asyncio.ensure_future(executor.execute(
            make_context(make_job({"http": {"url": url}}), timeout=30)))
        await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    with serving(lambda request: Reply(200, "late", delay=1.0)) as server:
        asyncio.run(scenario(server.url))
    assert len(server.requests) == 1


def test_success_status_list_replaces_2xx() -> None:
    with serving(lambda request: Reply(200, "ok")) as server:
        strict = run_http({"url": server.url, "successStatus": [204]})
    with serving(lambda request: Reply(404, "gone is fine")) as server:
        lenient = run_http({"url": server.url, "successStatus": [404]})
    assert strict.status == "error" and strict.error_class is ErrorClass.PERMANENT
    assert lenient.status == "ok"


def test_long_body_is_cut_to_an_excerpt() -> None:
    with serving(lambda request: Reply(200, "x" * (OUTPUT_EXCERPT * 2))) as server:
        result = run_http({"url": server.url})
    assert result.output is not None
    assert result.output.endswith("[truncated]")
    assert len(result.output) < OUTPUT_EXCERPT + 20


def test_template_error_fails_with_the_field_and_sends_nothing() -> None:
    with serving(lambda request: Reply()) as server:
        result = run_http({"url": server.url, "method": "POST", "body": "{{ nope.x }}"})
    assert result.status == "error" and result.error_class is ErrorClass.PERMANENT
    assert result.error is not None and "run.http.body" in result.error
    assert server.requests == []


def test_missing_secret_is_permanent_and_named() -> None:
    with serving(lambda request: Reply()) as server:
        result = run_http({"url": server.url, "headers": {"X-Key": {"fromEnv": "ABSENT"}}})
    assert result.status == "error" and result.error_class is ErrorClass.PERMANENT
    assert result.error is not None and "ABSENT" in result.error
    assert server.requests == []


def test_connect_timeout_defaults_to_10s_and_never_exceeds_the_job_timeout() -> None:
    assert connect_timeout_for(None, 600) == 10
    assert connect_timeout_for(None, 3) == 3
    assert connect_timeout_for(30, 5) == 5
    assert connect_timeout_for(2, None) == 2


def test_retry_after_date_without_a_date_header_counts_from_the_run_start() -> None:
    retry = datetime(2026, 3, 1, 12, 0, 30, tzinfo=UTC)
    response = HttpResponse(503, "", {"retry-after": format_datetime(retry, usegmt=True)},
                            b"", False)
    started = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC).timestamp()
    assert response.retry_after(started) == 30.0
    assert HttpResponse(429, "", {"retry-after": "soon"}, b"", False).retry_after(0) is None
