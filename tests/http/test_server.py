"""serve_http inside the caller's loop: listening address, stopping, signals, errors."""

from __future__ import annotations

import asyncio
import signal
import socket

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from reconciler.errors import ReconcilerError, UsageError
from reconciler.runtime.http import parse_listen, serve_http


@pytest.mark.parametrize(("text", "expected"), [
    ("127.0.0.1:8080", ("127.0.0.1", 8080)),
    ("0.0.0.0:9100", ("0.0.0.0", 9100)),
    ("localhost:80", ("localhost", 80)),
    ("[::1]:8080", ("::1", 8080)),
    (":8080", ("127.0.0.1", 8080)),
    ("8080", ("127.0.0.1", 8080)),
    (" 127.0.0.1:0 ", ("127.0.0.1", 0)),
])
def test_parse_listen_accepts_host_port(text: str, expected: tuple[str, int]) -> None:
    assert parse_listen(text) == expected


@pytest.mark.parametrize("text", [
    "", "127.0.0.1", "127.0.0.1:", "127.0.0.1:http", "127.0.0.1:65536", "127.0.0.1:-1",
    "::1:8080", "[::1]", "local host:80", "http://127.0.0.1:8080",
])
def test_parse_listen_rejects_bad_input_with_the_accepted_form(text: str) -> None:
    with pytest.raises(UsageError, match=r"use HOST:PORT, such as 127\.0\.0\.1:8080"):
        parse_listen(text)


async def _hello(request: Request) -> Response:
    return PlainTextResponse("hello")


APP = Starlette(routes=[Route("/", _hello)])


async def _start(stop: asyncio.Event, port: int = 0) -> tuple[asyncio.Task[None], int]:
    ports: list[int] = []
    task = asyncio.ensure_future(serve_http(APP, "127.0.0.1", port, stop,
                                            on_listening=lambda _h, p: ports.append(p)))
    while not ports and not task.done():
        await asyncio.sleep(0)
    if not ports:
        await task
    return task, ports[0]


def test_serves_until_stop_is_set_then_frees_the_port() -> None:
    async def scenario() -> None:
        stop = asyncio.Event()
        task, port = await _start(stop)
        assert port > 0
        async with httpx.AsyncClient(trust_env=False) as client:
            response = await client.get(f"http://127.0.0.1:{port}/")
            assert response.text == "hello"
            stop.set()
            await asyncio.wait_for(task, timeout=5)
            with pytest.raises(httpx.ConnectError):
                await client.get(f"http://127.0.0.1:{port}/")
        # The same port can be served again at once.
        again, same = await _start(asyncio.Event(), port)
        assert same == port
        again.cancel()
        with pytest.raises(asyncio.CancelledError):
            await again

    asyncio.run(scenario())


def test_leaves_the_daemons_signal_handlers_alone() -> None:
    seen: list[int] = []

    def handler(signum: int, frame: object) -> None:
        seen.append(signum)

    async def scenario() -> None:
        stop = asyncio.Event()
        task, _ = await _start(stop)
        await asyncio.sleep(0.2)  # uvicorn is in its main loop now
        assert signal.getsignal(signal.SIGTERM) is handler
        signal.raise_signal(signal.SIGTERM)
        await asyncio.sleep(0.2)
        assert not task.done()  # the server did not take the signal as its own
        stop.set()
        await asyncio.wait_for(task, timeout=5)

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        asyncio.run(scenario())
        assert signal.getsignal(signal.SIGTERM) is handler
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert seen == [signal.SIGTERM]


def test_a_busy_port_is_a_clear_error() -> None:
    busy = socket.create_server(("127.0.0.1", 0))
    port = busy.getsockname()[1]

    async def scenario() -> None:
        await serve_http(APP, "127.0.0.1", port, asyncio.Event())

    try:
        with pytest.raises(ReconcilerError, match=rf"cannot serve HTTP on 127\.0\.0\.1:{port}"):
            asyncio.run(scenario())
    finally:
        busy.close()


def test_an_address_of_no_local_interface_is_a_clear_error() -> None:
    # 192.0.2.1 (TEST-NET-1) is on no interface here: the bind fails, nothing is sent.
    async def scenario() -> None:
        await serve_http(APP, "192.0.2.1", 8080, asyncio.Event())

    with pytest.raises(ReconcilerError, match=r"cannot serve HTTP on 192\.0\.2\.1:8080"):
        asyncio.run(scenario())
