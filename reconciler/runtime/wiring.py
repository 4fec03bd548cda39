"""The executors a daemon runs jobs with, built from the registry of every kind."""

from __future__ import annotations

from reconciler.executors.base import Executor, ExecutorRegistry, RegistryExecutor
from reconciler.executors.command import CommandExecutor
from reconciler.executors.secrets import SecretResolver


def build_registry(secrets: SecretResolver | None = None) -> ExecutorRegistry:
    secrets = secrets or SecretResolver()
    registry = ExecutorRegistry()
    command = CommandExecutor(secrets)
    registry.register("command", command)
    registry.register("shell", command)
    return registry


def build_executor(secrets: SecretResolver | None = None) -> Executor:
    return RegistryExecutor(build_registry(secrets))
