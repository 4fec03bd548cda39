"""``reconciler run``: the long-running reconciler.

Start: take the state directory's writer lock (a second daemon fails at once), migrate the
state, load the specs, clear runs a previous process left marked running, catch up. Then:
reconcile on every spec change (file events, debounced, plus a periodic resync so a missed
event is never permanent; or a git clone fast-forwarded on an interval), schedule, execute,
answer triggers on the control socket. SIGTERM/SIGINT: stop starting runs, give running ones
the shutdown grace, record the rest ``interrupted``, exit 0.
"""

from __future__ import annotations

import asyncio
import faulthandler
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from reconciler import collector
from reconciler.clock import Clock, SystemClock
from reconciler.delivery.outbox import OutboxWorker
from reconciler.delivery.sender import Sender
from reconciler.errors import ReconcilerError, SpecLoadError
from reconciler.executors.base import Executor
from reconciler.executors.secrets import SecretResolver
from reconciler.model.delivery import FailureAlert
from reconciler.runtime.control import ControlServer
from reconciler.runtime.events import EventSink, FanoutSink
from reconciler.runtime.http import build_app, parse_listen, serve_http
from reconciler.runtime.logsink import LogSink
from reconciler.runtime.metrics import MetricsSink
from reconciler.runtime.service import Service, ServiceConfig
from reconciler.runtime.settings import Settings, read_token
from reconciler.runtime.sourcestatus import write_source_status
from reconciler.runtime.wiring import build_executor
from reconciler.sources.directory import DirectorySource, SourceSnapshot
from reconciler.sources.gitinfo import clone_or_update
from reconciler.sources.speccache import CACHE_FILE
from reconciler.sources.watch import SpecWatcher
from reconciler.store import StateWriter


class Daemon:
    def __init__(self, settings: Settings, clock: Clock | None = None,
                 executor: Executor | None = None, extra_sinks: list[EventSink] | None = None
                 ) -> None:
        self.settings = settings
        self.clock = clock or SystemClock()
        self.log = LogSink(settings.log_format)
        self.metrics = MetricsSink(clock=self.clock)
        self.sink = FanoutSink([self.log, self.metrics, *(extra_sinks or [])])
        self.executor = executor
        # The parse cache is read at the first load, after ``serve`` has created the state
        # directory; read-only commands never construct a source with it.
        self.source = DirectorySource(settings.specs,
                                      cache_path=Path(settings.state) / CACHE_FILE)
        self.stop = asyncio.Event()
        self.changed = asyncio.Event()
        self.service: Service | None = None

    async def serve(self) -> int:
        settings = self.settings
        if settings.http:
            parse_listen(settings.http)  # a bad address is a usage error before anything starts
            read_token(settings)
        self._sync_git()
        writer = StateWriter.open(settings.state, now=self.clock.now())
        try:
            snapshot = self._load(at_start=True)
            config = ServiceConfig(
                max_concurrent_runs=settings.max_concurrent_runs,
                stuck_after=settings.stuck_after.total_seconds(),
                arm_ahead=settings.arm_ahead.total_seconds(),
                failure_alert=FailureAlert(channel=settings.alert_channel))
            executor = self.executor or build_executor()
            self.service = Service(writer, self.clock, executor, config, self.sink)
            await self.service.start(snapshot.desired, snapshot.channels)
            collector.tune()
            collector.settle()
            self._record_source(snapshot)
            await self._run(self.service, writer)
        finally:
            writer.close()
        return 0

    async def _run(self, service: Service, writer: StateWriter) -> None:
        loop = asyncio.get_running_loop()
        previous = self._install_signal_handlers(loop)
        control = await ControlServer.start(self.settings.state, service)
        watcher = self._watch(loop)
        sender = Sender(SecretResolver())
        tasks = [asyncio.ensure_future(coro) for coro in (
            service.run_forever(self.stop), self._reconcile_loop(service), self._stop_after(),
            self._deliver(service, writer, sender))]
        if self.settings.http:
            tasks.append(asyncio.ensure_future(self._serve_http(service, tasks[0])))
        self.log.info(self.clock.now(), "started", specs=self.settings.specs,
                      state=self.settings.state, jobs=len(service.desired))
        try:
            await self.stop.wait()
        finally:
            self.log.info(self.clock.now(), "stopping",
                          grace=f"{self.settings.shutdown_grace.total_seconds():g}s")
            for task in tasks[1:]:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            if watcher is not None:
                watcher.stop()
            await control.close()
            await service.shutdown(self.settings.shutdown_grace.total_seconds())
            await sender.aclose()
            for signum, handler in previous.items():
                signal.signal(signum, handler)
            self.log.info(self.clock.now(), "stopped")

    def _install_signal_handlers(self, loop: asyncio.AbstractEventLoop) -> dict[int, Any]:
        """SIGTERM/SIGINT stop the daemon. A plain Python handler rather than
        ``loop.add_signal_handler``: under a flood of finishing subprocesses the loop's
        wake-up pipe can be full, and a signal delivered only through it would be lost."""

        def handler(signum: int, frame: object) -> None:
            loop.call_soon_threadsafe(self.stop.set)

        return {signum: signal.signal(signum, handler)
                for signum in (signal.SIGTERM, signal.SIGINT)}

    async def _deliver(self, service: Service, writer: StateWriter, sender: Sender) -> None:
        """The durable outbox: results and alerts, sent and retried until delivered or too
        old (then recorded not-delivered); woken early when a run enqueues."""
        worker = OutboxWorker(writer, sender,
                              on_attempt=lambda attempt: self.sink.delivery(attempt.record()))

        async def sleep(seconds: float) -> None:
            await _first_of(service.outbox_wake, self.stop, timeout=seconds)
            service.outbox_wake.clear()

        await worker.run_forever(self.clock.now, sleep, self.stop)

    async def _serve_http(self, service: Service, timer: asyncio.Future[None]) -> None:
        assert self.settings.http is not None
        host, port = parse_listen(self.settings.http)
        app = build_app(service, token=read_token(self.settings), now=self.clock.now,
                        metrics=self.metrics, alive=lambda: not timer.done())

        def listening(bound_host: str, bound_port: int) -> None:
            self.log.info(self.clock.now(), "http", url=f"http://{bound_host}:{bound_port}")

        try:
            await serve_http(app, host, port, self.stop, on_listening=listening)
        except ReconcilerError as exc:
            self.log.info(self.clock.now(), "http-error", error=str(exc))
            self.stop.set()

    def _watch(self, loop: asyncio.AbstractEventLoop) -> SpecWatcher | None:
        if self.settings.git_url:
            return None  # the clone changes only when we fetch
        def changed() -> None:  # called on watchdog's thread
            loop.call_soon_threadsafe(self.changed.set)

        watcher = SpecWatcher(self.settings.specs, changed)
        watcher.start()
        return watcher

    async def _stop_after(self) -> None:
        if self.settings.run_for is not None:
            await asyncio.sleep(self.settings.run_for.total_seconds())
            self.stop.set()

    async def _reconcile_loop(self, service: Service) -> None:
        """Reload on (debounced) file events, on the resync interval, or on git updates."""
        interval = (self.settings.git_interval if self.settings.git_url
                    else self.settings.resync_interval).total_seconds()
        while not self.stop.is_set():
            # Not wait_for: on Python 3.11 a cancellation racing its timeout is swallowed
            # (gh-86296), and this loop would outlive the shutdown that cancelled it.
            await _first_of(self.changed, self.stop, timeout=interval)
            if self.stop.is_set():
                return
            await self._debounce()
            self.changed.clear()
            await self._reconcile(service)

    async def _debounce(self) -> None:
        """A burst of events (a pull rewriting fifty files) becomes one reconcile."""
        quiet = self.settings.debounce.total_seconds()
        deadline = self.clock.now() + 10 * max(quiet, 0.1)
        while self.changed.is_set() and self.clock.now() < deadline:
            self.changed.clear()
            await asyncio.sleep(quiet)

    async def _reconcile(self, service: Service) -> None:
        try:
            self._sync_git()
            snapshot = self._load()
        except SpecLoadError as exc:
            self.log.info(self.clock.now(), "source-error", error=str(exc))
            return
        await service.apply(snapshot.desired, snapshot.channels)
        collector.settle()
        self._record_source(snapshot)

    def _sync_git(self) -> None:
        if self.settings.git_url:
            clone_or_update(self.settings.git_url, self.settings.git_ref, self.settings.specs)

    def _load(self, at_start: bool = False) -> SourceSnapshot:
        now = self.clock.now()
        snapshot = self.source.load_at_start(now) if at_start else self.source.load(now)
        for diagnostic in snapshot.errors:
            self.log.info(self.clock.now(), "spec-error", error=diagnostic.render())
        return snapshot

    def _record_source(self, snapshot: SourceSnapshot) -> None:
        write_source_status(Path(self.settings.state), snapshot, self.clock.now())


