"""What the mapper says about a job (notes, or why it cannot map at all), and its options.

A ``Note`` becomes a YAML comment above ``path`` in the written spec and a line of the import
report, so what did not map is visible both where the user edits and in the summary.
"""

from __future__ import annotations

from dataclasses import dataclass, field

SpecPath = tuple[str, ...]


@dataclass(frozen=True)
class Note:
    source: str
    """The OpenClaw field (``payload.thinking``, ``delivery.threadId`` ...)."""
    message: str
    path: SpecPath = ("spec",)
    """Where in the written document the comment goes (the key it sits above)."""
    placeholder: bool = False
    """True when the spec holds a made-up value the user must replace."""


@dataclass
class Notes:
    items: list[Note] = field(default_factory=list)

    def add(self, source: str, message: str, path: SpecPath = ("spec",),
            placeholder: bool = False) -> None:
        self.items.append(Note(source, message, path, placeholder))


class Unmappable(ValueError):
    """The job cannot become a valid spec; the message says why (it is reported, not dropped)."""


@dataclass(frozen=True)
class MapOptions:
    default_timezone: str = "UTC"
    agent_endpoint: str = "http://localhost:11434/v1"
    agent_model: str = "replace-me"
