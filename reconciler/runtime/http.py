"""The daemon's HTTP API: read-only JSON status, health, Prometheus metrics, and a guarded trigger.

Off by default (``--http 127.0.0.1:8080``). Every endpoint is an ``async def``: Starlette runs
those on the event loop itself, never in a worker thread, so they read the service's in-memory
snapshot and its SQLite connection between two awaits of the one loop thread, exactly like the
service does, and never see a half-applied change. Reads never take ``service.lock``: a long
apply or a landing batch must not make status requests wait.

``POST /api/v1/jobs/{name}/trigger`` changes state, so it needs ``Authorization: Bearer
<token>``; without a configured token it is refused outright (403), so turning on the read-only
API never also opens a way to run jobs.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import socket
from collections.abc import Callable, Iterator
from typing import Any, Protocol

import uvicorn
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from reconciler.core.jobview import DesiredJob
from reconciler.errors import ReconcilerError, UsageError
from reconciler.model.state import JobState, RunRecord, SkipRecord
from reconciler.runtime.manual import TriggerResult
from reconciler.runtime.metrics import CONTENT_TYPE, MetricsSink, StateSource
from reconciler.runtime.views import (
    fire_json,
    history_run_json,
    next_fires,
    skip_json,
    status_json,
)

MAX_LIMIT = 1000
DEFAULT_LIMIT = 20
MAX_COUNT = 100
DEFAULT_COUNT = 5

# How a trigger's outcome maps to an HTTP status: a refused trigger is a conflict with the
# job's current state (running, suspended, disabled), retried later or with ?force=true.
TRIGGER_STATUS = {"started": 202, "queued": 202, "already-running": 409, "suspended": 409,
                  "disabled": 409, "unknown-job": 404}


class History(Protocol):
    def runs(self, job: str, limit: int = 50, before: float | None = None) -> list[RunRecord]:
        ...

    def skips(self, job: str | None = None, limit: int = 50) -> list[SkipRecord]: ...


class ApiService(StateSource, Protocol):
    """What the API needs of ``Service``."""

    @property
    def writer(self) -> History: ...

    async def trigger(self, name: str, force: bool = False) -> TriggerResult: ...


def build_app(
    service: ApiService, *, token: str | None, now: Callable[[], float],
    metrics: MetricsSink | None = None, alive: Callable[[], bool] | None = None,
) -> Starlette:
    """The ASGI app over ``service``.

    ``token`` guards the trigger endpoint (None: triggering over HTTP is disabled; surrounding
    whitespace, e.g. a token file's newline, is ignored; an empty token is refused). ``now``
    is the clock for "next fires". ``metrics`` feeds ``/metrics`` (default: a fresh sink with
    only the state gauges). ``alive`` says whether the service's loop still runs, for
    ``/healthz`` (default: answering at all means the event loop runs)."""
    api = _Api(service, _clean_token(token), now, metrics or MetricsSink(), alive)
    routes = [
        Route("/healthz", api.healthz),
        Route("/readyz", api.readyz),
        Route("/metrics", api.metrics),
        Route("/api/v1/jobs", api.jobs),
        Route("/api/v1/jobs/{name}", api.job),
        Route("/api/v1/jobs/{name}/runs", api.runs),
        Route("/api/v1/jobs/{name}/next", api.next),
        Route("/api/v1/jobs/{name}/trigger", api.trigger, methods=["POST"]),
    ]
    return Starlette(routes=routes, exception_handlers={HTTPException: _http_error})


def _clean_token(token: str | None) -> str | None:
    if token is None:
        return None
    token = token.strip()
    if not token:
        raise UsageError("the HTTP trigger token is empty: put a secret in the token file or "
                         "RECONCILER_HTTP_TOKEN, or leave both unset to disable triggering")
    return token


def error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=headers)


async def _http_error(request: Request, exc: Exception) -> Response:
    # Unknown paths and wrong methods answer JSON too, like every other error of the API.
    assert isinstance(exc, HTTPException)
    return error(exc.status_code, str(exc.detail), dict(exc.headers or {}))


class _Api:
    def __init__(self, service: ApiService, token: str | None, now: Callable[[], float],
                 metrics: MetricsSink, alive: Callable[[], bool] | None) -> None:
        self.service = service
        self.token = token
        self.now = now
        self.metrics_sink = metrics
        self.alive = alive
        metrics.watch(service)

    # ---- health ----------------------------------------------------------------------------

    async def healthz(self, request: Request) -> Response:
        if self.alive is not None and not self.alive():
            return error(503, "the reconcile loop has stopped")
        return JSONResponse({"status": "ok"})

    async def readyz(self, request: Request) -> Response:
        if not self.service.ready:
            return error(503, "not ready: the first reconcile has not finished")
        return JSONResponse({"status": "ready", "jobs": len(self.service.snapshot())})

    async def metrics(self, request: Request) -> Response:
        return Response(self.metrics_sink.render(), media_type=CONTENT_TYPE)

    # ---- reads -----------------------------------------------------------------------------

    async def jobs(self, request: Request) -> Response:
        states = self.service.snapshot()
        return JSONResponse({"jobs": [self._status(states[name]) for name in sorted(states)]})

    async def job(self, request: Request) -> Response:
        state = self._state(request)
        return JSONResponse(self._status(state))

    async def runs(self, request: Request) -> Response:
        state = self._state(request)
        limit = _int_param(request, "limit", DEFAULT_LIMIT, MAX_LIMIT)
        runs = self.service.writer.runs(state.name, limit=limit)
        skips = self.service.writer.skips(state.name, limit=limit)
        return JSONResponse({"job": state.name, "runs": [history_run_json(r) for r in runs],
                             "skipped": [skip_json(s) for s in skips]})

    async def next(self, request: Request) -> Response:
        state = self._state(request)
        count = _int_param(request, "count", DEFAULT_COUNT, MAX_COUNT)
        desired = self._desired(state.name)
        zone = desired.spec.spec.schedule.timezone
        fires = next_fires(desired, state, self.now(), count)
        return JSONResponse({"name": state.name, "timezone": zone,
                             "suspended": desired.spec.spec.suspend,
                             "next": [fire_json(fire, zone) for fire in fires]})

    def _status(self, state: JobState) -> dict[str, Any]:
        desired = self.service.desired.get(state.name)
        return status_json(state, desired.spec if desired else None)

    def _state(self, request: Request) -> JobState:
        name = request.path_params["name"]
        state = self.service.snapshot().get(name)
        if state is None:
            raise HTTPException(404, f"no job named {name!r}")
        return state

    def _desired(self, name: str) -> DesiredJob:
        desired = self.service.desired.get(name)
        if desired is None:
            raise HTTPException(404, f"job {name!r} has no spec any more")
        return desired

    # ---- the one write ---------------------------------------------------------------------

    async def trigger(self, request: Request) -> Response:
        if self.token is None:
            return error(403, "trigger over HTTP is disabled: set a token")
        if not self._authorized(request.headers.get("authorization", "")):
            return error(401, "missing or wrong bearer token",
                         {"WWW-Authenticate": 'Bearer realm="reconciler"'})
        force = _bool_param(request, "force")
        name = request.path_params["name"]
        result = await self.service.trigger(name, force=force)
        code = TRIGGER_STATUS.get(result.status, 409)
        body = {"job": name, "status": result.status, "runId": result.run_id,
                "message": result.message}
        if code >= 400:
            body["error"] = result.message  # like every other refusal of the API
        return JSONResponse(body, status_code=code)

    def _authorized(self, header: str) -> bool:
        assert self.token is not None
        scheme, _, given = header.partition(" ")
        if scheme.lower() != "bearer":
            return False
        # Constant time: the comparison must not tell how much of a guess was right.
        return hmac.compare_digest(given.strip().encode(), self.token.encode())


def _int_param(request: Request, name: str, default: int, maximum: int) -> int:
    raw = request.query_params.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if not 1 <= value <= maximum:
        raise HTTPException(400, f"{name} must be a whole number from 1 to {maximum}, "
                                 f"got {raw!r}")
    return value


def _bool_param(request: Request, name: str) -> bool:
    raw = request.query_params.get(name, "false").lower()
    if raw in ("true", "1", "yes"):
        return True
    if raw in ("false", "0", "no", ""):
        return False
    raise HTTPException(400, f"{name} must be true or false, got {raw!r}")


# ---- serving -------------------------------------------------------------------------------


def parse_listen(text: str) -> tuple[str, int]:
    """``127.0.0.1:8080``, ``[::1]:8080``, ``:8080`` or ``8080`` (both: 127.0.0.1) as (host,
    port). Port 0 asks the system for a free port (``serve_http`` reports the real one)."""
    raw = text.strip()
    host, sep, port_text = raw.rpartition(":")
    if not sep:
        host, port_text = "", raw
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    elif ":" in host:
        host = ""  # an IPv6 address without brackets: ambiguous with the port separator
        port_text = "x"
    try:
        port = int(port_text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535 or any(c.isspace() for c in raw):
        raise UsageError(f"invalid listen address {text!r}: use HOST:PORT, such as "
                         "127.0.0.1:8080, 0.0.0.0:8080 or [::1]:8080")
    return host or "127.0.0.1", port


class _Server(uvicorn.Server):
    """uvicorn without its signal handling: the daemon owns SIGTERM and SIGINT and stops the
    server through ``stop``; uvicorn's own handlers would swallow the daemon's shutdown."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def _bind(host: str, port: int) -> socket.socket:
    # Binding here, not in uvicorn, gives a clear error (uvicorn calls sys.exit on a busy
    # port) and the real port when 0 was asked for.
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                    flags=socket.AI_PASSIVE)[0][0]
        return socket.create_server((host, port), family=family)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise ReconcilerError(f"cannot serve HTTP on {host}:{port}: {reason}") from exc


