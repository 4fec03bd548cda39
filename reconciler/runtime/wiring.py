"""The executors a daemon runs jobs with: every kind the registry knows."""

from __future__ import annotations

from reconciler.executors.base import Executor, RegistryExecutor
from reconciler.executors.registry import default_registry
from reconciler.executors.secrets import SecretResolver


def build_executor(secrets: SecretResolver | None = None) -> Executor:
    return RegistryExecutor(default_registry(secrets))
