"""The one httpx adapter: every HTTP request an executor makes goes through ``send``.

It sets explicit timeouts (connect, and read/write = what is left of the job's timeout), reads
at most ``max_body`` bytes of the response, and translates httpx's exceptions into
``HttpTransportError`` carrying the error class the retry policy needs: a timeout is
``timeout``, a refused or broken connection ``network``, a malformed URL or request
``permanent``. Cancellation (the runtime's job timeout) closes the connection on the way out.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Any

import httpx

from reconciler.core.errorclass import classify_text
from reconciler.model.enums import ErrorClass

DEFAULT_CONNECT_TIMEOUT = 10.0
MAX_BODY = 1 << 20  # bytes read from a response; the rest is dropped, never buffered
_MAX_REDIRECTS = 5


class HttpTransportError(Exception):
    """No HTTP response at all (timeout, connection, bad request); ``error_class`` says why."""

    def __init__(self, message: str, error_class: ErrorClass) -> None:
        super().__init__(message)
        self.error_class = error_class


@dataclass(frozen=True)
class HttpRequest:
    method: str
    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    params: Mapping[str, str] = field(default_factory=dict)
    content: bytes | None = None


@dataclass(frozen=True)
class HttpResponse:
    status: int
    reason: str
    headers: Mapping[str, str]  # lower-cased names
    body: bytes
    truncated: bool  # the body was longer than the limit and was cut

    def text(self) -> str:
        return self.body.decode(_charset(self.headers.get("content-type", "")), "replace")

    def json(self) -> Any:
        """The parsed body when it is (complete) JSON, else None."""
        content_type = self.headers.get("content-type", "").lower()
        looks_json = "json" in content_type or self.body.lstrip()[:1] in (b"{", b"[")
        if self.truncated or not looks_json:
            return None
        try:
            return json.loads(self.text())
        except ValueError:
            return None

    def retry_after(self, reference: float) -> float | None:
        """Seconds to wait from ``Retry-After`` (seconds or an HTTP date), if it says.

        An HTTP date is measured against the response's own ``Date`` header when it has one
        (both come from the same clock), else against ``reference`` (the run's start).
        """
        value = self.headers.get("retry-after", "").strip()
        if not value:
            return None
        if value.isdigit():
            return float(value)
        retry_at = _http_date(value)
        if retry_at is None:
            return None
        sent_at = _http_date(self.headers.get("date", ""))
        return max(0.0, retry_at - (reference if sent_at is None else sent_at))


def _charset(content_type: str) -> str:
    for part in content_type.split(";")[1:]:
        name, _, value = part.strip().partition("=")
        if name.lower() == "charset" and value:
            charset = value.strip('"')
            try:
                "".encode(charset)
            except LookupError:
                break
            return charset
    return "utf-8"


def _http_date(value: str) -> float | None:
    try:
        return parsedate_to_datetime(value).timestamp() if value else None
    except (TypeError, ValueError, IndexError):
        return None


@dataclass(frozen=True)
class Deadline:
    """When the job's time is up, on the event loop's clock (virtual in simulate and tests).

    Measured on the loop the runtime drives, not read from the wall clock, so an agent's
    second request gets only what the first one left.
    """

    at: float | None

    @classmethod
    def after(cls, seconds: float | None) -> Deadline:
        if not seconds:
            return cls(None)
        return cls(asyncio.get_running_loop().time() + seconds)

    def remaining(self) -> float | None:
        if self.at is None:
            return None
        return max(0.001, self.at - asyncio.get_running_loop().time())


def connect_timeout_for(configured: float | None, job_timeout: float | None) -> float:
    """The connect timeout: the configured one or 10 s, never above the job's timeout."""
    connect = DEFAULT_CONNECT_TIMEOUT if configured is None else configured
    return min(connect, job_timeout) if job_timeout else connect


async def send(request: HttpRequest, *, connect_timeout: float, read_timeout: float | None,
               max_body: int = MAX_BODY) -> HttpResponse:
    """Send ``request``; any response (whatever its status) is returned, never raised."""
    timeout = httpx.Timeout(connect=connect_timeout, read=read_timeout, write=read_timeout,
                            pool=connect_timeout)
    try:
        async with httpx.AsyncClient(timeout=timeout, follow_redirects=True,
                                     max_redirects=_MAX_REDIRECTS) as client:
            return await _exchange(client, request, max_body)
    except httpx.InvalidURL as exc:
        raise HttpTransportError(f"invalid URL: {exc}", ErrorClass.PERMANENT) from exc
    except httpx.HTTPError as exc:
        raise _translate(exc, connect_timeout, read_timeout) from exc


async def _exchange(client: httpx.AsyncClient, request: HttpRequest,
                    max_body: int) -> HttpResponse:
    async with client.stream(request.method, request.url, headers=dict(request.headers),
                             params=dict(request.params), content=request.content) as response:
        body, truncated = await _read_bounded(response, max_body)
        headers = {name.lower(): value for name, value in response.headers.items()}
        return HttpResponse(response.status_code, response.reason_phrase, headers, body,
                            truncated)


async def _read_bounded(response: httpx.Response, max_body: int) -> tuple[bytes, bool]:
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size > max_body:
            return b"".join(chunks)[:max_body], True
    return b"".join(chunks), False


def _translate(exc: httpx.HTTPError, connect: float, read: float | None) -> HttpTransportError:
    detail = str(exc) or type(exc).__name__
    if isinstance(exc, httpx.ConnectTimeout):
        return HttpTransportError(f"connect timed out after {connect:g}s", ErrorClass.TIMEOUT)
    if isinstance(exc, httpx.TimeoutException):
        limit = f" within {read:g}s" if read is not None else ""
        return HttpTransportError(f"timed out: no complete response{limit} ({detail})",
                                  ErrorClass.TIMEOUT)
    if isinstance(exc, httpx.UnsupportedProtocol | httpx.LocalProtocolError |
                  httpx.TooManyRedirects):
        return HttpTransportError(f"bad request: {detail}", ErrorClass.PERMANENT)
    if isinstance(exc, httpx.ConnectError):
        return HttpTransportError(f"connection failed: {detail}", ErrorClass.NETWORK)
    if isinstance(exc, httpx.TransportError):
        return HttpTransportError(f"connection broken: {detail}", ErrorClass.NETWORK)
    return HttpTransportError(detail, classify_text(detail))
