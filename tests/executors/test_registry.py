"""default_registry maps every local executor kind to its executor."""

from __future__ import annotations

import asyncio

from reconciler.executors.agent import AgentExecutor
from reconciler.executors.base import RegistryExecutor
from reconciler.executors.command import CommandExecutor
from reconciler.executors.http import HttpExecutor
from reconciler.executors.message import MessageExecutor
from reconciler.executors.registry import default_registry
from reconciler.executors.secrets import SecretResolver
from reconciler.model.enums import ErrorClass
from tests.executors.httpserver import make_context, make_job


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
