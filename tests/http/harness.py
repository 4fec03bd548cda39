"""A real service, state and HTTP server on 127.0.0.1, driven by real HTTP requests."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families

from reconciler.clock import SystemClock
from reconciler.core.jobview import DesiredJob
from reconciler.executors.scripted import ScriptedExecutor
from reconciler.runtime.http import build_app, serve_http
from reconciler.runtime.metrics import MetricsSink
from reconciler.runtime.service import Service
from reconciler.store import StateWriter
from tests.engine.helpers import job

TOKEN = "s3cret-token"


def never(name: str, **spec: object) -> DesiredJob:
    """A job whose own schedule never fires during a test: it runs only when triggered."""
    return job(name, {"at": "2099-01-01T00:00:00Z"}, **spec)


@dataclass
class Harness:
    client: httpx.AsyncClient
    service: Service
    metrics: MetricsSink
    writer: StateWriter
    desired: dict[str, DesiredJob]
    stop: asyncio.Event
    loop_task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """The first reconcile, then the timer loop, as the daemon does."""
        await self.service.start(self.desired)
        self.loop_task = asyncio.ensure_future(self.service.run_forever(self.stop))

    async def wait_for(self, check: Callable[[], bool], timeout: float = 10.0) -> None:
        async with asyncio.timeout(timeout):
            while not check():
                await asyncio.sleep(0.02)

    async def finished_runs(self, name: str, count: int = 1) -> list[dict[str, object]]:
        """Poll the history endpoint until ``count`` runs of ``name`` have finished."""
        async with asyncio.timeout(10):
            while True:
                body = (await self.client.get(f"/api/v1/jobs/{name}/runs")).json()
                done = [run for run in body["runs"] if run["status"] != "running"]
                if len(done) >= count:
                    return done
                await asyncio.sleep(0.02)

    async def scrape(self) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
        """``/metrics`` parsed: (sample name, sorted labels) -> value."""
        response = await self.client.get("/metrics")
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/plain")
        samples = {}
        for family in text_string_to_metric_families(response.text):
            for sample in family.samples:
                samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
        return samples


@contextlib.asynccontextmanager
async def running_api(
    tmp_path: Path, desired: dict[str, DesiredJob], *, token: str | None = TOKEN,
    executor: ScriptedExecutor | None = None, started: bool = True,
    alive: Callable[[], bool] | None = None,
) -> AsyncIterator[Harness]:
    clock = SystemClock()
    with StateWriter.open(tmp_path / "state", now=clock.now(), durable=False) as writer:
        metrics = MetricsSink()
        service = Service(writer, clock, executor or ScriptedExecutor({}), sink=metrics)
        stop = asyncio.Event()
        app = build_app(service, token=token, now=clock.now, metrics=metrics, alive=alive)
        ports: list[int] = []
        server = asyncio.ensure_future(serve_http(
            app, "127.0.0.1", 0, stop, on_listening=lambda _host, port: ports.append(port)))
        while not ports and not server.done():
            await asyncio.sleep(0)
        if not ports:
            await server  # raises why it could not listen
        base = f"http://127.0.0.1:{ports[0]}"
        async with httpx.AsyncClient(base_url=base, timeout=5, trust_env=False) as client:
            harness = Harness(client, service, metrics, writer, desired, stop)
            try:
                if started:
                    await harness.start()
                yield harness
            finally:
                stop.set()
                await server
                if harness.loop_task is not None:
                    await harness.loop_task
                await service.shutdown(grace=0)
