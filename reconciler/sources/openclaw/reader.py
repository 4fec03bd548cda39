"""Read an OpenClaw cron store: ``jobs.json`` (JSON5 allowed), plus ``jobs-state.json`` if split.

OpenClaw writes ``{"version": 1, "jobs": [...]}`` with each job's runtime state inline under
``state``; hand edits in JSON5 (comments, unquoted keys, single quotes, trailing commas) load
too. Later versions split the runtime state into ``jobs-state.json`` beside the definitions,
keyed by job id. Both forms are read into one list of raw job objects with ``state`` merged in;
nothing is normalised here (see ``normalize``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import json5

from reconciler.errors import SpecLoadError

STORE_FILE = "jobs.json"
STATE_FILE = "jobs-state.json"


class OpenClawStoreError(SpecLoadError):
    """The OpenClaw store cannot be read: missing, unreadable, not JSON5, or not a store."""


@dataclass
class RawStore:
    """The store as read: raw job objects (``state`` merged in) and where they came from."""

    path: Path
    jobs: list[dict[str, Any]]
    state_path: Path | None = None
    warnings: list[str] = field(default_factory=list)


def read_store(path: Path) -> RawStore:
    """Read ``path`` (``jobs.json`` or the directory holding it) and its split state file."""
    store_path = path / STORE_FILE if path.is_dir() else path
    data = _load_json5(store_path)
    jobs = _jobs_of(data, store_path)
    store = RawStore(store_path, jobs)
    state_path = store_path.with_name(STATE_FILE)
    if state_path.is_file():
        store.state_path = state_path
        _merge_split_state(store, _states_of(_load_json5(state_path), state_path))
    return store


def _load_json5(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise OpenClawStoreError(
            f"{path}: no such file (give the path of OpenClaw's jobs.json, normally "
            f"~/.openclaw/cron/jobs.json)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise OpenClawStoreError(f"{path}: cannot read the file: {exc}") from exc
    try:
        return _join_surrogates(json5.loads(text))
    except ValueError as exc:
        # json5 says "<string>:LINE Unexpected ... at column N": keep it, name the file
        detail = str(exc).removeprefix("<string>:")
        raise OpenClawStoreError(f"{path}:{detail}: not valid JSON5") from exc


def _join_surrogates(value: Any) -> Any:
    """json5 decodes an escaped astral character ("\\ud83d\\ude00", as JavaScript writes
    them) into two lone surrogates: join the pairs, and replace a lone one, so every string
    can be written as UTF-8."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        return value
    if isinstance(value, list):
        return [_join_surrogates(item) for item in value]
    if isinstance(value, dict):
        return {_join_surrogates(k): _join_surrogates(v) for k, v in value.items()}
    return value


def _jobs_of(data: Any, path: Path) -> list[dict[str, Any]]:
    # The file's "version" is ignored, as OpenClaw itself forces it to 1 on load.
    jobs = data.get("jobs") if isinstance(data, dict) else data
    if not isinstance(jobs, list):
        raise OpenClawStoreError(
            f"{path}: not an OpenClaw cron store: expected {{\"version\": 1, \"jobs\": [...]}}")
    result: list[dict[str, Any]] = []
    for index, job in enumerate(jobs):
        if not isinstance(job, dict):
            raise OpenClawStoreError(
                f"{path}: jobs[{index}] is a {type(job).__name__}, not a job object")
        result.append(dict(job))
    return result


def _states_of(data: Any, path: Path) -> dict[str, Any]:
    """Job id -> state, from ``{"jobs": {id: state}}``, ``{"jobs": [{"id", "state"}]}`` or
    ``{id: state}``: the split file's shape changed between OpenClaw releases."""
    states = data.get("jobs", data.get("states", data)) if isinstance(data, dict) else data
    if isinstance(states, list):
        pairs = [(s.get("id") or s.get("jobId"), s.get("state", s))
                 for s in states if isinstance(s, dict)]
        return {str(k): v for k, v in pairs if k is not None}
    if isinstance(states, dict):
        return {str(k): v for k, v in states.items() if k != "version"}
    raise OpenClawStoreError(f"{path}: expected job states keyed by job id")


def _merge_split_state(store: RawStore, states: dict[str, Any]) -> None:
    for job in store.jobs:
        job_id = job.get("id", job.get("jobId"))
        key = str(job_id).strip() if job_id is not None else None
        if key is None or key not in states:
            continue
        state = states.pop(key)
        if isinstance(state, dict) and isinstance(job.get("state"), dict) and job["state"]:
            # the split file is the newer writer's: it wins over a stale inline copy
            store.warnings.append(f"job {key}: state in both files; {STATE_FILE} used")
        job["state"] = state
    for orphan in sorted(states):
        store.warnings.append(f"{STATE_FILE}: state of unknown job {orphan!r} ignored")
