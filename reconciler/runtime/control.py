"""The daemon's control socket: ``reconciler trigger`` talks to a running daemon through a
Unix socket in the state directory (``control.sock``, mode 0600, so only the state's owner
may use it). One JSON request per connection, one JSON answer."""

from __future__ import annotations

import asyncio
import json
import os
import socket
from pathlib import Path
from typing import Any

from reconciler.runtime.service import Service

SOCKET_NAME = "control.sock"
_LIMIT = 64 * 1024


def socket_path(state_dir: str | Path) -> Path:
    return Path(state_dir) / SOCKET_NAME


class ControlServer:
    def __init__(self, server: asyncio.AbstractServer, path: Path) -> None:
        self._server = server
        self._path = path

    @classmethod
    async def start(cls, state_dir: str | Path, service: Service) -> ControlServer:
        path = socket_path(state_dir)
        path.unlink(missing_ok=True)  # we hold the writer lock: a leftover socket is stale

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                request = json.loads(await reader.readline())
                answer = await _answer(service, request)
            except (ValueError, TypeError) as exc:
                answer = {"status": "bad-request", "message": str(exc)}
            writer.write(json.dumps(answer).encode() + b"\n")
            await writer.drain()
            writer.close()

        server = await asyncio.start_unix_server(handle, path=str(path), limit=_LIMIT)
        os.chmod(path, 0o600)
        return cls(server, path)

    async def close(self) -> None:
        self._server.close()
        await self._server.wait_closed()
        self._path.unlink(missing_ok=True)


async def _answer(service: Service, request: Any) -> dict[str, Any]:
    if not isinstance(request, dict) or request.get("action") != "trigger":
        return {"status": "bad-request", "message": "expected {action: trigger, job: NAME}"}
    result = await service.trigger(str(request.get("job")), force=bool(request.get("force")))
    return {"status": result.status, "runId": result.run_id, "message": result.message}


def send(state_dir: str | Path, request: dict[str, Any], timeout: float = 10.0
         ) -> dict[str, Any] | None:
    """Ask a running daemon; None when no daemon listens on this state directory."""
    path = socket_path(state_dir)
    if not path.exists():
        return None
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.settimeout(timeout)
        try:
            client.connect(str(path))
        except (ConnectionRefusedError, FileNotFoundError):
            return None
        client.sendall(json.dumps(request).encode() + b"\n")
        data = b""
        while not data.endswith(b"\n"):
            chunk = client.recv(_LIMIT)
            if not chunk:
                break
            data += chunk
    answer = json.loads(data or b"{}")
    return answer if isinstance(answer, dict) else None
