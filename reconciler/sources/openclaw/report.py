"""The import report: what became of every job (``--format json`` prints ``as_json``).

JSON shape (fields may be added, never renamed)::

    {"store": path, "stateFile": path | null, "out": dir,
     "jobs": [{"id", "openclawName", "name", "file" | null, "imported": bool,
               "normalised": [step, ...], "notes": [{"field", "message", "placeholder"}],
               "error": str | null,
               "state": {"nextRunAt", "nextNominalAt", "lastRunAt", "lastStatus",
                         "consecutiveErrors", "anchor"} | null}],
     "channels": [{"name", "file"}], "unmapped": [{"id", "name", "reason"}],
     "placeholders": int, "warnings": [str], "stateWritten": int | null}
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from reconciler.sources.openclaw.importer import ImportedJob, ImportResult
from reconciler.sources.openclaw.state import ImportedState


def _iso(instant: float | None) -> str | None:
    if instant is None:
        return None
    moment = datetime.fromtimestamp(instant, UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _state_json(state: ImportedState | None) -> dict[str, Any] | None:
    if state is None:
        return None
    job = state.job_state
    return {"nextRunAt": _iso(job.next_effective_at), "nextNominalAt": _iso(job.next_nominal_at),
            "lastRunAt": _iso(job.last_started_at), "lastStatus": job.last_status,
            "consecutiveErrors": job.consecutive_errors, "anchor": _iso(job.anchor)}


def _job_json(job: ImportedJob, out: Path) -> dict[str, Any]:
    imported = job.document is not None
    return {
        "id": job.openclaw_id, "openclawName": job.openclaw_name, "name": job.name,
        "file": str(out / "jobs" / f"{job.name}.yaml") if imported else None,
        "imported": imported, "normalised": job.normalised,
        "notes": [{"field": n.source, "message": n.message, "placeholder": n.placeholder}
                  for n in job.notes],
        "error": job.error, "state": _state_json(job.state),
    }


def as_json(result: ImportResult, out: Path, state_written: int | None) -> dict[str, Any]:
    state_file = result.store.state_path
    return {
        "store": str(result.store.path),
        "stateFile": None if state_file is None else str(state_file),
        "out": str(out),
        "jobs": [_job_json(job, out) for job in result.jobs],
        "channels": [{"name": name, "file": str(out / "channels" / f"{name}.yaml")}
                     for name, _, _ in result.channels],
        "unmapped": [{"id": j.openclaw_id, "name": j.openclaw_name, "reason": j.error}
                     for j in result.unmapped],
        "placeholders": sum(n.placeholder for j in result.jobs for n in j.notes),
        "warnings": result.warnings,
        "stateWritten": state_written,
    }


def as_text(result: ImportResult, out: Path, state_written: int | None) -> list[str]:
    """The summary for people: one line per job, its notes indented, then the totals."""
    lines: list[str] = []
    for job in result.jobs:
        if job.document is None:
            lines.append(f"NOT IMPORTED {job.openclaw_id} ({job.openclaw_name!r}): {job.error}")
            continue
        lines.append(f"imported {job.openclaw_id} ({job.openclaw_name!r}) -> "
                     f"{out / 'jobs' / (job.name + '.yaml')}")
        lines.extend(f"  {'fill in' if n.placeholder else 'note'} {n.source}: {n.message}"
                     for n in job.notes)
        if job.state is not None:
            lines.extend(f"  state: {note}" for note in job.state.notes)
    lines.extend(f"warning: {warning}" for warning in result.warnings)
    imported = len(result.jobs) - len(result.unmapped)
    summary = (f"{imported} of {len(result.jobs)} jobs imported, {len(result.channels)} "
               f"channels, {len(result.unmapped)} not imported")
    if result.unmapped:
        summary += f" (kept in {out / 'openclaw-unmapped.json'})"
    if state_written is not None:
        summary += f"; state of {state_written} jobs written"
    lines.append(summary)
    return lines
