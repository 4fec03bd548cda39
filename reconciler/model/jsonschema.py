"""The JSON Schema (draft 2020-12) of the spec kinds, generated from the pydantic models.

Editors (yaml-language-server) use it for completion, hover and inline errors; the CRDs are
derived from it (``reconciler.model.crd``). The models stay the single source: this module only
renders their defaults in spec spelling, drops pydantic's generated titles and adds the
"exactly one of" rules that the models enforce in validators, which pydantic cannot see.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from pydantic.json_schema import GenerateJsonSchema, models_json_schema

from reconciler import API_GROUP, API_VERSION
from reconciler.model.duration import format_duration
from reconciler.model.enums import ChannelType
from reconciler.model.job import KINDS
from reconciler.model.run import EXECUTOR_KINDS

DIALECT = "https://json-schema.org/draft/2020-12/schema"
Schema = dict[str, Any]
_OUR_GROUP = f"^{re.escape(API_GROUP)}/"

# Keywords whose value is one subschema, a list of them, or a map of name -> subschema.
_SUBSCHEMA = ("items", "additionalProperties", "not", "if", "then", "else", "propertyNames")
_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SUBSCHEMA_MAPS = ("properties", "$defs", "patternProperties")


class _SpecGenerator(GenerateJsonSchema):
    """Pydantic renders timedelta defaults as ISO-8601 (``PT10M``), which the duration pattern
    itself rejects; show them as a spec would write them (``10m``)."""

    def encode_default(self, dft: Any) -> Any:
        return super().encode_default(_spec_spelling(dft))


def _spec_spelling(value: Any) -> Any:
    if isinstance(value, timedelta):
        return format_duration(value)
    if isinstance(value, list | tuple):
        return [_spec_spelling(item) for item in value]
    return value


def _exactly_one(*names: str) -> list[Schema]:
    return [{"required": [name]} for name in names]


def _channel_rules() -> list[Schema]:
    """Telegram needs token and chatId; every other type needs url and takes no chatId."""
    others = [t.value for t in ChannelType if t is not ChannelType.TELEGRAM]
    return [
        {"properties": {"type": {"enum": [ChannelType.TELEGRAM.value]}},
         "required": ["token", "chatId"]},
        {"properties": {"type": {"enum": others}}, "required": ["url"],
         "not": {"required": ["chatId"]}},
    ]


# The cross-field rules of the model validators that a schema can state, by model name.
_RULES: dict[str, Schema] = {
    "Schedule": {"oneOf": _exactly_one("cron", "every", "at")},
    "Run": {"oneOf": _exactly_one(*EXECUTOR_KINDS)},
    "Delivery": {"oneOf": _exactly_one("mode", "channel", "webhook")},
    "SecretRef": {"oneOf": _exactly_one("fromEnv", "fromFile", "secretKeyRef")},
    "FailureAlert": {"not": {"required": ["channel", "webhook"]}},
    "ChannelSpec": {"oneOf": _channel_rules()},
}


def walk(schema: Any, visit: Callable[[Schema], None]) -> None:
    """Call ``visit`` on every schema node, parents before children."""
    if not isinstance(schema, dict):
        return
    visit(schema)
    for key in _SUBSCHEMA:
        walk(schema.get(key), visit)
    for key in _SUBSCHEMA_LISTS:
        for child in schema.get(key) or ():
            walk(child, visit)
    for key in _SUBSCHEMA_MAPS:
        for child in (schema.get(key) or {}).values():
            walk(child, visit)


def _tidy(node: Schema) -> None:
    # Pydantic's titles ("Maxattempts") are noise next to the real key and description.
    node.pop("title", None)
    if isinstance(node.get("description"), str):
        node["description"] = node["description"].replace("``", "`")


def _finish(schema: Schema) -> Schema:
    title = schema.get("title")
    walk(schema, _tidy)
    schema["title"] = title
    for name, rules in _RULES.items():
        if name in schema.get("$defs", {}):
            schema["$defs"][name].update(rules)
    return schema


def _generate() -> tuple[dict[str, Schema], Schema]:
    """Each kind's top-level schema (a ``$ref``) and the shared ``$defs``."""
    refs, top = models_json_schema(
        [(model, "validation") for model in KINDS.values()],
        by_alias=True, schema_generator=_SpecGenerator,
    )
    by_kind = {kind: refs[(model, "validation")] for kind, model in KINDS.items()}
    return by_kind, top


def kind_schema(kind: str) -> Schema:
    """The standalone schema of one kind (``ScheduledJob`` or ``Channel``)."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}: use one of {', '.join(KINDS)}")
    schema = KINDS[kind].model_json_schema(
        by_alias=True, mode="validation", schema_generator=_SpecGenerator
    )
    body = {key: value for key, value in schema.items() if key != "$defs"}
    return _finish({"$schema": DIALECT, **body, "title": f"{API_VERSION} {kind}",
                    "$defs": schema.get("$defs", {})})


def combined_schema() -> Schema:
    """One schema for any spec file: documents of our API group are checked by kind, other
    manifests (which the loader ignores) pass untouched."""
    by_kind, top = _generate()
    dispatch = [
        {"if": {"properties": {"kind": {"const": kind}}, "required": ["kind"]}, "then": ref}
        for kind, ref in by_kind.items()
    ]
    ours = {
        "required": ["apiVersion", "kind"],
        "properties": {
            "apiVersion": {"const": API_VERSION, "description": f"Always {API_VERSION}."},
            "kind": {"enum": list(KINDS), "description": "The kind of spec."},
        },
        "allOf": dispatch,
    }
    return _finish({
        "$schema": DIALECT,
        "title": f"{API_GROUP} specs ({', '.join(KINDS)})",
        "description": "A reconciler spec document; other apiVersions are ignored.",
        "type": "object",
        "if": {"properties": {"apiVersion": {"type": "string", "pattern": _OUR_GROUP}},
               "required": ["apiVersion"]},
        "then": ours,
        "$defs": top.get("$defs", {}),
    })


def spec_schema(kind: str | None = None) -> Schema:
    """The combined schema, or one kind's when ``kind`` is given."""
    return combined_schema() if kind is None else kind_schema(kind)
