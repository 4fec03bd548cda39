"""What validation reports: an error or warning with its place in a spec file."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Diagnostic:
    """One problem, placed as precisely as we know: ``file:line:column``, job and field path."""

    severity: Severity
    message: str
    file: str | None = None
    line: int | None = None
    column: int | None = None
    job: str | None = None
    path: str | None = None

    @property
    def place(self) -> str:
        if self.file is None:
            return "<input>"
        if self.line is None:
            return self.file
        return f"{self.file}:{self.line}:{self.column or 1}"

    def render(self) -> str:
        """``file:line:col: severity: message`` with the job and field path when known."""
        context = []
        if self.job:
            context.append(f"job {self.job}")
        if self.path:
            context.append(self.path)
        where = f" [{', '.join(context)}]" if context else ""
        return f"{self.place}: {self.severity}: {self.message}{where}"

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "job": self.job,
            "path": self.path,
            "message": self.message,
        }


@dataclass(frozen=True)
class Finding:
    """A problem found by a pure check, placed by document and field path; the loader adds
    the file position. ``line_offset`` points inside a multi-line value (a template)."""

    severity: Severity
    document: int
    path: tuple[str | int, ...]
    message: str
    line_offset: int = 0
    column_hint: int | None = None


def dotted(path: tuple[str | int, ...]) -> str:
    """``("spec", "run", "command", 2)`` -> ``spec.run.command[2]``."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else part
    return text
