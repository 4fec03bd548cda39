"""``reconciler migrate``: run the spec migrations on files, keeping comments, order and quotes.

The loader upgrades old spellings in memory (on the fast C-parsed dicts); this module runs the
same ``STEPS`` on a ruamel.yaml round-trip tree, so a rewritten file keeps its comments, key
order and quoting, and only the migrated values change. ruamel is slow, which is fine here:
migrating is a one-off, never the hot path. Files are rewritten atomically (a temporary file in
the same directory, fsync, rename) with the original file's mode.
"""

from __future__ import annotations

import difflib
import io
import os
import re
import tempfile
from collections.abc import MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from reconciler.errors import SpecLoadError
from reconciler.sources.loader import discover
from reconciler.sources.spec_migrations import upgrade_document

__all__ = ["FileMigration", "MigrateFileError", "discover", "migrate_text", "plan_file",
           "write_atomically"]
# Comments and blank lines before a leading "---": ruamel drops them, so they are kept aside.
_PREAMBLE = re.compile(r"\A((?:[ \t]*#[^\n]*\n|[ \t]*\n)*)(?=---)")


class MigrateFileError(SpecLoadError):
    """A file cannot be read or is not valid YAML; carries the position for
    ``file:line:col: message`` output."""

    def __init__(self, file: str, line: int | None, column: int | None, message: str) -> None:
        where = ":".join(str(part) for part in (file, line, column) if part is not None)
        super().__init__(f"{where}: {message}")
        self.file, self.line, self.column, self.problem = file, line, column, message


@dataclass(frozen=True)
class FileMigration:
    """One file before and after the chain, and which steps applied (in document order)."""

    file: str
    original: str
    migrated: str
    steps: tuple[str, ...]

    @property
    def changed(self) -> bool:
        return self.original != self.migrated

    def diff(self) -> str:
        # git-style a/ b/ prefixes only make sense for relative paths
        old, new = (self.file, self.file) if Path(self.file).is_absolute() else (
            f"a/{self.file}", f"b/{self.file}")
        lines = difflib.unified_diff(
            self.original.splitlines(keepends=True), self.migrated.splitlines(keepends=True),
            fromfile=old, tofile=new,
        )
        return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def guess_indent(text: str) -> tuple[int, int, int]:
    """(mapping indent, sequence indent, dash offset) as the file already writes them."""
    mapping: int | None = None
    parent_indent: int | None = None
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        indent = len(line) - len(line.lstrip(" "))
        if parent_indent is not None and indent > parent_indent:
            if stripped.startswith("- "):
                offset = indent - parent_indent
                return mapping or 2, offset + 2, offset
            mapping = mapping or indent - parent_indent
        parent_indent = indent if stripped.endswith(":") and not stripped.startswith("- ") else None
    return mapping or 2, (mapping or 2), 0


def _round_trip(text: str) -> YAML:
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 4096  # never re-wrap long lines: only migrated values may change
    mapping, sequence, offset = guess_indent(text)
    yaml.indent(mapping=mapping, sequence=sequence, offset=offset)
    yaml.explicit_start = _PREAMBLE.match(text) is not None
    return yaml


def migrate_text(text: str, file: str = "<string>") -> tuple[str, list[str]]:
    """The text with every document upgraded, and the steps that applied; unchanged text
    (byte for byte) when no step applied. Raises ``MigrateFileError`` on bad YAML."""
    yaml = _round_trip(text)
    try:
        documents = list(yaml.load_all(text))
    except YAMLError as exc:
        raise _syntax_error(file, exc) from exc
    applied: list[str] = []
    for document in documents:
        if isinstance(document, MutableMapping):
            applied.extend(upgrade_document(document))
    if not applied:
        return text, []
    preamble = _PREAMBLE.match(text)
    out = io.StringIO()
    out.write(preamble.group(1) if preamble else "")
    yaml.dump_all(documents, out)
    return out.getvalue(), applied


def _syntax_error(file: str, exc: YAMLError) -> MigrateFileError:
    mark: Any = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    line = mark.line + 1 if mark is not None else None
    column = mark.column + 1 if mark is not None else None
    return MigrateFileError(file, line, column, f"YAML syntax error: {problem}")


def plan_file(path: Path) -> FileMigration:
    """What migrating ``path`` would change; ``MigrateFileError`` if unreadable or bad YAML."""
    file = str(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise MigrateFileError(file, None, None, f"cannot read the file: {exc}") from exc
    crlf = "\r\n" in text  # keep Windows line endings as they are
    migrated, steps = migrate_text(text.replace("\r\n", "\n") if crlf else text, file)
    if crlf and steps:
        migrated = migrated.replace("\n", "\r\n")
    return FileMigration(file, text, migrated if steps else text, tuple(steps))


def write_atomically(path: Path, text: str) -> None:
    """Replace ``path`` with ``text``: temp file in the same directory, fsync, rename; the
    file keeps its permission bits (a symlink: its target is replaced). A crash leaves either
    the old or the new file."""
    path = path.resolve()
    mode = path.stat().st_mode & 0o7777
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.",
                                             suffix=".tmp")
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
