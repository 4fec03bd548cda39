"""OpenClaw delivery targets and failure alerts as ``Channel`` specs and references.

OpenClaw announces through its own bot accounts: a channel type (``telegram``, ``slack`` ...)
and a target id (``to``). The reconciler posts to a named ``Channel`` (an incoming-webhook
URL, or a Telegram bot token and chat id). Each distinct (type, target, account) becomes one
Channel whose credentials are environment references the user fills in; jobs refer to it by
name. Chat services the reconciler cannot post to have no equivalent and are reported.

Reminders with no delivery went to the agent's main session, which relayed them on the user's
last channel; ``channel: last`` (or none) means the same at run time. Nothing here knows that
channel, so those jobs share one placeholder Channel, ``openclaw-main-session`` (a webhook whose
URL comes from ``OPENCLAW_MAIN_SESSION_URL``), marked as a placeholder to point at the chat.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from reconciler.model.duration import format_duration
from reconciler.model.enums import ChannelType
from reconciler.sources.openclaw.names import unique_names
from reconciler.sources.openclaw.normalize_schedule import as_millis
from reconciler.sources.openclaw.notes import Notes

POSTABLE = {t.value for t in ChannelType} - {ChannelType.WEBHOOK.value}


@dataclass(frozen=True)
class ChannelKey:
    type: str
    to: str | None
    account: str | None

    @property
    def label(self) -> str:
        if self == MAIN_SESSION:
            return "openclaw main session"
        return " ".join(part for part in (self.type, self.to) if part)


MAIN_SESSION = ChannelKey(ChannelType.WEBHOOK.value, "<main session>", None)


def channel_key(target: dict[str, Any]) -> ChannelKey | None:
    """The Channel a delivery or alert target needs, or None when it has no equivalent."""
    kind = target.get("channel")
    if not isinstance(kind, str) or kind.strip().lower() not in POSTABLE:
        return None
    to = target.get("to")
    account = target.get("accountId")
    kind = kind.strip().lower()
    if kind == ChannelType.TELEGRAM.value and to in (None, ""):
        return None  # a Telegram channel needs its chat id
    return ChannelKey(kind, None if to is None else str(to),
                      None if account is None else str(account))


class ChannelRegistry:
    """The Channels the imported jobs refer to, named once for the whole store.

    Names depend on every target of the store (colliding labels get hash suffixes), so the
    importer maps twice: first with a collecting registry (``keys``), then with one built
    from everything collected."""

    def __init__(self, keys: list[ChannelKey] | None = None) -> None:
        self.keys: list[ChannelKey] = []
        self._names: dict[ChannelKey, str] | None = None
        if keys is not None:
            distinct = sorted(set(keys), key=lambda k: (k.type, k.to or "", k.account or ""))
            names = unique_names([(k.label, repr(k)) for k in distinct], fallback="channel")
            self._names = dict(zip(distinct, names, strict=True))
        self.used: dict[str, ChannelKey] = {}

    def name(self, key: ChannelKey) -> str:
        if self._names is None:  # collecting
            self.keys.append(key)
            return "collecting"
        name = self._names[key]
        self.used[name] = key
        return name

    def documents(self) -> list[tuple[str, dict[str, Any], list[str]]]:
        """(name, Channel document, comments) for every Channel a job referred to."""
        return [(name, *_channel_document(name, self.used[name])) for name in sorted(self.used)]


def _env(name: str, suffix: str) -> str:
    variable = name.upper().replace("-", "_") + suffix
    return variable if variable.startswith("OPENCLAW_") else "OPENCLAW_" + variable


def _channel_document(name: str, key: ChannelKey) -> tuple[dict[str, Any], list[str]]:
    spec: dict[str, Any] = {"type": key.type}
    if key == MAIN_SESSION:
        spec["url"] = {"fromEnv": _env(name, "_URL")}
        comments = ["PLACEHOLDER: OpenClaw relayed these jobs' results through the agent's main "
                    "session to the user's last chat channel, which the store does not name.",
                    f"Point this Channel at that chat: set {_env(name, '_URL')}, or change the "
                    "type (slack, telegram, ...) and its settings."]
        return _document(name, spec), comments
    comments = [f"Imported from OpenClaw: its {key.type} bot account"
                + (f" {key.account!r}" if key.account else "")
                + (f" posting to {key.to!r}" if key.to else "") + "."]
    if key.type == ChannelType.TELEGRAM.value:
        spec["token"] = {"fromEnv": _env(name, "_TOKEN")}
        spec["chatId"] = key.to
        comments.append(f"Set {_env(name, '_TOKEN')} to the bot token before running.")
    else:
        spec["url"] = {"fromEnv": _env(name, "_URL")}
        comments.append(f"The reconciler posts to an incoming-webhook URL: create one for "
                        f"{key.to or 'this destination'} and set {_env(name, '_URL')}.")
    return _document(name, spec), comments


def _document(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "reconciler.dev/v1", "kind": "Channel",
            "metadata": {"name": name, "labels": {"imported-from": "openclaw"}}, "spec": spec}


def map_delivery(delivery: Any, registry: ChannelRegistry, notes: Notes,
                 reminder: bool = False) -> dict[str, Any] | None:
    """``spec.delivery`` for a normalised OpenClaw delivery, or None (with a note why).
    A ``reminder`` without delivery goes to the main-session placeholder."""
    path = ("spec", "delivery")
    if not isinstance(delivery, dict):
        return _main_session(registry, notes, path, "delivery") if reminder else None
    _target_notes(delivery, "delivery", notes, path)
    if delivery.get("bestEffort") is False:
        notes.add("delivery.bestEffort", "OpenClaw failed the run when delivery failed; here a "
                  "failed delivery never fails the run (it is retried from the outbox)", path)
    mode = delivery.get("mode")
    if mode == "none":
        return {"mode": "none"}
    if mode == "webhook":
        return _webhook(delivery, "delivery", notes, path)
    return _announce(delivery, "delivery", registry, notes, path)


def map_failure_alert(alert: Any, delivery: Any, registry: ChannelRegistry,
                      notes: Notes) -> dict[str, Any] | bool | None:
    """``spec.failureAlert``: False stays False; an object keeps after/cooldown and a target."""
    if alert is False:
        return False
    if not isinstance(alert, dict):
        return None
    path = ("spec", "failureAlert")
    result: dict[str, Any] = {}
    if isinstance(alert.get("after"), int) and alert["after"] >= 1:
        result["after"] = alert["after"]
    cooldown = as_millis(alert.get("cooldownMs"))
    if cooldown is not None and cooldown >= 0:
        result["cooldown"] = format_duration(timedelta(milliseconds=cooldown))
    target = dict(alert)
    if not target.get("channel") and isinstance(delivery, dict) and alert.get("mode") != "webhook":
        # OpenClaw alerts on the job's own delivery channel unless told otherwise
        target.update({k: delivery[k] for k in ("channel", "to", "accountId") if k in delivery})
    _target_notes(target, "failureAlert", notes, path)
    if alert.get("mode") == "webhook":
        webhook = _webhook(target, "failureAlert", notes, path)
        result.update(webhook or {})
    else:
        result.update(_announce(target, "failureAlert", registry, notes, path) or {})
    return result


def _announce(target: dict[str, Any], source: str, registry: ChannelRegistry, notes: Notes,
              path: tuple[str, ...]) -> dict[str, Any] | None:
    key = channel_key(target)
    if key is not None:
        return {"channel": registry.name(key)}
    channel = target.get("channel")
    if channel in (None, "", "last"):
        return _main_session(registry, notes, path, f"{source}.channel")
    if str(channel).strip().lower() == ChannelType.TELEGRAM.value:
        why = "a telegram announcement without a chat id (to)"
    else:
        why = f"OpenClaw announced on {channel!r}, which the reconciler cannot post to"
    notes.add(f"{source}.channel", f"{why}: no equivalent; add a Channel and refer to it here",
              path)
    return None


def _main_session(registry: ChannelRegistry, notes: Notes, path: tuple[str, ...],
                  source: str) -> dict[str, Any]:
    name = registry.name(MAIN_SESSION)
    notes.add(source, f"PLACEHOLDER channel {name}: OpenClaw delivered to the session's last "
              "chat channel, resolved at run time; point that Channel at your chat", path,
              placeholder=True)
    return {"channel": name}


def _webhook(target: dict[str, Any], source: str, notes: Notes,
             path: tuple[str, ...]) -> dict[str, Any] | None:
    url = target.get("to")
    if not isinstance(url, str) or not url.strip():
        notes.add(f"{source}.to", "a webhook without a URL (to): not mapped", path)
        return None
    notes.add(f"{source}.mode", "OpenClaw sent cron.webhookToken as a Bearer token: if it did, "
              "add headers: {Authorization: {fromEnv: ...}} or a secret", path)
    return {"webhook": {"url": url.strip()}}


def _target_notes(target: dict[str, Any], source: str, notes: Notes,
                  path: tuple[str, ...]) -> None:
    if target.get("threadId") not in (None, ""):
        notes.add(f"{source}.threadId", f"thread {target['threadId']!r}: channels post to the "
                  "channel itself, not into a thread", path)
    if isinstance(target.get("failureDestination"), dict):
        notes.add(f"{source}.failureDestination", "a separate destination for failed runs has "
                  "no equivalent: use delivery.on: [ok, error] or failureAlert", path)
