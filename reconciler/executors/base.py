"""The one executor interface: ``execute(context) -> RunResult``, cancellable.

The runtime owns timeouts: it cancels ``execute`` when the job's timeout expires, and an
executor must clean up on ``asyncio.CancelledError`` (kill its process group, close its
connection) before re-raising. Failures are results, not exceptions: an executor returns
``status="error"`` with the error text and, when it knows it, the error class.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from reconciler.model.enums import ErrorClass
from reconciler.model.job import ScheduledJob
from reconciler.model.state import RunRecord, Trigger


@dataclass(frozen=True)
class RunContext:
    job: ScheduledJob
    run_id: str
    occurrence_key: str
    scheduled_at: float | None
    started_at: float
    attempt: int
    trigger: Trigger
    timeout: float | None  # seconds; None = no limit
    # The job's memory, loaded only by executors that use it (most runs never pay for it).
    memory: Callable[[int], tuple[RunRecord, ...]] | None = None

    def recent_runs(self, count: int) -> tuple[RunRecord, ...]:
        """The job's last ``count`` finished runs before this one, newest first."""
        return () if self.memory is None or count <= 0 else self.memory(count)

    def last_run(self) -> RunRecord | None:
        runs = self.recent_runs(1)
        return runs[0] if runs else None


@dataclass(frozen=True)
class RunResult:
    status: Literal["ok", "error"]
    summary: str | None = None
    output: str | None = None
    data: Any = None
    error: str | None = None
    error_class: ErrorClass | None = None
    delivered: bool = False  # the job already sent its result itself
    # Seconds the far side asked us to wait (HTTP Retry-After), for the retry policy.
    retry_after: float | None = None


class Executor(Protocol):
    async def execute(self, context: RunContext) -> RunResult: ...


@dataclass
class ExecutorRegistry:
    """Maps ``run.<kind>`` to the executor that runs it."""

    executors: dict[str, Executor] = field(default_factory=dict)

    def register(self, kind: str, executor: Executor) -> None:
        self.executors[kind] = executor

    def for_job(self, job: ScheduledJob) -> Executor | None:
        return self.executors.get(job.spec.run.kind)


class RegistryExecutor:
    """Dispatches each run to the executor registered for its kind."""

    def __init__(self, registry: ExecutorRegistry | Mapping[str, Executor]) -> None:
        self._registry = registry if isinstance(registry, ExecutorRegistry) else \
            ExecutorRegistry(dict(registry))

    async def execute(self, context: RunContext) -> RunResult:
        executor = self._registry.for_job(context.job)
        if executor is None:
            kind = context.job.spec.run.kind
            return RunResult("error", error=f"no executor for run.{kind} in this daemon",
                             error_class=ErrorClass.PERMANENT)
        return await executor.execute(context)
