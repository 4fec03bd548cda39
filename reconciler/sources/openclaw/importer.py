"""``import openclaw``: read, normalise, name, map and validate every job of an OpenClaw store.

Nothing is dropped: a job that cannot become a valid spec is kept in the result with the
reason (and its raw JSON), and every field without an exact equivalent is a note.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from reconciler.core.schedule import check_schedule
from reconciler.model.job import Channel, ScheduledJob
from reconciler.sources.openclaw.channels import ChannelRegistry
from reconciler.sources.openclaw.mapping import map_job
from reconciler.sources.openclaw.names import unique_names
from reconciler.sources.openclaw.normalize import NormalizeContext, normalize_job
from reconciler.sources.openclaw.notes import MapOptions, Note, Notes, Unmappable
from reconciler.sources.openclaw.reader import RawStore, read_store
from reconciler.sources.openclaw.state import ImportedState, import_state


@dataclass
class ImportedJob:
    openclaw_id: str
    openclaw_name: str
    name: str
    raw: dict[str, Any]
    normalised: list[str]
    notes: list[Note] = field(default_factory=list)
    document: dict[str, Any] | None = None
    error: str | None = None
    state: ImportedState | None = None


@dataclass
class ImportResult:
    store: RawStore
    jobs: list[ImportedJob]
    channels: list[tuple[str, dict[str, Any], list[str]]]
    warnings: list[str]

    @property
    def unmapped(self) -> list[ImportedJob]:
        return [job for job in self.jobs if job.document is None]


def import_store(path: Path, now: float, options: MapOptions | None = None,
                 legacy_webhook: str | None = None) -> ImportResult:
    """Everything needed to write the specs (and the state) of the store at ``path``."""
    options = options or MapOptions()
    store = read_store(path)
    context = NormalizeContext(legacy_webhook=legacy_webhook)
    normalised = [normalize_job(raw, context) for raw in store.jobs]
    ids = [_stable_id(job, raw) for (job, _), raw in zip(normalised, store.jobs, strict=True)]
    names = unique_names([(str(job.get("name", "")), i) for (job, _), i in zip(
        normalised, ids, strict=True)])
    collecting = ChannelRegistry()
    for (job, _), name in zip(normalised, names, strict=True):
        _map(job, name, collecting, options, Notes())
    registry = ChannelRegistry(collecting.keys)
    jobs = []
    for (job, applied), raw, job_id, name in zip(normalised, store.jobs, ids, names, strict=True):
        imported = ImportedJob(job_id, str(job.get("name", "")), name, raw, applied)
        _import_one(imported, job, registry, options, now)
        jobs.append(imported)
    channels = registry.documents()
    for _, document, _ in channels:
        Channel.model_validate(document)  # built from known types: a failure is our bug
    return ImportResult(store, jobs, channels, [*store.warnings, *context.warnings])


def _stable_id(job: dict[str, Any], raw: dict[str, Any]) -> str:
    job_id = job.get("id")
    if isinstance(job_id, str) and job_id.strip():
        return job_id.strip()
    if isinstance(job_id, int | float) and not isinstance(job_id, bool):
        return str(job_id)
    # No id at all: OpenClaw would invent a random one; a digest keeps re-imports stable
    canonical = json.dumps(raw, sort_keys=True, ensure_ascii=False, default=str)
    job["id"] = "sha256-" + hashlib.sha256(canonical.encode()).hexdigest()[:16]
    return str(job["id"])


def _map(job: dict[str, Any], name: str, registry: ChannelRegistry, options: MapOptions,
         notes: Notes) -> dict[str, Any] | None:
    try:
        return map_job(job, name, registry, options, notes)
    except Unmappable:
        return None


def _import_one(imported: ImportedJob, job: dict[str, Any], registry: ChannelRegistry,
                options: MapOptions, now: float) -> None:
    notes = Notes()
    try:
        document = map_job(job, imported.name, registry, options, notes)
        model = ScheduledJob.model_validate(document)
    except Unmappable as exc:
        imported.error = str(exc)
        return
    except ValidationError as exc:
        imported.error = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
        return
    problems = [p for p in check_schedule(model.spec.schedule, now) if p.severity == "error"]
    if problems:
        imported.error = "; ".join(f"schedule.{p.field}: {p.message}" for p in problems)
        return
    imported.notes = notes.items
    imported.document = document
    imported.state = import_state(job, model, now)
