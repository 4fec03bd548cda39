"""Resolve secret references at run time (never at load time, never logged).

``fromEnv`` reads the daemon's environment, ``fromFile`` a file (trimmed; e.g. a mounted
Kubernetes Secret or a Docker secret), ``secretKeyRef`` a Kubernetes Secret through a resolver
the cluster source provides. A missing secret is a ``PermanentError`` naming the reference,
never its value.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path

from reconciler.errors import PermanentError
from reconciler.model.secrets import SecretKeySelector, SecretRef, SecretValue

KeyResolver = Callable[[SecretKeySelector], str]


class SecretResolver:
    def __init__(self, environ: Mapping[str, str] | None = None,
                 secret_keys: KeyResolver | None = None) -> None:
        self._environ = os.environ if environ is None else environ
        self._secret_keys = secret_keys

    def resolve(self, value: SecretValue) -> str:
        if isinstance(value, str):
            return value
        return self._reference(value)

    def resolve_map(self, values: Mapping[str, SecretValue]) -> dict[str, str]:
        return {key: self.resolve(value) for key, value in values.items()}

    def _reference(self, ref: SecretRef) -> str:
        if ref.from_env is not None:
            if ref.from_env not in self._environ:
                raise PermanentError(f"secret {ref.describe()} is not set: export "
                                     f"{ref.from_env} in the reconciler's environment")
            return self._environ[ref.from_env]
        if ref.from_file is not None:
            try:
                return Path(ref.from_file).read_text(encoding="utf-8").strip()
            except OSError as exc:
                raise PermanentError(
                    f"secret {ref.describe()} cannot be read: {exc.strerror}") from exc
        assert ref.secret_key_ref is not None
        if self._secret_keys is None:
            raise PermanentError(f"secret {ref.describe()}: secretKeyRef resolves only when "
                                 "reconciler runs against a Kubernetes cluster")
        return self._secret_keys(ref.secret_key_ref)