async def _run(server: _Server, sock: socket.socket) -> None:
    try:
        await server.serve(sockets=[sock])
    except SystemExit as exc:
        # uvicorn exits the process when it cannot start; in a task that would end the loop.
        raise ReconcilerError(f"the HTTP server failed to start (exit {exc.code})") from None


async def serve_http(
    app: Starlette, host: str, port: int, stop: asyncio.Event, *,
    on_listening: Callable[[str, int], None] | None = None,
) -> None:
    """Serve ``app`` on ``host:port`` inside the current event loop until ``stop`` is set.

    ``on_listening(host, port)`` is called once the socket listens, with the bound port.
    Raises ``ReconcilerError`` when the address cannot be used. On stop, open requests get
    up to 5 s to finish."""
    sock = _bind(host, port)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", log_config=None,
                            lifespan="off", access_log=False, timeout_graceful_shutdown=5)
    server = _Server(config)
    serving = asyncio.ensure_future(_run(server, sock))
    stopper = asyncio.ensure_future(stop.wait())
    try:
        if on_listening is not None:
            on_listening(host, sock.getsockname()[1])
        await asyncio.wait({serving, stopper}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopper.cancel()
        server.should_exit = True
        await _finish(serving, sock)


async def _finish(serving: asyncio.Future[None], sock: socket.socket) -> None:
    try:
        await asyncio.shield(serving)
    except asyncio.CancelledError:
        serving.cancel()
        raise
    finally:
        sock.close()
