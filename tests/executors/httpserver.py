"""A real HTTP server on 127.0.0.1 for executor tests, and RunContext builders.

The server runs stdlib ``http.server`` in a thread; each test gives it a handler that maps a
recorded request to a reply, and reads back every request it received.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from reconciler.executors.base import RunContext
from reconciler.model.job import ScheduledJob
from reconciler.model.state import RunRecord, Trigger


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]  # lower-cased names
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: bytes | str | Any = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds before answering (a slow server)

    def payload(self) -> tuple[bytes, str]:
        if isinstance(self.body, bytes):
            return self.body, "text/plain; charset=utf-8"
        if isinstance(self.body, str):
            return self.body.encode(), "text/plain; charset=utf-8"
        return json.dumps(self.body).encode(), "application/json"


Handler = Callable[[Recorded], Reply]


class LocalServer:
    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.requests: list[Recorded] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _request_handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> LocalServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def _request_handler(server: LocalServer) -> type[BaseHTTPRequestHandler]:
    class _Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            parts = urlsplit(self.path)
            recorded = Recorded(self.command, parts.path, parse_qs(parts.query),
                                {k.lower(): v for k, v in self.headers.items()},
                                self.rfile.read(length))
            server.requests.append(recorded)
            reply = server.handler(recorded)
            if reply.delay:
                time.sleep(reply.delay)
            body, content_type = reply.payload()
            try:
                # send_response_only: a test may set its own Date header (Retry-After dates).
                self.send_response_only(reply.status)
                if "Date" not in reply.headers:
                    self.send_header("Date", self.date_time_string())
                self.send_header("Content-Type", reply.headers.get("Content-Type", content_type))
                for name, value in reply.headers.items():
                    if name != "Content-Type":
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except OSError:
                pass  # the client gave up (the timeout test)

        do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _serve

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return _Handler


@contextmanager
def serving(handler: Handler) -> Iterator[LocalServer]:
    with LocalServer(handler) as server:
        yield server


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def at(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


def make_job(run: dict[str, Any], name: str = "probe", **spec: Any) -> ScheduledJob:
    body: dict[str, Any] = {"schedule": {"every": "1h"}, "run": run}
    body.update(spec)
    return ScheduledJob.model_validate({
        "apiVersion": "reconciler.dev/v1", "kind": "ScheduledJob",
        "metadata": {"name": name}, "spec": body})


def make_context(job: ScheduledJob, *, started_at: float = 1_780_000_000.0,
                 timeout: float | None = 10.0, trigger: Trigger = "schedule",
                 attempt: int = 1, memory: tuple[RunRecord, ...] = (),
                 scheduled_at: float | None = None) -> RunContext:
    def recall(count: int) -> tuple[RunRecord, ...]:
        return memory[:count]

    return RunContext(job=job, run_id="run-1", occurrence_key="occ-1",
                      scheduled_at=started_at if scheduled_at is None else scheduled_at,
                      started_at=started_at, attempt=attempt, trigger=trigger,
                      timeout=timeout, memory=recall)
