"""The daemon's executors: one per ``run.<kind>``, sharing one secret resolver.

``kubernetes`` is not registered here: it needs a cluster client, and a run of that kind
without one fails with a clear "no executor" error from the registry.
"""

from __future__ import annotations

from reconciler.executors.agent import AgentExecutor
from reconciler.executors.base import ExecutorRegistry
from reconciler.executors.command import CommandExecutor
from reconciler.executors.http import HttpExecutor
from reconciler.executors.message import MessageExecutor
from reconciler.executors.secrets import SecretResolver


def default_registry(secrets: SecretResolver | None = None) -> ExecutorRegistry:
    resolver = secrets or SecretResolver()
    registry = ExecutorRegistry()
    command = CommandExecutor(resolver)
    registry.register("command", command)
    registry.register("shell", command)
    registry.register("http", HttpExecutor(resolver))
    registry.register("message", MessageExecutor())
    registry.register("agent", AgentExecutor(resolver))
    return registry
