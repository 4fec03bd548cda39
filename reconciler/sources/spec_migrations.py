"""Ordered, idempotent steps that upgrade older spellings of specs to ``reconciler.dev/v1``.

Each step is a small named function that mutates a document in place and returns True when it
changed something. Applying a step twice equals applying it once. The loader runs the chain in
memory on plain dicts (and ``validate`` warns that the file can be migrated); ``reconciler
migrate --write`` runs the same chain on a ruamel.yaml round-trip tree (``CommentedMap``), so
replaced values keep their key position, comments and quoting.

Steps touch only our own documents (apiVersion ``reconciler.dev/...``): a Kubernetes CronJob in
the same repository also has ``spec.schedule: "0 9 * * *"`` and must stay as it is.

The legacy spellings, in chain order:

==========================  ==============================================================
step                        upgrade
==========================  ==============================================================
api-version-v1              ``apiVersion: reconciler.dev/v1alpha1`` (or ``v1beta1``) -> v1
schedule-string             ``schedule: "0 9 * * *"`` -> ``schedule: {cron: "0 9 * * *"}``;
                            ``schedule: "@every 30m"`` -> ``schedule: {every: 30m}``
schedule-timezone-key       ``schedule.tz`` / ``schedule.timeZone`` -> ``schedule.timezone``
timeout-seconds             ``timeoutSeconds: 600`` -> ``timeout: 10m``
enabled-to-suspend          ``enabled: false`` -> ``suspend: true`` (and true -> false)
concurrency-policy-case     ``concurrencyPolicy: forbid`` -> ``Forbid`` (any letter case)
run-command-string          ``run.command: "a b 'c d'"`` -> ``[a, b, c d]`` (shlex rules)
==========================  ==============================================================
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from reconciler import API_GROUP, API_VERSION
from reconciler.model.duration import format_duration
from reconciler.model.enums import ConcurrencyPolicy

Document = MutableMapping[str, Any]

LEGACY_API_VERSIONS = (f"{API_GROUP}/v1alpha1", f"{API_GROUP}/v1beta1")
_TIMEZONE_ALIASES = ("tz", "timeZone")
_MAX_SECONDS = 999_999_999 * 86_400  # timedelta's range; beyond it no duration can be written
_POLICIES = {policy.value.lower(): policy.value for policy in ConcurrencyPolicy}


@dataclass(frozen=True)
class SpecMigration:
    name: str
    summary: str
    apply: Callable[[Document], bool]
    """Mutates the document in place; returns True when it changed something."""


# ---- helpers that work on plain dicts and on ruamel CommentedMaps alike ------------------


def _ours(document: Document) -> bool:
    api_version = document.get("apiVersion")
    return isinstance(api_version, str) and api_version.startswith(f"{API_GROUP}/")


def _job_spec(document: Document) -> Document | None:
    """The ``spec`` mapping of one of our ScheduledJobs, else None."""
    if document.get("kind") != "ScheduledJob" or not _ours(document):
        return None
    spec = document.get("spec")
    # A plain dict first: the ABC check costs more, and the loader calls this per step.
    if type(spec) is dict or isinstance(spec, MutableMapping):
        return spec
    return None


def _styled(old: object, new: str) -> str:
    """``new`` in the quoting style of ``old`` (ruamel keeps quotes in str subclasses)."""
    if isinstance(old, str) and type(old) is not str:
        return type(old)(new)
    return new


def _move_comment(source: Any, old: str, target: Any, new: str) -> None:
    """Carry a ruamel end-of-line comment from ``source[old]`` to ``target[new]``."""
    source_ca = getattr(source, "ca", None)
    target_ca = getattr(target, "ca", None)
    if source_ca is None or target_ca is None or old not in source_ca.items:
        return
    target_ca.items[new] = source_ca.items.pop(old)


def replace_key(mapping: Document, old: str, new: str, value: Any) -> None:
    """Rename ``old`` to ``new`` with ``value`` at the same position, keeping its comment."""
    keys = list(mapping.keys())
    position = keys.index(old)
    insert = getattr(mapping, "insert", None)
    if insert is not None:  # a CommentedMap: insert in place and keep the comment
        comment = mapping.ca.items.pop(old, None)  # type: ignore[attr-defined]
        del mapping[old]
        insert(position, new, value)
        if comment is not None:
            mapping.ca.items[new] = comment  # type: ignore[attr-defined]
        return
    items = list(mapping.items())
    items[position] = (new, value)
    mapping.clear()
    mapping.update(items)


def _child_mapping(parent: Document) -> Document:
    """An empty mapping of the parent's type (a CommentedMap inside a round-trip tree)."""
    return type(parent)() if hasattr(parent, "insert") else {}


