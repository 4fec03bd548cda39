"""One normalised OpenClaw job as a ``ScheduledJob`` document (a plain dict) plus notes.

What maps to what (README "import openclaw" has the full table):

* ``schedule`` at/every/cron -> ``schedule.at`` / ``every`` + ``anchor`` / ``cron`` +
  ``timezone`` + ``stagger`` (a 6-field cron's leading seconds move to the end, withSeconds)
* ``payload`` systemEvent -> ``run.message``; agentTurn -> ``run.agent`` (``mapping_run``)
* ``enabled: false`` -> ``suspend: true``; ``deleteAfterRun`` kept for one-shots
* ``delivery`` / ``failureAlert`` -> Channel references or webhooks (``channels``)
* identity (``id``, free-text name, agent, session) -> ``metadata.annotations``
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from reconciler.model.duration import format_duration
from reconciler.sources.openclaw.channels import (
    ChannelRegistry,
    map_delivery,
    map_failure_alert,
)
from reconciler.sources.openclaw.mapping_run import map_run
from reconciler.sources.openclaw.normalize_schedule import as_millis, iso_millis
from reconciler.sources.openclaw.notes import MapOptions, Notes, Unmappable

ANNOTATION = "openclaw.ai/"


def map_job(job: dict[str, Any], name: str, registry: ChannelRegistry, options: MapOptions,
            notes: Notes) -> dict[str, Any]:
    """The ScheduledJob document for ``job``; ``Unmappable`` if it has no equivalent."""
    spec: dict[str, Any] = {}
    if isinstance(job.get("description"), str):
        spec["description"] = job["description"]
    spec["schedule"] = map_schedule(job.get("schedule"), options, notes)
    if job.get("enabled") is False:
        spec["suspend"] = True
    run, timeout = map_run(job, options, notes)
    spec["run"] = run
    if timeout is not None:
        spec["timeout"] = timeout
    payload = job.get("payload") if isinstance(job.get("payload"), dict) else {}
    reminder = isinstance(payload, dict) and payload.get("kind") == "systemEvent"
    delivery = map_delivery(job.get("delivery"), registry, notes, reminder)
    if delivery is not None:
        spec["delivery"] = delivery
    alert = map_failure_alert(job.get("failureAlert"), job.get("delivery"), registry, notes)
    if alert is not None:
        spec["failureAlert"] = alert
    _delete_after_run(job, spec, notes)
    return {
        "apiVersion": "reconciler.dev/v1",
        "kind": "ScheduledJob",
        "metadata": {"name": name, "labels": {"imported-from": "openclaw"},
                     "annotations": _annotations(job)},
        "spec": spec,
    }


def map_schedule(schedule: Any, options: MapOptions, notes: Notes) -> dict[str, Any]:
    kind = schedule.get("kind") if isinstance(schedule, dict) else None
    if kind == "at" and isinstance(schedule.get("at"), str) and schedule["at"].strip():
        return {"at": schedule["at"]}
    if kind == "every":
        return _every(schedule, notes)
    if kind == "cron" and isinstance(schedule.get("expr"), str) and schedule["expr"]:
        return _cron(schedule, options, notes)
    raise Unmappable(f"schedule {schedule!r} is not a usable at, every or cron schedule")


def _every(schedule: dict[str, Any], notes: Notes) -> dict[str, Any]:
    every_ms = as_millis(schedule.get("everyMs"))
    if every_ms is None or every_ms < 1000:
        raise Unmappable(f"interval everyMs={schedule.get('everyMs')!r}: the reconciler's "
                         "shortest interval is 1s")
    result = {"every": format_duration(timedelta(milliseconds=every_ms))}
    anchor = as_millis(schedule.get("anchorMs"))
    if anchor is not None:
        result["anchor"] = iso_millis(anchor)
    else:
        notes.add("schedule.anchorMs", "no anchor (nor createdAtMs): the grid starts when the "
                  "reconciler first sees the job", ("spec", "schedule"))
    return result


def _cron(schedule: dict[str, Any], options: MapOptions, notes: Notes) -> dict[str, Any]:
    path = ("spec", "schedule")
    fields = schedule["expr"].split()
    result: dict[str, Any] = {}
    if len(fields) == 6:
        # croner puts seconds first; the reconciler's optional seconds field comes last
        result["cron"] = " ".join([*fields[1:], fields[0]])
        result["withSeconds"] = True
        notes.add("schedule.expr", f"6-field OpenClaw expression {schedule['expr']!r}: seconds "
                  "moved from the first field to the last", path)
    else:
        result["cron"] = schedule["expr"]
    tz = schedule.get("tz")
    if isinstance(tz, str) and tz.strip():
        result["timezone"] = tz.strip()
    else:
        result["timezone"] = options.default_timezone
        notes.add("schedule.tz", "no tz: OpenClaw used the gateway host's zone; assumed "
                  f"{options.default_timezone} (--default-timezone)", path)
    stagger = as_millis(schedule.get("staggerMs"))
    if stagger is not None:
        result["stagger"] = format_duration(timedelta(milliseconds=stagger))
        if stagger > 0:
            notes.add("schedule.staggerMs", "same slots and window; OpenClaw derived each "
                      "job's offset in the window from its id, the reconciler from its name, "
                      "so the start within the window moves", path)
    return result


def _delete_after_run(job: dict[str, Any], spec: dict[str, Any], notes: Notes) -> None:
    is_at = "at" in spec["schedule"]
    value = job.get("deleteAfterRun")
    if is_at:
        # OpenClaw's default for one-shots is true: write it, so nothing depends on defaults
        spec["deleteAfterRun"] = value if isinstance(value, bool) else True
    elif value is True:
        notes.add("deleteAfterRun", "deleteAfterRun only applies to one-shots here: dropped")


def _annotations(job: dict[str, Any]) -> dict[str, str]:
    annotations = {f"{ANNOTATION}id": str(job.get("id", "")),
                   f"{ANNOTATION}name": str(job.get("name", ""))}
    for key in ("agentId", "sessionKey", "sessionTarget", "wakeMode"):
        if isinstance(job.get(key), str) and job[key]:
            annotations[ANNOTATION + key] = job[key]
    created = as_millis(job.get("createdAtMs"))
    if created is not None:
        annotations[f"{ANNOTATION}createdAt"] = iso_millis(created)
    return annotations