async def _first_of(*events: asyncio.Event, timeout: float) -> None:
    """Wait until one of ``events`` is set or ``timeout`` seconds pass."""
    waiters = [asyncio.ensure_future(event.wait()) for event in events]
    try:
        await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            waiter.cancel()


def _efficient_child_watcher() -> None:
    """Python 3.11 watches each subprocess with a thread of its own; with a pidfd per child
    instead, hundreds of jobs a second cost no threads (3.12+ does this by itself)."""
    if sys.version_info >= (3, 12) or not hasattr(os, "pidfd_open"):
        return
    try:
        os.close(os.pidfd_open(os.getpid()))
    except OSError:
        return  # the kernel lacks pidfd: keep the default watcher
    watcher = asyncio.PidfdChildWatcher()
    watcher.attach_loop(asyncio.get_running_loop())
    asyncio.set_child_watcher(watcher)


def _dump_stacks_on(signum: int) -> None:
    """``kill -USR1 <pid>`` prints every thread's and every asyncio task's stack to stderr:
    the first thing to ask of a daemon that seems stuck."""
    loop = asyncio.get_running_loop()

    def dump(received: int, frame: object) -> None:
        faulthandler.dump_traceback(all_threads=True)
        for task in asyncio.all_tasks(loop):
            print(f"--- task {task.get_name()}: {task.get_coro()!r}", file=sys.stderr)
            task.print_stack(limit=8, file=sys.stderr)
        sys.stderr.flush()

    signal.signal(signum, dump)


def run_daemon(settings: Settings, on_ready: Callable[[Daemon], None] | None = None) -> int:
    daemon = Daemon(settings)
    if on_ready is not None:
        on_ready(daemon)

    async def main() -> int:
        _efficient_child_watcher()
        _dump_stacks_on(signal.SIGUSR1)
        return await daemon.serve()

    return asyncio.run(main())
