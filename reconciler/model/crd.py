"""``apiextensions.k8s.io/v1`` CustomResourceDefinitions for the spec kinds, built from the models.

The spec schema comes from ``reconciler.model.jsonschema`` and is rewritten into a Kubernetes
*structural* schema: references inlined, every node typed, no ``anyOf`` of differing types,
OpenAPI v3.0 spellings (``nullable``, boolean ``exclusiveMinimum``, ``enum`` for ``const``).
Fields that take several types (a secret: string or reference; ``failureAlert``: false or a
mapping) keep their shape open with ``x-kubernetes-preserve-unknown-fields`` and are checked by
the reconciler itself. The result is plain data; the CLI prints it as YAML.
"""

from __future__ import annotations

import copy

from reconciler import API_GROUP
from reconciler.model.enums import RunStatus
from reconciler.model.job import KINDS, NAME_PATTERN
from reconciler.model.jsonschema import Schema, kind_schema

VERSION = "v1"
CATEGORY = "reconciler"

# Plural, singular, short names. "sj" is taken by KEDA's ScaledJob and "cj" by CronJob.
NAMES: dict[str, tuple[str, str, list[str]]] = {
    "ScheduledJob": ("scheduledjobs", "scheduledjob", ["rsj"]),
    "Channel": ("channels", "channel", ["rch"]),
}

# Value checks that carry over to OpenAPI v3.0 unchanged.
_KEPT = ("description", "type", "format", "enum", "pattern", "minLength", "maxLength",
         "minimum", "maximum", "minItems", "maxItems")
# Cross-field rules (only `required` and enums inside): structural schemas allow them as is.
_JUNCTORS = ("oneOf", "anyOf", "allOf", "not")


def _resolve(node: Schema, defs: Schema) -> Schema:
    """Inline a ``$ref``; keys beside the reference (the field's description) win."""
    while "$ref" in node:
        target = defs[node["$ref"].rsplit("/", 1)[-1]]
        node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
    return node


def _alternatives(node: Schema, defs: Schema) -> tuple[list[Schema], bool]:
    """The non-null branches of a (possibly nested) ``anyOf`` and whether null is allowed."""
    branches: list[Schema] = []
    nullable = False
    for branch in node["anyOf"]:
        branch = _resolve(branch, defs)
        if "anyOf" in branch:
            inner, inner_null = _alternatives(branch, defs)
            branches += inner
            nullable |= inner_null
        elif branch.get("type") == "null":
            nullable = True
        else:
            branches.append(branch)
    return branches, nullable


def _type_of(node: Schema) -> str:
    if "type" in node:
        return str(node["type"])
    if "const" not in node and not node.get("enum"):
        # A new model shape this converter does not know: fail loudly, never guess.
        raise ValueError(f"cannot give a structural type to schema node {node!r}")
    value = node["const"] if "const" in node else node["enum"][0]
    if isinstance(value, bool):
        return "boolean"
    return "integer" if isinstance(value, int) else "string"


def _several(branches: list[Schema], description: str | None) -> Schema:
    """A field that accepts several types: int-or-string when apt, else an open value."""
    out: Schema = {} if description is None else {"description": description}
    strings = [b for b in branches if _type_of(b) == "string"]
    if {_type_of(b) for b in branches} == {"integer", "string"}:
        out["x-kubernetes-int-or-string"] = True
        out.update({k: v for k, v in strings[0].items() if k in ("pattern", "maxLength")})
    else:
        out["x-kubernetes-preserve-unknown-fields"] = True
    return out


def structural(node: Schema, defs: Schema) -> Schema:
    """The structural (Kubernetes) form of one JSON Schema node."""
    node = _resolve(node, defs)
    if "anyOf" in node:
        branches, nullable = _alternatives(node, defs)
        outer = {k: v for k, v in node.items() if k not in ("anyOf", "default")}
        if len(branches) == 1:
            out = structural({**branches[0], **outer}, defs)
        else:
            out = _several(branches, node.get("description"))
        return {**out, "nullable": True} if nullable else out
    out = {key: node[key] for key in _KEPT if key in node}
    out["type"] = _type_of(node)
    if "const" in node:
        out["enum"] = [node["const"]]
    for bound in ("Minimum", "Maximum"):
        # JSON Schema 2020-12 says exclusiveMinimum: 0; OpenAPI v3.0 says minimum: 0 + a flag.
        if f"exclusive{bound}" in node:
            out[bound.lower()] = node[f"exclusive{bound}"]
            out[f"exclusive{bound}"] = True
    _object_parts(node, defs, out)
    if "items" in node:
        out["items"] = structural(node["items"], defs)
    return out


def _object_parts(node: Schema, defs: Schema, out: Schema) -> None:
    if "properties" in node:
        out["properties"] = {k: structural(v, defs) for k, v in node["properties"].items()}
    if node.get("required"):
        out["required"] = list(node["required"])
    extra = node.get("additionalProperties")
    if extra is True:
        out["x-kubernetes-preserve-unknown-fields"] = True
    elif isinstance(extra, dict):
        out["additionalProperties"] = structural(extra, defs)
    # additionalProperties: false is not allowed: the API server prunes unknown fields instead.
    for junctor in _JUNCTORS:
        if junctor in node:
            out[junctor] = node[junctor]


