"""A scripted executor for ``simulate`` and tests: each job consumes a list of outcomes.

An outcome is ``{status: ok|error, error: "429 too many requests", duration: 20m, hang: true,
summary: "..."}``; when a job's list is used up, runs succeed at once. Durations pass on the
event loop's clock, so on the virtual-time loop they cost nothing.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Literal

from reconciler.core.errorclass import classify_text
from reconciler.errors import SpecError
from reconciler.executors.base import RunContext, RunResult
from reconciler.model.duration import parse_duration


@dataclass(frozen=True)
class ScriptedOutcome:
    status: Literal["ok", "error"] = "ok"
    error: str | None = None
    duration: timedelta = timedelta(0)
    hang: bool = False
    summary: str | None = None

    @classmethod
    def parse(cls, raw: Mapping[str, Any], where: str) -> ScriptedOutcome:
        unknown = set(raw) - {"status", "error", "duration", "hang", "summary"}
        if unknown:
            raise SpecError(f"{where}: unknown outcome field(s) {sorted(unknown)}; "
                            "use status, error, duration, hang, summary")
        status = raw.get("status", "ok")
        if status not in ("ok", "error"):
            raise SpecError(f"{where}: status must be ok or error, not {status!r}")
        try:
            duration = parse_duration(str(raw.get("duration", "0")))
        except ValueError as exc:
            raise SpecError(f"{where}: {exc}") from exc
        error = raw.get("error")
        if status == "error" and not error:
            error = "scripted failure"
        return cls(status, None if error is None else str(error), duration,
                   bool(raw.get("hang", False)), raw.get("summary"))


def parse_outcomes(raw: Any) -> dict[str, list[ScriptedOutcome]]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise SpecError("outcomes must map a job name to a list of outcomes")
    parsed: dict[str, list[ScriptedOutcome]] = {}
    for job, items in raw.items():
        if not isinstance(items, Sequence) or isinstance(items, str):
            raise SpecError(f"outcomes of {job!r} must be a list")
        parsed[str(job)] = [
            ScriptedOutcome.parse(item if isinstance(item, Mapping) else {"status": item},
                                  f"outcomes of {job!r}, item {index + 1}")
            for index, item in enumerate(items)
        ]
    return parsed


class ScriptedExecutor:
    def __init__(self, outcomes: Mapping[str, Sequence[ScriptedOutcome]]) -> None:
        self._queues = {job: deque(items) for job, items in outcomes.items()}
        self.calls: list[RunContext] = []

    async def execute(self, context: RunContext) -> RunResult:
        self.calls.append(context)
        queue = self._queues.get(context.job.name)
        outcome = queue.popleft() if queue else ScriptedOutcome()
        if outcome.hang:
            await asyncio.Event().wait()  # until the timeout cancels it
        if outcome.duration:
            await asyncio.sleep(outcome.duration.total_seconds())
        if outcome.status == "ok":
            return RunResult("ok", summary=outcome.summary)
        return RunResult("error", error=outcome.error, error_class=classify_text(outcome.error),
                         summary=outcome.summary)
