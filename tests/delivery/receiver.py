"""A real HTTP receiver on 127.0.0.1 for delivery tests: scripted replies, recorded requests."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass(frozen=True)
class Received:
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers.items() if k.lower() == name.lower()), None)


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: str = "ok"
    headers: dict[str, str] = field(default_factory=dict)


Responder = Callable[[Received], Reply]


@dataclass
class Receiver:
    """Replies from ``script`` in order (then ``default``), or from ``responder`` if set."""

    url: str = ""
    script: list[Reply] = field(default_factory=list)
    default: Reply = field(default_factory=Reply)
    responder: Responder | None = None
    requests: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def reply(self, request: Received) -> Reply:
        with self.lock:
            self.requests.append(request)
            if self.responder is not None:
                return self.responder(request)
            return self.script.pop(0) if self.script else self.default


def _handler(receiver: Receiver) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            parts = urlsplit(self.path)
            request = Received(parts.path, parse_qs(parts.query), dict(self.headers.items()),
                               self.rfile.read(length))
            answer = receiver.reply(request)
            payload = answer.body.encode()
            try:
                self.send_response(answer.status)
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                return  # the client gave up (a timeout test): nothing to answer

        do_GET = do_POST  # an http job's GET is recorded the same way

        def log_message(self, format: str, *args: Any) -> None:
            return  # quiet tests

    return Handler


@contextmanager
def serving(receiver: Receiver | None = None) -> Iterator[Receiver]:
    receiver = receiver or Receiver()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(receiver))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    receiver.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
