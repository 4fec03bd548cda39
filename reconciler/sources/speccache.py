"""The parse cache of spec files: a daemon restart re-parses only the files that changed.

Parsing YAML (and upgrading old spellings) is most of what loading a large spec tree costs;
validating the result is cheap by comparison. So the cache keeps, per file content digest,
each document's *plain data after* ``upgrade_document`` and the names of the migration steps
that applied, never validated objects: validation against the current model, the diagnostics
and every cross-file check (duplicate names, ``check_all``) still run on every load.

Being keyed by the bytes of a file, an entry can never describe other content than the file
now holds, so a stale cache costs a re-parse, never a wrong job. A cache written by another
cache format or another chain of spec migrations is ignored as a whole. Only files whose data
is exactly JSON (mappings with string keys, lists, strings, finite numbers, booleans, null) are
cached: explicit YAML tags (``!!binary``, ``!!timestamp``), non-string keys or a recursive
alias would not survive the round trip, so such files are simply parsed every time.

The file (``spec-cache.json`` in the state directory) is disposable: one that is missing,
truncated or from another version counts as empty, and deleting it costs one full parse.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reconciler.sources.spec_migrations import STEPS

# Bump when what a cached document means changes without the migration chain changing: the
# entry layout here, or what ``yamlio`` parses a document to.
CACHE_FORMAT = 1
CACHE_FILE = "spec-cache.json"  # the daemon keeps it in its state directory

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ParsedDocument:
    """One non-empty YAML document of a file, parsed and upgraded but not validated."""

    index: int  # its position in the file's stream (empty documents count)
    data: Any
    migrations: list[str]  # the names of the upgrade steps that applied, in order


def content_digest(content: bytes) -> str:
    return hashlib.blake2b(content, digest_size=20).hexdigest()


def _fingerprint() -> dict[str, Any]:
    """What a cache file must have been written by for its entries to be used."""
    return {"format": CACHE_FORMAT, "migrations": [step.name for step in STEPS]}


def is_plain_json(value: Any) -> bool:
    """True when ``value`` is exactly what ``json.loads`` could return: dicts with ``str``
    keys, lists, ``str``, ``int``, finite ``float``, ``bool`` and ``None``, exact types only.

    Iterative, so deep nesting cannot exhaust the stack; a container met twice (a YAML alias)
    is checked once, which also ends the walk of a recursive alias (``json.dumps`` rejects
    those)."""
    pending = [value]
    seen: set[int] = set()
    while pending:
        item = pending.pop()
        kind = type(item)
        if kind is str or kind is int or kind is bool or item is None:
            continue
        if kind is float:
            if not math.isfinite(item):
                return False  # NaN and infinities are not JSON
            continue
        if kind is not dict and kind is not list:
            return False
        if id(item) in seen:
            continue
        seen.add(id(item))
        if kind is dict:
            if any(type(key) is not str for key in item):
                return False
            pending.extend(item.values())
        else:
            pending.extend(item)
    return True


def _encode(documents: Sequence[ParsedDocument]) -> str | None:
    """The documents as one JSON text, or None when they are not exactly JSON."""
    rows = [[d.index, d.data, d.migrations] for d in documents]
    if not is_plain_json(rows):
        return None
    try:
        return json.dumps(rows, allow_nan=False, separators=(",", ":"))
    except (ValueError, RecursionError):
        return None  # a recursive alias, or nesting deeper than json can write


def _decode(payload: str) -> list[ParsedDocument] | None:
    """The documents of a payload, or None if it is not one ``_encode`` wrote (a damaged or
    hand-edited cache file)."""
    try:
        documents = [ParsedDocument(index, data, migrations)
                     for index, data, migrations in json.loads(payload)]
    except (ValueError, TypeError):
        return None
    if not all(type(d.index) is int and type(d.migrations) is list
               and all(type(name) is str for name in d.migrations) for d in documents):
        return None
    return documents


class SpecCache:
    """Parsed documents by file content digest.

    Entries are held as JSON text and decoded afresh on every hit: ``upgrade_document`` and
    validation may change or keep a reference to the data they are given, and the next load
    must not see that. Entries that no load asked for since the last ``prune`` (files that
    changed or went away) are dropped by it.
    """

    def __init__(self, entries: dict[str, str] | None = None) -> None:
        self._entries: dict[str, str] = dict(entries or {})
        self._used: set[str] = set()
        self.changed = False  # since it was read or last written

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, digest: object) -> bool:
        return digest in self._entries

    def lookup(self, digest: str) -> list[ParsedDocument] | None:
        payload = self._entries.get(digest)
        documents = None if payload is None else _decode(payload)
        if documents is not None:
            self._used.add(digest)  # a damaged entry goes at the next prune
        return documents

    def remember(self, digest: str, documents: Sequence[ParsedDocument]) -> None:
        """Keep ``documents`` (call it before they are validated); a file whose data is not
        exactly JSON is not kept."""
        payload = _encode(documents)
        if payload is None:
            return
        self._used.add(digest)
        if self._entries.get(digest) != payload:
            self._entries[digest] = payload
            self.changed = True

    def prune(self) -> None:
        """Drop every entry not used since the last prune: after a load of the whole tree,
        the entries of files that were edited or deleted."""
        unused = self._entries.keys() - self._used
        for digest in unused:
            del self._entries[digest]
        self.changed = self.changed or bool(unused)
        self._used = set()

    @classmethod
    def read(cls, path: Path) -> SpecCache:
        """The cache saved at ``path``; empty if it is missing, unreadable or foreign."""
        try:
            saved = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:  # missing, truncated, not JSON, not UTF-8
            _log.debug("spec cache %s not used: %s", path, exc)
            return cls()
        if not isinstance(saved, dict) or saved.get("version") != _fingerprint():
            _log.debug("spec cache %s not used: written by another version", path)
            return cls()
        entries = saved.get("files")
        if not isinstance(entries, dict) or not all(
                isinstance(payload, str) for payload in entries.values()):
            _log.debug("spec cache %s not used: not a cache file", path)
            return cls()
        return cls(entries)

    def write(self, path: Path) -> None:
        """Replace the file at ``path`` atomically; the directory must exist. ``mkstemp``
        creates it 0600. Not fsynced: after a crash a lost or torn cache means a full parse."""
        handle, temporary = tempfile.mkstemp(prefix=".spec-cache-", dir=path.parent)
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as stream:
                json.dump({"version": _fingerprint(), "files": self._entries}, stream,
                          separators=(",", ":"))
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        self.changed = False
