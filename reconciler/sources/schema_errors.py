"""Turn pydantic validation errors into messages that say what to fix."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError


@dataclass(frozen=True)
class SchemaProblem:
    path: tuple[str | int, ...]
    message: str
    at_key: bool  # point at the key (unknown field) rather than the value


def _field_names(model: type[BaseModel], seen: set[type[BaseModel]]) -> set[str]:
    """Every YAML key the model tree knows, for did-you-mean suggestions."""
    if model in seen:
        return set()
    seen.add(model)
    names: set[str] = set()
    for name, field in model.model_fields.items():
        names.add(field.alias or name)
        for candidate in _nested_models(field.annotation):
            names |= _field_names(candidate, seen)
    return names


def _nested_models(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    found: list[type[BaseModel]] = []
    for arg in getattr(annotation, "__args__", ()) or ():
        found.extend(_nested_models(arg))
    metadata_origin = getattr(annotation, "__origin__", None)
    if metadata_origin is not None and not found:
        found.extend(_nested_models(metadata_origin))
    return found


def known_keys(model: type[BaseModel]) -> set[str]:
    return _field_names(model, set())


def _describe(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"{str(value).lower()} (a boolean)"
    if isinstance(value, str):
        return f"the string {value!r}" if len(value) < 60 else "a long string"
    return f"{value!r} ({type(value).__name__})"


def _clean_path(loc: tuple[str | int, ...], data: Any) -> tuple[str | int, ...]:
    """Drop pydantic's union/validator tags (``str``, ``SecretRef``, ``function-after[...]``)."""
    path: list[str | int] = []
    node = data
    for part in loc:
        in_mapping = isinstance(node, dict) and part in node
        in_list = isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        if in_mapping or in_list:
            path.append(part)
            node = node[part]
        elif isinstance(node, dict) and isinstance(part, str) and part == "[key]":
            continue
        elif isinstance(node, dict | list) or part in ("str", "int", "bool", "float"):
            # A missing key keeps its name so the message can say where it belongs.
            if isinstance(node, dict) and isinstance(part, str) and _looks_like_field(part):
                path.append(part)
            break
        else:
            break
    return tuple(path)


def _looks_like_field(part: str) -> bool:
    return part[:1].islower() and "[" not in part and part not in ("str", "int", "bool", "float")


def _message(error: Any, vocabulary: set[str]) -> tuple[str, bool]:
    kind = error["type"]
    loc = error["loc"]
    if kind == "extra_forbidden":
        key = str(loc[-1])
        close = difflib.get_close_matches(key, sorted(vocabulary), n=1, cutoff=0.75)
        hint = f"did you mean {close[0]!r}?" if close else "remove it or fix its spelling"
        return f"unknown field {key!r}: {hint}", True
    if kind == "missing":
        return f"missing required field {str(loc[-1])!r}", False
    message = str(error["msg"]).removeprefix("Value error, ").removeprefix("Assertion failed, ")
    if kind.endswith(("_type", "_parsing")):
        message = f"{message} (got {_describe(error.get('input'))})"
    return message, False


def _without_losing_union_branches(errors: list[Any]) -> list[Any]:
    """For a union (``str | SecretRef``), a mapping input failing the ``str`` branch is noise:
    keep the branch that says what is wrong with the mapping."""
    by_input: dict[int, list[Any]] = {}
    for error in errors:
        by_input.setdefault(id(error.get("input")), []).append(error)
    kept = []
    for error in errors:
        siblings = by_input[id(error.get("input"))]
        is_type_error = str(error["type"]).endswith("_type")
        if is_type_error and any(not str(s["type"]).endswith("_type") for s in siblings):
            continue
        kept.append(error)
    return kept


def schema_problems(exc: ValidationError, data: Any, model: type[BaseModel]) -> list[SchemaProblem]:
    """One problem per field path; alternatives of a union are joined with "or"."""
    vocabulary = known_keys(model)
    merged: dict[tuple[tuple[str | int, ...], bool], list[str]] = {}
    for error in _without_losing_union_branches(exc.errors()):
        message, at_key = _message(error, vocabulary)
        path = _clean_path(tuple(error["loc"]), data)
        if at_key and error["loc"] and path[-1:] != (error["loc"][-1],):
            path = (*path, error["loc"][-1])
        messages = merged.setdefault((path, at_key), [])
        if message not in messages:
            messages.append(message)
    return [
        SchemaProblem(path, " or ".join(messages), at_key)
        for (path, at_key), messages in merged.items()
    ]
