"""An OpenClaw payload as ``spec.run`` (and ``spec.timeout``).

* ``systemEvent`` (a reminder injected into the main session) -> ``run.message``: the text is
  the run's output, delivered like any result.
* ``agentTurn`` (an isolated agent run) -> ``run.agent``: OpenClaw resolved provider and
  endpoint from its own config, so the endpoint (and the model when the job names none) is a
  marked placeholder the user must set; ``fallbacks`` -> ``fallbackModels``; ``timeoutSeconds``
  -> ``timeout``. Thinking level, tool allow-lists, light context and external-content
  settings have no equivalent and are noted.

Texts become templates here (Jinja2), so any ``{{``/``{%``/``{#`` in them is kept literal with
a raw block.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from reconciler.model.duration import format_duration
from reconciler.sources.openclaw.notes import MapOptions, Notes, Unmappable

_TEMPLATE_MARKS = ("{{", "{%", "{#")
_AGENT_ONLY = {
    "thinking": "the thinking level has no equivalent",
    "toolsAllow": "tool allow-lists have no equivalent: the agent run has no tools",
    "lightContext": "light context has no equivalent",
    "allowUnsafeExternalContent": "external-content wrapping has no equivalent",
    "externalContentSource": "external-content wrapping has no equivalent",
}


def literal(text: str) -> str:
    """``text`` as a template that renders to itself."""
    if any(mark in text for mark in _TEMPLATE_MARKS):
        return "{% raw %}" + text + "{% endraw %}"
    return text


def map_run(job: dict[str, Any], options: MapOptions,
            notes: Notes) -> tuple[dict[str, Any], str | None]:
    """(``spec.run``, ``spec.timeout`` or None); ``Unmappable`` when there is nothing to run."""
    payload = job.get("payload") if isinstance(job.get("payload"), dict) else {}
    assert isinstance(payload, dict)
    kind = payload.get("kind")
    if kind == "systemEvent" and _text(payload, "text"):
        _session_notes(job, notes, kind)
        return {"message": {"text": _literal_noted(payload["text"], notes)}}, None
    if kind == "agentTurn" and _text(payload, "message"):
        _session_notes(job, notes, kind)
        return {"agent": _agent(payload, options, notes)}, _timeout(payload, notes)
    if kind not in ("systemEvent", "agentTurn"):
        raise Unmappable(f"payload kind {kind!r} has no equivalent (known: systemEvent, "
                         f"agentTurn): {payload!r}")
    raise Unmappable(f"payload {payload!r} has no text or message to run")


def _text(payload: dict[str, Any], key: str) -> bool:
    return isinstance(payload.get(key), str) and bool(payload[key].strip())


def _literal_noted(text: str, notes: Notes) -> str:
    escaped = literal(text)
    if escaped != text:
        notes.add("payload", "the text contains {{ or {%: wrapped in {% raw %} so it is sent "
                  "as written, not rendered as a template", ("spec", "run"))
    return escaped


def _agent(payload: dict[str, Any], options: MapOptions, notes: Notes) -> dict[str, Any]:
    path = ("spec", "run")
    agent: dict[str, Any] = {"endpoint": options.agent_endpoint}
    notes.add("payload", f"PLACEHOLDER endpoint {options.agent_endpoint}: OpenClaw picked the "
              "provider from its own config; set your OpenAI-compatible endpoint (and apiKey)",
              path, placeholder=True)
    model = payload.get("model")
    if isinstance(model, str) and model.strip():
        agent["model"] = model.strip()
    else:
        agent["model"] = options.agent_model
        notes.add("payload.model", f"PLACEHOLDER model {options.agent_model!r}: the job used "
                  "OpenClaw's default model; set the model name", path, placeholder=True)
    agent["prompt"] = _literal_noted(payload["message"], notes)
    fallbacks = payload.get("fallbacks")
    if isinstance(fallbacks, list) and fallbacks:
        agent["fallbackModels"] = [str(item) for item in fallbacks]
    for key, why in _AGENT_ONLY.items():
        if payload.get(key) not in (None, False):
            notes.add(f"payload.{key}", f"{key}={payload[key]!r}: {why}", path)
    return agent


def _timeout(payload: dict[str, Any], notes: Notes) -> str | None:
    seconds = payload.get("timeoutSeconds")
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds < 0:
        return None
    if seconds == 0:
        notes.add("payload.timeoutSeconds", "timeoutSeconds 0: no time limit",
                  ("spec", "timeout"))
    return format_duration(timedelta(seconds=seconds))


def _session_notes(job: dict[str, Any], notes: Notes, kind: str) -> None:
    target = job.get("sessionTarget")
    if kind == "systemEvent":
        notes.add("sessionTarget", "OpenClaw injected this text into the agent's main session, "
                  "which relayed it; here the text itself is the result that is delivered",
                  ("spec", "run"))
    elif isinstance(target, str) and target.startswith("session:"):
        notes.add("sessionTarget", f"{target}: the agent run here has no conversation history "
                  "beyond its recent run summaries (memory)", ("spec", "run"))
    elif target == "main":
        notes.add("sessionTarget", "an agentTurn in the main session (invalid in OpenClaw): "
                  "runs as a standalone agent call", ("spec", "run"))
    if job.get("wakeMode") == "next-heartbeat":
        notes.add("wakeMode", "next-heartbeat: the run starts at its scheduled time, not at the "
                  "next heartbeat", ("spec", "schedule"))
