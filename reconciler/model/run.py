"""The ``spec.run`` block: exactly one executor, plus settings shared by all of them."""

from __future__ import annotations

from typing import Any, Self

from pydantic import Field, field_validator, model_validator

from reconciler.model.base import SpecModel
from reconciler.model.duration import Duration
from reconciler.model.enums import ErrorClass
from reconciler.model.secrets import SecretValue

EXECUTOR_KINDS = ("command", "shell", "http", "message", "agent", "kubernetes")


class HttpRun(SpecModel):
    """Call an HTTP endpoint."""

    url: str = Field(min_length=1, description="The URL (a template).")
    method: str = Field(default="GET", description="HTTP method, e.g. GET or POST.")
    headers: dict[str, SecretValue] = Field(
        default_factory=dict, description="Request headers; values may be secret references."
    )
    query: dict[str, str] = Field(default_factory=dict, description="Query parameters.")
    body: str | None = Field(default=None, description="Request body (a template).")
    success_status: list[int] = Field(
        default_factory=list,
        description="Statuses that count as success; default any 2xx.",
    )
    connect_timeout: Duration | None = Field(
        default=None, description="Connect timeout; default 10s, never above the job timeout."
    )

    @field_validator("method")
    @classmethod
    def _known_method(cls, value: str) -> str:
        method = value.upper()
        if method not in {"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"}:
            raise ValueError(f"unknown HTTP method {value!r}: use GET, POST, PUT, PATCH or DELETE")
        return method

    @field_validator("success_status")
    @classmethod
    def _statuses_in_range(cls, value: list[int]) -> list[int]:
        for status in value:
            if not 100 <= status <= 599:
                raise ValueError(f"{status} is not an HTTP status: use 100-599")
        return value


class MessageRun(SpecModel):
    """Render a text (a reminder) as the run's output, to be delivered."""

    text: str = Field(min_length=1, description="The message (a template).")


class AgentRun(SpecModel):
    """One chat completion against an OpenAI-compatible endpoint."""

    endpoint: str = Field(min_length=1, description="Base URL, e.g. http://localhost:11434/v1.")
    model: str = Field(min_length=1, description="Model name.")
    prompt: str = Field(min_length=1, description="The user prompt (a template).")
    system: str | None = Field(
        default=None, description="Extra system instructions (a template), after the time context."
    )
    api_key: SecretValue | None = Field(default=None, description="API key (use a reference).")
    temperature: float | None = Field(default=None, ge=0, le=2, description="Sampling temperature.")
    max_tokens: int | None = Field(default=None, gt=0, description="Completion token limit.")
    fallback_models: list[str] = Field(
        default_factory=list, description="Models tried in order when the model errors."
    )
    memory: int = Field(
        default=3, ge=0, le=50, description="How many recent run summaries the agent sees."
    )


class KubernetesRun(SpecModel):
    """Run as a Kubernetes Job from a pod template."""

    template: dict[str, Any] = Field(description="A PodTemplateSpec (metadata and spec).")
    namespace: str | None = Field(default=None, description="Namespace; default the job's.")
    ttl_seconds_after_finished: int | None = Field(
        default=3600, ge=0, description="How long finished Jobs are kept."
    )

    @field_validator("template")
    @classmethod
    def _has_pod_spec(cls, value: dict[str, Any]) -> dict[str, Any]:
        spec = value.get("spec")
        if not isinstance(spec, dict) or not spec.get("containers"):
            raise ValueError("template needs spec.containers (a PodTemplateSpec)")
        return value


class Run(SpecModel):
    """What a run executes: exactly one of command, shell, http, message, agent, kubernetes."""

    command: list[str] | None = Field(
        default=None, min_length=1,
        description="argv of a local process; each argument is a template. No shell.",
    )
    shell: str | None = Field(
        default=None, min_length=1, description="A /bin/sh script, only when asked for."
    )
    http: HttpRun | None = Field(default=None, description="Call an HTTP endpoint.")
    message: MessageRun | None = Field(default=None, description="Render and deliver a text.")
    agent: AgentRun | None = Field(default=None, description="Ask an OpenAI-compatible model.")
    kubernetes: KubernetesRun | None = Field(default=None, description="Run a Kubernetes Job.")
    env: dict[str, SecretValue] = Field(
        default_factory=dict, description="Environment of command/shell runs."
    )
    working_dir: str | None = Field(default=None, description="Working directory of the process.")
    exit_codes: dict[int, ErrorClass] = Field(
        default_factory=dict,
        description="Map process exit codes to error classes, e.g. {75: rate_limit}.",
    )

    @model_validator(mode="after")
    def _exactly_one_executor(self) -> Self:
        kinds = [kind for kind in EXECUTOR_KINDS if getattr(self, kind) is not None]
        if len(kinds) != 1:
            found = " and ".join(kinds) if kinds else "none"
            raise ValueError(
                f"run needs exactly one of {', '.join(EXECUTOR_KINDS)} (found {found}); "
                "e.g. run: {command: [echo, hello]}"
            )
        return self

    @property
    def kind(self) -> str:
        return next(kind for kind in EXECUTOR_KINDS if getattr(self, kind) is not None)
