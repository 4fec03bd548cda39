"""default_registry maps every local executor kind to its executor."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from reconciler.executors.agent import AgentExecutor
from reconciler.executors.base import RegistryExecutor, RunResult
from reconciler.executors.command import CommandExecutor
from reconciler.executors.http import HttpExecutor
from reconciler.executors.message import MessageExecutor
from reconciler.executors.registry import default_registry
from reconciler.executors.secrets import SecretResolver
from reconciler.model.enums import ErrorClass
from reconciler.model.job import ScheduledJob
from reconciler.sources.loader import load_paths
from tests.executors.httpserver import Reply, make_context, make_job, serving


def test_every_local_kind_is_registered() -> None:
    registry = default_registry(SecretResolver(environ={}))
    kinds = {kind: type(executor) for kind, executor in registry.executors.items()}
    assert kinds == {"command": CommandExecutor, "shell": CommandExecutor,
                     "http": HttpExecutor, "message": MessageExecutor,
                     "agent": AgentExecutor}


def test_dispatch_runs_a_message_job() -> None:
    executor = RegistryExecutor(default_registry())
    job = make_job({"message": {"text": "hello {{ job.name }}"}}, name="greeter")
    result = asyncio.run(executor.execute(make_context(job)))
    assert result.status == "ok" and result.output == "hello greeter"


def test_kubernetes_needs_its_own_executor() -> None:
    job = make_job({"kubernetes": {"template": {"spec": {"containers": [{"name": "c"}]}}}})
    result = asyncio.run(RegistryExecutor(default_registry()).execute(make_context(job)))
    assert result.status == "error" and result.error_class is ErrorClass.PERMANENT


EXAMPLES = Path(__file__).resolve().parents[2] / "specs" / "examples"


def example(kind: str) -> ScheduledJob:
    """The example job of ``kind`` (the whole tree is loaded: its channels are elsewhere)."""
    loaded = load_paths([str(EXAMPLES)])
    return next(document.resource for document in loaded.documents
                if isinstance(document.resource, ScheduledJob)
                and document.file.endswith(f"executors/{kind}.yaml"))


def with_run(job: ScheduledJob, kind: str, **changes: Any) -> ScheduledJob:
    run = job.spec.run
    block = getattr(run, kind).model_copy(update=changes)
    spec = job.spec.model_copy(update={"run": run.model_copy(update={kind: block})})
    return job.model_copy(update={"spec": spec})


def run_example(job: ScheduledJob, environ: dict[str, str] | None = None) -> RunResult:
    executor = RegistryExecutor(default_registry(SecretResolver(environ=environ or {})))
    return asyncio.run(executor.execute(make_context(job)))


def test_the_message_example_runs() -> None:
    result = run_example(example("message"))
    assert result.status == "ok"
    assert result.summary is not None and result.summary.startswith("Deploy freeze starts now")


def test_the_http_example_runs_against_a_local_server() -> None:
    with serving(lambda request: Reply(204)) as server:
        job = with_run(example("http"), "http", url=server.url + "/")
        result = run_example(job, {"HEALTH_CHECK_TOKEN": "Bearer t"})
    assert result.status == "ok", result
    [request] = server.requests
    assert request.headers["authorization"] == "Bearer t"
    assert request.query == {"probe": ["local-health-check"]}


def test_the_agent_example_runs_against_a_local_server() -> None:
    reply = {"choices": [{"message": {"role": "assistant", "content": "1. a 2. b 3. c"}}]}
    with serving(lambda request: Reply(200, reply)) as server:
        result = run_example(with_run(example("agent"), "agent", endpoint=server.url + "/v1"))
    assert result.status == "ok" and result.summary == "1. a 2. b 3. c"
    assert server.requests[0].json()["model"] == "qwen3"
