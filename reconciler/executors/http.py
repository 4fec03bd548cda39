"""The ``http`` executor: one request, judged by its status.

URL, method, query values, literal header values and the body are templates; header values
given as secret references are resolved at run time and never rendered (a secret is data, not
a template). Success is any 2xx unless ``successStatus`` lists the statuses that count. The
response body (an excerpt) is the run's output, and a JSON body is parsed into ``data``.
Failures carry their class: 429 ``rate_limit``, 529 ``overloaded``, 5xx ``server_error``,
other 4xx ``permanent``, no connection ``network``, no answer in time ``timeout``; a
``Retry-After`` header is reported as ``retry_after`` seconds for the retry policy.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from reconciler.core.errorclass import classify_http_status
from reconciler.errors import PermanentError
from reconciler.executors.base import RunContext, RunResult
from reconciler.executors.httpclient import (
    HttpRequest,
    HttpResponse,
    HttpTransportError,
    connect_timeout_for,
    send,
)
from reconciler.executors.secrets import SecretResolver
from reconciler.executors.templates import render, template_context
from reconciler.model.enums import ErrorClass
from reconciler.model.run import HttpRun
from reconciler.model.secrets import SecretRef

OUTPUT_EXCERPT = 4000  # characters of the response body kept as the run's output
_ERROR_EXCERPT = 300  # characters of an error response quoted in the error text
_METHODS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"})


class HttpExecutor:
    def __init__(self, secrets: SecretResolver | None = None) -> None:
        self._secrets = secrets or SecretResolver()

    async def execute(self, context: RunContext) -> RunResult:
        spec = context.job.spec.run.http
        if spec is None:
            return RunResult("error", error="not an http job", error_class=ErrorClass.PERMANENT)
        try:
            request = self._request(spec, context)
        except PermanentError as exc:
            return RunResult("error", error=str(exc), error_class=ErrorClass.PERMANENT)
        configured = spec.connect_timeout.total_seconds() if spec.connect_timeout else None
        try:
            response = await send(
                request, connect_timeout=connect_timeout_for(configured, context.timeout),
                read_timeout=context.timeout or None)
        except HttpTransportError as exc:
            return RunResult("error", summary=f"{request.method} {_where(request.url)} failed",
                             error=f"{request.method} {_where(request.url)}: {exc}",
                             error_class=exc.error_class)
        return _judge(spec, request, response, context.started_at)

    def _request(self, spec: HttpRun, context: RunContext) -> HttpRequest:
        variables = template_context(context)
        method = render(spec.method, variables, "run.http.method").strip().upper()
        if method not in _METHODS:
            raise PermanentError(f"run.http.method: {method!r} is not an HTTP method")
        headers = {name: self._header(name, value, variables)
                   for name, value in spec.headers.items()}
        params = {name: render(value, variables, f"run.http.query.{name}")
                  for name, value in spec.query.items()}
        body = None if spec.body is None else render(spec.body, variables, "run.http.body")
        return HttpRequest(method, render(spec.url, variables, "run.http.url").strip(), headers,
                           params, None if body is None else body.encode("utf-8"))

    def _header(self, name: str, value: str | SecretRef, variables: dict[str, Any]) -> str:
        if isinstance(value, SecretRef):
            return self._secrets.resolve(value)
        return render(value, variables, f"run.http.headers.{name}")


def _where(url: str) -> str:
    """The URL without query or credentials, fit for a summary (queries may carry tokens)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}" if parts.scheme else url.split("?")[0]


def _judge(spec: HttpRun, request: HttpRequest, response: HttpResponse,
           started_at: float) -> RunResult:
    status = response.status
    text = response.text()
    output = text[:OUTPUT_EXCERPT] + ("\n[truncated]" if len(text) > OUTPUT_EXCERPT
                                      or response.truncated else "")
    line = f"{request.method} {_where(request.url)}: HTTP {status} {response.reason}".rstrip()
    data = response.json()
    success = status in spec.success_status if spec.success_status else 200 <= status <= 299
    if success:
        return RunResult("ok", summary=line, output=output, data=data)
    error_class = classify_http_status(status) or ErrorClass.PERMANENT
    excerpt = " ".join(text[:_ERROR_EXCERPT].split())
    return RunResult("error", summary=line, output=output, data=data,
                     error=f"{line}" + (f": {excerpt}" if excerpt else ""),
                     error_class=error_class, retry_after=response.retry_after(started_at))
