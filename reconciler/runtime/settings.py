"""Daemon settings from flags, environment variables and a config file, in that order.

Every setting has a flag (``--max-concurrent-runs``), an environment variable
(``RECONCILER_MAX_CONCURRENT_RUNS``) and a config-file key (``maxConcurrentRuns`` in the YAML
file named by ``--config`` or ``RECONCILER_CONFIG``). A flag beats the environment, which beats
the file, which beats the default.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from datetime import timedelta
from pathlib import Path
from typing import Any

from pydantic.alias_generators import to_camel

from reconciler.errors import UsageError
from reconciler.model.duration import parse_duration
from reconciler.sources.yamlio import load_documents


@dataclass(frozen=True)
class Settings:
    specs: str = "./specs"
    state: str = "./.reconciler"
    http: str | None = None
    http_token_file: str | None = None
    http_token: str | None = None
    log_format: str = "text"
    shutdown_grace: timedelta = timedelta(seconds=30)
    resync_interval: timedelta = timedelta(seconds=60)
    debounce: timedelta = timedelta(seconds=1)
    max_concurrent_runs: int = 4
    stuck_after: timedelta = timedelta(hours=2)
    arm_ahead: timedelta = timedelta(milliseconds=500)
    git_url: str | None = None
    git_ref: str = "main"
    git_interval: timedelta = timedelta(minutes=1)
    run_for: timedelta | None = None
    alert_channel: str | None = None


def _duration(value: Any) -> timedelta:
    return value if isinstance(value, timedelta) else parse_duration(str(value))


def _positive_int(value: Any) -> int:
    number = int(value)
    if number < 1:
        raise ValueError("must be at least 1")
    return number


MAX_ARM_AHEAD = timedelta(seconds=10)


def _arm_ahead(value: Any) -> timedelta:
    lead = _duration(value)
    if lead > MAX_ARM_AHEAD:
        raise ValueError(f"must be at most {MAX_ARM_AHEAD.total_seconds():g}s (0 turns arming "
                         f"off)")
    return lead


def _log_format(value: Any) -> str:
    if value not in ("text", "json"):
        raise ValueError("must be text or json")
    return str(value)


_PARSERS: dict[str, Callable[[Any], Any]] = {
    "shutdown_grace": _duration, "resync_interval": _duration, "debounce": _duration,
    "stuck_after": _duration, "git_interval": _duration, "run_for": _duration,
    "max_concurrent_runs": _positive_int, "log_format": _log_format, "arm_ahead": _arm_ahead,
}


def _env_name(name: str) -> str:
    return f"RECONCILER_{name.upper()}"


def _config_file(flags: Mapping[str, Any], environ: Mapping[str, str]) -> dict[str, Any]:
    path = flags.get("config") or environ.get("RECONCILER_CONFIG")
    if not path:
        return {}
    try:
        documents = load_documents(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot read config file {path}: {exc.strerror}") from exc
    except Exception as exc:  # YAML syntax
        raise UsageError(f"config file {path} is not valid YAML: {exc}") from exc
    data = documents[0] if documents else {}
    if not isinstance(data, dict):
        raise UsageError(f"config file {path} must be a mapping of settings")
    known = {to_camel(f.name): f.name for f in fields(Settings)}
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise UsageError(f"config file {path}: unknown setting(s) {unknown}; "
                         f"known: {sorted(known)}")
    return {known[key]: value for key, value in data.items()}


def resolve_settings(
    flags: Mapping[str, Any], environ: Mapping[str, str] | None = None
) -> Settings:
    """``flags`` holds only the flags given on the command line (None = not given)."""
    environ = os.environ if environ is None else environ
    from_file = _config_file(flags, environ)
    values: dict[str, Any] = {}
    for item in fields(Settings):
        name = item.name
        raw: Any = flags.get(name)
        origin = f"--{name.replace('_', '-')}"
        if raw is None and _env_name(name) in environ:
            raw, origin = environ[_env_name(name)], _env_name(name)
        if raw is None and name in from_file:
            raw, origin = from_file[name], f"config key {to_camel(name)}"
        if raw is None:
            continue
        try:
            values[name] = _PARSERS.get(name, str)(raw)
        except ValueError as exc:
            raise UsageError(f"{origin}: invalid value {raw!r}: {exc}") from exc
    return Settings(**values)


def read_token(settings: Settings) -> str | None:
    if settings.http_token_file:
        try:
            return Path(settings.http_token_file).read_text(encoding="utf-8").strip() or None
        except OSError as exc:
            raise UsageError(f"cannot read the HTTP token file: {exc.strerror}") from exc
    return settings.http_token
