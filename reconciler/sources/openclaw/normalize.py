"""The 25 normalisations of ``openclaw doctor --fix``, applied to raw jobs before mapping.

OpenClaw has carried several shapes of the same job (see openclaw-store.md): ``jobId`` for
``id``, a cron string for ``schedule``, payload fields at the top level, ``provider`` for
``channel``, ``deliver`` for ``announce``, a legacy ``notify`` flag... Its doctor rewrites them
in 25 numbered steps; we run the same steps (in the same order) on a copy of each job, so the
mapper only ever sees the current shape, and the report can say which legacy shapes a job had.
Each step mutates the job in place and returns True when it changed it.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from reconciler.sources.openclaw import normalize_payload as p
from reconciler.sources.openclaw import normalize_schedule as s

Job = dict[str, Any]
_WAKE_MODES = ("now", "next-heartbeat")


@dataclass
class NormalizeContext:
    """Store-wide inputs: the deprecated ``cron.webhook`` fallback URL, and warnings out."""

    legacy_webhook: str | None = None
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Normalisation:
    number: int
    name: str
    apply: Callable[[Job, NormalizeContext], bool]


def _plain(step: Callable[[Job], bool]) -> Callable[[Job, NormalizeContext], bool]:
    return lambda job, _context: step(job)


def state_object(job: Job) -> bool:
    """1. a non-object ``state`` becomes ``{}``."""
    if isinstance(job.get("state"), dict):
        return False
    job["state"] = {}
    return True


def job_id(job: Job) -> bool:
    """2. legacy ``jobId`` becomes ``id`` (trimmed)."""
    changed = False
    if "jobId" in job:
        legacy = job.pop("jobId")
        if not _text(job.get("id")) and _text(legacy):
            job["id"] = legacy
        changed = True
    if isinstance(job.get("id"), str) and job["id"] != job["id"].strip():
        job["id"] = job["id"].strip()
        changed = True
    return changed


def name_inferred(job: Job) -> bool:
    """4. a blank or missing name is inferred (from the payload text); else trimmed."""
    name = job.get("name")
    if _text(name):
        trimmed = str(name).strip()
        job["name"] = trimmed
        return trimmed != name
    payload = _payload(job)
    source = next((v for v in (payload.get("text"), payload.get("message"), job.get("text"),
                               job.get("message")) if _text(v)), None)
    first_line = str(source).strip().splitlines()[0] if source else ""
    job["name"] = first_line[:60].strip() or "cron job"
    return True


def _trimmed_or_removed(job: Job, key: str) -> bool:
    value = job.get(key)
    if key not in job or (isinstance(value, str) and value == value.strip() and value):
        return False
    if _text(value):
        job[key] = str(value).strip()
    else:
        del job[key]
    return True


def enabled_boolean(job: Job) -> bool:
    """7. ``enabled`` is a boolean: "true"/"false" strings coerced, anything else true."""
    enabled = job.get("enabled")
    if isinstance(enabled, bool):
        return False
    lowered = enabled.strip().lower() if isinstance(enabled, str) else None
    job["enabled"] = lowered != "false"
    return True


def wake_mode(job: Job) -> bool:
    """8. ``wakeMode`` lower-cased and trimmed; unknown or missing is ``now``."""
    mode = job.get("wakeMode")
    fixed = mode.strip().lower() if isinstance(mode, str) else "now"
    fixed = fixed if fixed in _WAKE_MODES else "now"
    if fixed == mode:
        return False
    job["wakeMode"] = fixed
    return True


def isolation_deleted(job: Job) -> bool:
    """22. the removed ``isolation`` object is deleted."""
    if "isolation" not in job:
        return False
    del job["isolation"]
    return True


def session_target(job: Job) -> bool:
    """23. sessionTarget: main/isolated lower-cased, ``session:<id>`` trimmed, ``current`` is
    isolated, anything else inferred (agentTurn is isolated, else main)."""
    target = job.get("sessionTarget")
    raw = target.strip() if isinstance(target, str) else ""
    lowered = raw.lower()
    if lowered in ("main", "isolated"):
        fixed = lowered
    elif lowered.startswith("session:") and raw[len("session:"):].strip():
        fixed = "session:" + raw[len("session:"):].strip()
    elif lowered == "current":
        fixed = "isolated"
    else:
        fixed = "isolated" if _payload(job).get("kind") == "agentTurn" else "main"
    if fixed == target:
        return False
    job["sessionTarget"] = fixed
    return True


def legacy_notify(job: Job, context: NormalizeContext) -> bool:
    """25. ``notify: false`` removed; ``notify: true`` with a webhook delivery and ``to``
    removed; with mode unset/none/webhook and ``cron.webhook`` set, a webhook delivery to the
    existing ``to`` (always cron.webhook for none); otherwise kept with a warning."""
    if "notify" not in job:
        return False
    delivery = job.get("delivery") if isinstance(job.get("delivery"), dict) else None
    mode = delivery.get("mode") if delivery else None
    to = delivery.get("to") if delivery else None
    if job["notify"] is not True or (mode == "webhook" and _text(to)):
        del job["notify"]
        return True
    if mode in (None, "none", "webhook") and context.legacy_webhook:
        target = to if mode != "none" and _text(to) else context.legacy_webhook
        job["delivery"] = {**(delivery or {}), "mode": "webhook", "to": target}
        del job["notify"]
        return True
    context.warnings.append(
        f"job {job.get('id')!r}: legacy notify: true cannot be migrated automatically "
        f"(no webhook delivery and no cron.webhook given; use --legacy-webhook URL)")
    return False


def _payload(job: Job) -> dict[str, Any]:
    payload = job.get("payload")
    return payload if isinstance(payload, dict) else {}


def _text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


NORMALISATIONS: list[Normalisation] = [
    Normalisation(1, "state-object", _plain(state_object)),
    Normalisation(2, "job-id", _plain(job_id)),
    Normalisation(3, "schedule-string", _plain(s.schedule_string)),
    Normalisation(4, "name", _plain(name_inferred)),
    Normalisation(5, "description", _plain(lambda job: _trimmed_or_removed(job, "description"))),
    Normalisation(6, "session-key", _plain(lambda job: _trimmed_or_removed(job, "sessionKey"))),
    Normalisation(7, "enabled", _plain(enabled_boolean)),
    Normalisation(8, "wake-mode", _plain(wake_mode)),
    Normalisation(9, "payload-inferred", _plain(p.payload_inferred)),
    Normalisation(10, "payload-kind-case", _plain(p.payload_kind_case)),
    Normalisation(11, "payload-kind-inferred", _plain(p.payload_kind_inferred)),
    Normalisation(12, "top-level-payload-fields", _plain(p.top_level_fields_copied)),
    Normalisation(13, "top-level-fields-deleted", _plain(p.top_level_fields_deleted)),
    Normalisation(14, "payload-provider", _plain(p.provider_to_channel)),
    Normalisation(15, "at-kind-inferred", _plain(s.at_kind_inferred)),
    Normalisation(16, "at-canonical", _plain(s.at_canonical)),
    Normalisation(17, "every-floored", _plain(s.every_floored)),
    Normalisation(18, "every-anchor", _plain(s.every_anchor)),
    Normalisation(19, "cron-expr", _plain(s.cron_expr)),
    Normalisation(20, "cron-stagger", _plain(s.cron_stagger)),
    Normalisation(21, "delivery-mode", _plain(p.delivery_mode)),
    Normalisation(22, "isolation", _plain(isolation_deleted)),
    Normalisation(23, "session-target", _plain(session_target)),
    Normalisation(24, "delivery-hints", _plain(p.delivery_hints_merged)),
    Normalisation(25, "legacy-notify", legacy_notify),
]


def normalize_job(raw: Job, context: NormalizeContext) -> tuple[Job, list[str]]:
    """A normalised deep copy of ``raw`` and the names of the steps that changed it."""
    job = copy.deepcopy(raw)
    applied = [step.name for step in NORMALISATIONS if step.apply(job, context)]
    return job, applied
