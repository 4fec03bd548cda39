"""References to secrets, so credentials never have to live in git.

A secret-bearing field takes either a literal string (accepted, but ``validate`` warns) or
exactly one of ``fromEnv``, ``fromFile`` or ``secretKeyRef``.
"""

from __future__ import annotations

from typing import Self

from pydantic import Field, model_validator

from reconciler.model.base import SpecModel


class SecretKeySelector(SpecModel):
    """A key of a Kubernetes Secret in the job's namespace."""

    name: str = Field(min_length=1, description="Name of the Secret.")
    key: str = Field(min_length=1, description="Key inside the Secret's data.")


class SecretRef(SpecModel):
    """Where a secret value comes from: exactly one of fromEnv, fromFile or secretKeyRef."""

    from_env: str | None = Field(
        default=None, min_length=1, description="Name of an environment variable of the daemon."
    )
    from_file: str | None = Field(
        default=None, min_length=1, description="Path of a file whose content (trimmed) is used."
    )
    secret_key_ref: SecretKeySelector | None = Field(
        default=None, description="A key of a Kubernetes Secret (cluster source only)."
    )

    @model_validator(mode="after")
    def _exactly_one_source(self) -> Self:
        sources = [s for s in (self.from_env, self.from_file, self.secret_key_ref) if s is not None]
        if len(sources) != 1:
            raise ValueError(
                "a secret reference needs exactly one of fromEnv, fromFile or secretKeyRef, "
                "e.g. {fromEnv: HOOK_SECRET}"
            )
        return self

    def describe(self) -> str:
        if self.from_env is not None:
            return f"env:{self.from_env}"
        if self.from_file is not None:
            return f"file:{self.from_file}"
        assert self.secret_key_ref is not None
        return f"secret:{self.secret_key_ref.name}/{self.secret_key_ref.key}"


SecretValue = str | SecretRef
"""A literal (validate warns when it looks like a credential) or a reference."""
