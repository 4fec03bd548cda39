"""Fast YAML reading with the C loader and YAML 1.2 core scalars.

PyYAML follows YAML 1.1: unquoted ``on``/``off``/``yes``/``no`` become booleans (keys too),
``09:00`` becomes the sexagesimal integer 540 and dates become ``datetime`` objects. Specs mean
what they say, so our resolver knows only the YAML 1.2 core schema: ``true``/``false``, null,
decimal/octal/hex integers and floats; everything else stays a string.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

import yaml

# The C loader is the fast path; PyYAML built without libyaml falls back to the Python one.
_BaseLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_CORE_RESOLVERS: list[tuple[str, re.Pattern[str], str]] = [
    ("tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), "tTfF"),
    ("tag:yaml.org,2002:null", re.compile(r"^(?:~|null|Null|NULL|)$"), "~nN"),
    ("tag:yaml.org,2002:int",
     re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$"), "-+0123456789"),
    ("tag:yaml.org,2002:float",
     re.compile(r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
                r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"), "-+0123456789."),
    ("tag:yaml.org,2002:merge", re.compile(r"^(?:<<)$"), "<"),
]


class SpecLoader(_BaseLoader):  # type: ignore[misc]
    """The C loader with YAML 1.2 core implicit types."""

    yaml_implicit_resolvers: ClassVar[dict[Any, Any]] = {}


def _construct_int(loader: SpecLoader, node: yaml.ScalarNode) -> int:
    text = str(loader.construct_scalar(node))
    if text.startswith("0o"):
        return int(text[2:], 8)
    return int(text, 0) if text.startswith("0x") else int(text, 10)


for _tag, _pattern, _first in _CORE_RESOLVERS:
    SpecLoader.add_implicit_resolver(_tag, _pattern, list(_first))
SpecLoader.add_implicit_resolver("tag:yaml.org,2002:null", re.compile(r"^$"), [""])
SpecLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)


def load_documents(text: str) -> list[Any]:
    """All documents of a YAML stream; raises ``yaml.YAMLError`` on bad syntax."""
    return list(yaml.load_all(text, Loader=SpecLoader))


def compose_documents(text: str) -> list[yaml.Node | None]:
    """The node trees (with positions) of every document; only called for files with errors."""
    return list(yaml.compose_all(text, Loader=SpecLoader))


def dump_document(value: Any) -> str:
    return yaml.safe_dump(value, sort_keys=False, allow_unicode=True)