def _condition() -> Schema:
    """The standard ``metav1.Condition``."""
    text = {"type": "string"}
    return {
        "type": "object",
        "required": ["type", "status"],
        "properties": {
            "type": {**text, "description": "Condition type, e.g. Ready or Valid."},
            "status": {"type": "string", "enum": ["True", "False", "Unknown"],
                       "description": "True, False or Unknown."},
            "reason": {**text, "description": "A CamelCase reason for the last transition."},
            "message": {**text, "description": "Details for people."},
            "lastTransitionTime": {**text, "format": "date-time",
                                   "description": "When the status last changed."},
            "observedGeneration": {"type": "integer", "format": "int64",
                                   "description": "The generation this condition is about."},
        },
    }


def _status(kind: str) -> Schema:
    """What the reconciler observes and writes; people never write status."""
    time: Schema = {"type": "string", "format": "date-time", "nullable": True}
    properties: Schema = {
        "observedGeneration": {"type": "integer", "format": "int64",
                               "description": "The metadata.generation last reconciled."},
        "conditions": {"type": "array", "items": _condition(),
                       "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"],
                       "description": "Ready, Valid and other standard conditions."},
    }
    if kind == "ScheduledJob":
        properties |= {
            "schedule": {"type": "string",
                         "description": "The schedule in words, e.g. 'cron 0 9 * * * UTC'."},
            "nextRunAt": {**time, "description": "The next effective fire time (UTC)."},
            "lastRunAt": {**time, "description": "When the last run started (UTC)."},
            "lastStatus": {"type": "string", "enum": [s.value for s in RunStatus],
                           "description": "Status of the last run."},
            "consecutiveErrors": {"type": "integer", "minimum": 0,
                                  "description": "Failed runs since the last success."},
            "running": {"type": "boolean", "description": "A run is in progress."},
        }
    return {"type": "object", "description": "Observed state, written by the reconciler.",
            "properties": properties}


def _columns(kind: str) -> list[Schema]:
    def column(name: str, path: str, kind_: str, text: str, priority: int = 0) -> Schema:
        entry: Schema = {"name": name, "type": kind_, "jsonPath": path, "description": text}
        return entry | ({"priority": priority} if priority else {})

    age = column("Age", ".metadata.creationTimestamp", "date", "Time since creation.")
    if kind == "Channel":
        return [column("Type", ".spec.type", "string", "Channel type."), age]
    return [
        # The schedule is an object (cron, every or at); status holds its one-line summary.
        column("Schedule", ".status.schedule", "string", "The schedule in words."),
        column("Suspended", ".spec.suspend", "boolean", "Firing is stopped."),
        # A string, not a date: kubectl renders future dates as <invalid>.
        column("Next Run", ".status.nextRunAt", "string", "Next effective fire time (UTC)."),
        column("Last Status", ".status.lastStatus", "string", "Status of the last run."),
        age,
        column("Last Run", ".status.lastRunAt", "date", "Time since the last run.", 1),
        column("Errors", ".status.consecutiveErrors", "integer", "Consecutive failures.", 1),
    ]


def _root(kind: str) -> Schema:
    schema = kind_schema(kind)
    defs = schema.get("$defs", {})
    spec = structural(schema["properties"]["spec"], defs)
    name = schema["$defs"]["Metadata"]["properties"]["name"]
    return {
        "type": "object",
        "description": schema.get("description", kind),
        "required": ["spec"],
        "properties": {
            "apiVersion": {"type": "string", "description": "reconciler.dev/v1."},
            "kind": {"type": "string", "description": kind},
            # Only metadata.name may be constrained in a CRD; job ids are DNS-1123 labels.
            "metadata": {"type": "object", "properties": {"name": {
                "type": "string", "maxLength": 63, "pattern": NAME_PATTERN,
                "description": name["description"]}}},
            "spec": spec,
            "status": _status(kind),
        },
    }


def crd(kind: str) -> Schema:
    """The CustomResourceDefinition of one kind, as a plain mapping."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}: use one of {', '.join(KINDS)}")
    plural, singular, short = NAMES[kind]
    version: Schema = {
        "name": VERSION, "served": True, "storage": True,
        "subresources": {"status": {}},
        "additionalPrinterColumns": _columns(kind),
        "schema": {"openAPIV3Schema": _root(kind)},
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{API_GROUP}",
                     "labels": {"app.kubernetes.io/part-of": "reconciler"}},
        "spec": {
            "group": API_GROUP,
            "names": {"kind": kind, "listKind": f"{kind}List", "plural": plural,
                      "singular": singular, "shortNames": short, "categories": [CATEGORY]},
            "scope": "Namespaced",
            "versions": [version],
        },
    }


def crds(kind: str | None = None) -> list[Schema]:
    """Every kind's CRD (or one kind's), in a stable order. Deep copies, so no two places of
    the output share a list (YAML would print them as anchors and aliases)."""
    return [copy.deepcopy(crd(name)) for name in KINDS if kind is None or name == kind]


def file_name(kind: str) -> str:
    """Where the committed CRD of a kind lives under ``crds/`` (controller-gen's naming)."""
    return f"{API_GROUP}_{NAMES[kind][0]}.yaml"