def _sequence_like(parent: Document, items: list[str]) -> list[str]:
    """A list; inside a round-trip tree a flow-style CommentedSeq, as a shorthand reads."""
    if not hasattr(parent, "insert"):
        return items
    from ruamel.yaml.comments import CommentedSeq  # only needed for round-trip trees

    sequence = CommentedSeq(items)
    sequence.fa.set_flow_style()
    return sequence


# ---- the steps ---------------------------------------------------------------------------


def api_version_v1(document: Document) -> bool:
    api_version = document.get("apiVersion")
    if api_version not in LEGACY_API_VERSIONS:
        return False
    document["apiVersion"] = _styled(api_version, API_VERSION)
    return True


def schedule_string(document: Document) -> bool:
    spec = _job_spec(document)
    if spec is None or not isinstance(spec.get("schedule"), str):
        return False
    text: str = spec["schedule"]
    schedule = _child_mapping(spec)
    if text.strip().startswith("@every "):  # the robfig/cron interval shorthand
        schedule["every"] = _styled(text, text.strip().removeprefix("@every ").strip())
    else:
        schedule["cron"] = _styled(text, text.strip())
    _move_comment(spec, "schedule", schedule, next(iter(schedule)))
    spec["schedule"] = schedule
    return True


def schedule_timezone_key(document: Document) -> bool:
    spec = _job_spec(document)
    schedule = spec.get("schedule") if spec is not None else None
    if not isinstance(schedule, MutableMapping) or "timezone" in schedule:
        return False
    for alias in _TIMEZONE_ALIASES:
        if alias in schedule:
            replace_key(schedule, alias, "timezone", schedule[alias])
            return True
    return False


def timeout_seconds(document: Document) -> bool:
    spec = _job_spec(document)
    if spec is None or "timeout" in spec:
        return False
    seconds = spec.get("timeoutSeconds")
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):
        return False  # not a number of seconds: validation names the unknown key
    if not 0 <= seconds < _MAX_SECONDS:
        return False  # negative, infinite or NaN: no duration says that
    duration = format_duration(timedelta(seconds=seconds))
    if duration == "0" and seconds != 0:
        return False  # below a millisecond: "0" would mean "no limit", not what was meant
    replace_key(spec, "timeoutSeconds", "timeout", duration)
    return True


def enabled_to_suspend(document: Document) -> bool:
    spec = _job_spec(document)
    if spec is None or "suspend" in spec or not isinstance(spec.get("enabled"), bool):
        return False
    replace_key(spec, "enabled", "suspend", not spec["enabled"])
    return True


def concurrency_policy_case(document: Document) -> bool:
    spec = _job_spec(document)
    policy = spec.get("concurrencyPolicy") if spec is not None else None
    if spec is None or not isinstance(policy, str):
        return False
    canonical = _POLICIES.get(policy.strip().lower())
    if canonical is None or canonical == policy:
        return False
    spec["concurrencyPolicy"] = _styled(policy, canonical)
    return True


def run_command_string(document: Document) -> bool:
    spec = _job_spec(document)
    run = spec.get("run") if spec is not None else None
    if not isinstance(run, MutableMapping) or not isinstance(run.get("command"), str):
        return False
    try:
        argv = shlex.split(run["command"])
    except ValueError:
        return False  # unbalanced quotes: leave it for validation to report
    if not argv:
        return False
    run["command"] = _sequence_like(run, argv)
    return True


STEPS: list[SpecMigration] = [
    SpecMigration("api-version-v1", "apiVersion reconciler.dev/v1alpha1|v1beta1 -> v1",
                  api_version_v1),
    SpecMigration("schedule-string", "schedule: '<cron>' -> schedule: {cron: '<cron>'}",
                  schedule_string),
    SpecMigration("schedule-timezone-key", "schedule.tz|timeZone -> schedule.timezone",
                  schedule_timezone_key),
    SpecMigration("timeout-seconds", "timeoutSeconds: N -> timeout: <duration>",
                  timeout_seconds),
    SpecMigration("enabled-to-suspend", "enabled: false -> suspend: true",
                  enabled_to_suspend),
    SpecMigration("concurrency-policy-case", "concurrencyPolicy: forbid -> Forbid",
                  concurrency_policy_case),
    SpecMigration("run-command-string", "run.command: 'a b' -> [a, b]", run_command_string),
]


def upgrade_document(document: Document) -> list[str]:
    """Run every step in order on ``document`` (in place); the names of the steps that applied."""
    return [step.name for step in STEPS if step.apply(document)]
