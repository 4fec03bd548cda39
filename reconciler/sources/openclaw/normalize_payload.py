"""OpenClaw's payload and delivery normalisations (steps 9-14, 21 and 24 of ``doctor --fix``).

Each step takes a raw job (a dict, mutated in place) and returns True when it changed it.
"""

from __future__ import annotations

import math
from typing import Any

_KINDS = {"agentturn": "agentTurn", "systemevent": "systemEvent"}
AGENT_FIELDS = ("model", "thinking", "timeoutSeconds", "allowUnsafeExternalContent",
                "fallbacks", "toolsAllow", "lightContext")
DELIVERY_HINTS = ("deliver", "channel", "to", "threadId", "bestEffortDeliver", "provider")
LEGACY_TOP_LEVEL = ("message", "text", "command", "timeout", *AGENT_FIELDS, *DELIVERY_HINTS)


def _payload(job: dict[str, Any]) -> dict[str, Any] | None:
    payload = job.get("payload")
    return payload if isinstance(payload, dict) else None


def payload_inferred(job: dict[str, Any]) -> bool:
    """9. a missing payload comes from top-level message (agentTurn), text or command
    (systemEvent; a command becomes the event's text)."""
    if _payload(job) is not None:
        return False
    if isinstance(job.get("message"), str):
        job["payload"] = {"kind": "agentTurn", "message": job["message"]}
    elif isinstance(job.get("text"), str):
        job["payload"] = {"kind": "systemEvent", "text": job["text"]}
    elif isinstance(job.get("command"), str):
        job["payload"] = {"kind": "systemEvent", "text": job["command"]}
    else:
        return False
    return True


def payload_kind_case(job: dict[str, Any]) -> bool:
    """10. payload kind casing fixed (``agentturn``, ``system_event`` ...)."""
    payload = _payload(job)
    kind = payload.get("kind") if payload else None
    if payload is None or not isinstance(kind, str):
        return False
    fixed = _KINDS.get(kind.replace("_", "").replace("-", "").strip().lower(), kind)
    if fixed == kind:
        return False
    payload["kind"] = fixed
    return True


def payload_kind_inferred(job: dict[str, Any]) -> bool:
    """11. a payload without kind is an agentTurn with a message, a systemEvent with a text."""
    payload = _payload(job)
    if payload is None or payload.get("kind"):
        return False
    if isinstance(payload.get("message"), str):
        payload["kind"] = "agentTurn"
    elif isinstance(payload.get("text"), str):
        payload["kind"] = "systemEvent"
    else:
        return False
    return True


def top_level_fields_copied(job: dict[str, Any]) -> bool:
    """12. top-level agentTurn fields and delivery hints move into the payload (not over
    values the payload already has); timeoutSeconds floored, at least 0."""
    payload = _payload(job)
    if payload is None:
        return False
    fields = (*AGENT_FIELDS, *DELIVERY_HINTS) if payload.get("kind") == "agentTurn" else (
        DELIVERY_HINTS)
    copied = [key for key in fields if key in job and key not in payload]
    for key in copied:
        payload[key] = job[key]
    timeout = payload.get("timeoutSeconds")
    if "timeoutSeconds" in copied and isinstance(timeout, int | float) and not isinstance(
            timeout, bool) and math.isfinite(timeout):
        payload["timeoutSeconds"] = max(0, math.floor(timeout))
    return bool(copied)


def top_level_fields_deleted(job: dict[str, Any]) -> bool:
    """13. the legacy top-level fields are deleted (``command`` and ``timeout`` included)."""
    removed = [key for key in LEGACY_TOP_LEVEL if key in job]
    for key in removed:
        del job[key]
    return bool(removed)


def provider_to_channel(job: dict[str, Any]) -> bool:
    """14. payload ``provider`` becomes payload ``channel`` (lower-cased)."""
    payload = _payload(job)
    if payload is None or "provider" not in payload:
        return False
    provider = payload.pop("provider")
    if isinstance(provider, str) and not payload.get("channel"):
        payload["channel"] = provider.strip().lower()
    return True


def delivery_mode(job: dict[str, Any]) -> bool:
    """21. delivery mode ``deliver`` is ``announce``; a missing or null mode too."""
    delivery = job.get("delivery")
    if not isinstance(delivery, dict):
        return False
    mode = delivery.get("mode")
    if mode in (None, "deliver"):
        delivery["mode"] = "announce"
        return True
    if isinstance(mode, str) and mode != mode.strip().lower():
        delivery["mode"] = mode.strip().lower()
        return True
    return False


def delivery_hints_merged(job: dict[str, Any]) -> bool:
    """24. payload delivery hints merge into (or build) ``delivery`` and are stripped;
    an isolated agentTurn without delivery announces."""
    payload = _payload(job)
    hints = {k: payload.pop(k) for k in DELIVERY_HINTS if k in payload} if payload else {}
    delivery = job.get("delivery")
    changed = bool(hints)
    if hints:
        delivery = delivery if isinstance(delivery, dict) else {}
        _merge_hints(delivery, hints)
        job["delivery"] = delivery
    if (not isinstance(job.get("delivery"), dict) and payload is not None
            and payload.get("kind") == "agentTurn" and job.get("sessionTarget") != "main"):
        job["delivery"] = {"mode": "announce"}
        changed = True
    return changed


def _merge_hints(delivery: dict[str, Any], hints: dict[str, Any]) -> None:
    if "mode" not in delivery:
        delivery["mode"] = "none" if hints.get("deliver") is False else "announce"
    channel = hints.get("channel", hints.get("provider"))
    if isinstance(channel, str) and channel.strip():
        delivery.setdefault("channel", channel.strip().lower())
    if hints.get("to") is not None:
        delivery.setdefault("to", hints["to"])
    if hints.get("threadId") is not None:
        delivery.setdefault("threadId", str(hints["threadId"]))
    if isinstance(hints.get("bestEffortDeliver"), bool):
        delivery.setdefault("bestEffort", hints["bestEffortDeliver"])
