"""OpenClaw's schedule normalisations (steps 3 and 15-20 of ``openclaw doctor --fix``).

Each step takes a raw job (a dict, mutated in place) and returns True when it changed it.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

TOP_OF_HOUR_STAGGER_MS = 5 * 60 * 1000
_AT_ONLY = ("everyMs", "anchorMs", "expr", "tz", "staggerMs", "cron")
_EVERY_ONLY = ("at", "atMs", "expr", "tz", "staggerMs", "cron")
_CRON_ONLY = ("at", "atMs", "everyMs", "anchorMs")


def _schedule(job: dict[str, Any]) -> dict[str, Any] | None:
    schedule = job.get("schedule")
    return schedule if isinstance(schedule, dict) else None


def as_millis(value: Any) -> int | None:
    """A finite number, or a string of one, as integer milliseconds (floored); else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if isinstance(value, int | float) and math.isfinite(value):
        return math.floor(value)
    return None


def iso_millis(ms: int) -> str:
    """``new Date(ms).toISOString()``: UTC with milliseconds, e.g. 2026-03-29T01:00:00.000Z."""
    moment = datetime.fromtimestamp(ms / 1000, UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_at(value: Any) -> int | None:
    """An ``at``/``atMs`` value as epoch ms: numbers and numeric strings are ms; ISO strings
    without an offset are UTC (as OpenClaw's parser reads them); a date alone is midnight UTC."""
    millis = as_millis(value)
    if millis is not None or not isinstance(value, str):
        return millis
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return round(moment.timestamp() * 1000)


def schedule_string(job: dict[str, Any]) -> bool:
    """3. a string schedule is a cron expression (#18445)."""
    if not isinstance(job.get("schedule"), str):
        return False
    job["schedule"] = {"kind": "cron", "expr": job["schedule"].strip()}
    return True


def at_kind_inferred(job: dict[str, Any]) -> bool:
    """15. a schedule without kind but with at/atMs is a one-shot."""
    schedule = _schedule(job)
    if schedule is None or schedule.get("kind") or not ("at" in schedule or "atMs" in schedule):
        return False
    schedule["kind"] = "at"
    return True


def at_canonical(job: dict[str, Any]) -> bool:
    """16. at/atMs become one canonical ISO ``at`` (UTC, milliseconds); atMs is deleted."""
    schedule = _schedule(job)
    if schedule is None or schedule.get("kind") != "at":
        return False
    raw = schedule.get("atMs", schedule.get("at"))
    millis = parse_at(raw)
    canonical = iso_millis(millis) if millis is not None else raw
    changed = "atMs" in schedule or schedule.get("at") != canonical
    schedule.pop("atMs", None)
    schedule["at"] = canonical
    return _prune(schedule, _AT_ONLY) or changed


def every_floored(job: dict[str, Any]) -> bool:
    """17. everyMs floored to an integer."""
    schedule = _schedule(job)
    if schedule is None or schedule.get("kind") != "every":
        return False
    millis = as_millis(schedule.get("everyMs"))
    changed = millis is not None and schedule["everyMs"] != millis
    if changed:
        schedule["everyMs"] = millis
    return _prune(schedule, _EVERY_ONLY) or changed


def every_anchor(job: dict[str, Any]) -> bool:
    """18. anchorMs coerced to integer ms, defaulted to createdAtMs, then updatedAtMs."""
    schedule = _schedule(job)
    if schedule is None or schedule.get("kind") != "every":
        return False
    for candidate in (schedule.get("anchorMs"), job.get("createdAtMs"), job.get("updatedAtMs")):
        millis = as_millis(candidate)
        if millis is not None and millis >= 0:
            changed = schedule.get("anchorMs") != millis
            schedule["anchorMs"] = millis
            return changed
    return False


def cron_expr(job: dict[str, Any]) -> bool:
    """19. legacy ``schedule.cron`` becomes ``expr``; expr trimmed."""
    schedule = _schedule(job)
    if schedule is None:
        return False
    changed = False
    if "cron" in schedule:
        legacy = schedule.pop("cron")
        schedule.setdefault("expr", legacy)
        schedule.setdefault("kind", "cron")
        changed = True
    if schedule.get("kind") != "cron":
        return changed
    if isinstance(schedule.get("expr"), str) and schedule["expr"] != schedule["expr"].strip():
        schedule["expr"] = schedule["expr"].strip()
        changed = True
    return _prune(schedule, _CRON_ONLY) or changed


def cron_stagger(job: dict[str, Any]) -> bool:
    """20. staggerMs: explicit (coerced) kept; else 5 minutes for top-of-hour expressions."""
    schedule = _schedule(job)
    if schedule is None or schedule.get("kind") != "cron":
        return False
    explicit = as_millis(schedule.get("staggerMs"))
    if explicit is not None and explicit >= 0:
        changed = bool(schedule["staggerMs"] != explicit)
        schedule["staggerMs"] = explicit
        return changed
    if is_top_of_hour(schedule.get("expr")):
        schedule["staggerMs"] = TOP_OF_HOUR_STAGGER_MS
        return True
    return schedule.pop("staggerMs", None) is not None


def is_top_of_hour(expr: Any) -> bool:
    """Minute 0 (and second 0 in a 6-field expression) with a wildcard hour: the slot
    everyone picks, which OpenClaw spreads by default."""
    if not isinstance(expr, str):
        return False
    fields = expr.split()
    if len(fields) == 6:
        if fields[0] != "0":
            return False
        fields = fields[1:]
    return len(fields) == 5 and fields[0] == "0" and "*" in fields[1]


def _prune(schedule: dict[str, Any], foreign: tuple[str, ...]) -> bool:
    """Drop fields that belong to another kind."""
    removed = [key for key in foreign if key in schedule]
    for key in removed:
        del schedule[key]
    return bool(removed)
