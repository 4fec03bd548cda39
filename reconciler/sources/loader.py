"""Read spec files and directory trees into validated ``ScheduledJob`` and ``Channel`` objects.

The fast path parses every file with the C loader and validates with pydantic; node positions
are computed only for documents that have problems. Documents of other apiVersions (other
Kubernetes manifests in the same repository) are ignored; our apiVersion with an unknown kind
is an error. Every problem becomes a ``Diagnostic`` with file, line, column, job and field path.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from reconciler import API_GROUP, API_VERSION, collector
from reconciler.clock import SystemClock
from reconciler.core.checks import DEFAULT_HORIZON_DAYS, Entry, check_all
from reconciler.errors import SpecLoadError
from reconciler.model.diagnostics import Diagnostic, Finding, Severity, dotted
from reconciler.model.job import KINDS, Channel, ScheduledJob
from reconciler.sources.locate import Locator
from reconciler.sources.schema_errors import schema_problems
from reconciler.sources.spec_migrations import upgrade_document
from reconciler.sources.speccache import ParsedDocument, SpecCache, content_digest
from reconciler.sources.yamlio import load_documents

SPEC_SUFFIXES = (".yaml", ".yml")


@dataclass
class SpecDocument:
    """One YAML document of ours: where it is, what it claims to be, and whether it is valid."""

    file: str
    index: int
    kind: str | None
    name: str | None
    resource: ScheduledJob | Channel | None = None


@dataclass
class LoadResult:
    files: int = 0
    documents: list[SpecDocument] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    file_names: list[str] = field(default_factory=list)

    @property
    def jobs(self) -> list[ScheduledJob]:
        return [d.resource for d in self.documents if isinstance(d.resource, ScheduledJob)]

    @property
    def channels(self) -> list[Channel]:
        return [d.resource for d in self.documents if isinstance(d.resource, Channel)]

    @property
    def job_documents(self) -> int:
        return sum(1 for d in self.documents if d.kind == "ScheduledJob")

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "warning"]

    @property
    def valid(self) -> bool:
        return not self.errors


def discover(paths: Iterable[str]) -> list[Path]:
    """Spec files under ``paths`` (files as given; directories recursively, hidden ones
    skipped), sorted so every run sees them in the same order."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found.extend(sorted(
                p for p in path.rglob("*")
                if p.suffix in SPEC_SUFFIXES and p.is_file()
                and not any(part.startswith(".") for part in p.relative_to(path).parts)
            ))
        elif path.is_file():
            found.append(path)
        else:
            raise SpecLoadError(f"{raw}: no such file or directory")
    return found


class _Loader:
    def __init__(self, now: float, horizon_days: int, cache: SpecCache | None = None) -> None:
        self.now = now
        self.horizon_days = horizon_days
        self.cache = cache
        self.result = LoadResult()
        self.texts: dict[str, str] = {}
        self.locator = Locator()

    def load_file(self, path: Path) -> None:
        file = str(path)
        self.result.files += 1
        self.result.file_names.append(file)
        try:
            content = path.read_bytes()
            text = _decoded(content)
        except (OSError, UnicodeDecodeError) as exc:
            self._report("error", f"cannot read the file: {exc}", file)
            return
        self.texts[file] = text  # a cached file's diagnostics are still placed in its text
        digest = content_digest(content) if self.cache is not None else ""
        documents = self.cache.lookup(digest) if self.cache is not None else None
        if documents is None:
            try:
                documents = _parsed(text)
            except yaml.YAMLError as exc:
                self._yaml_error(file, exc)
                return
            if self.cache is not None:
                self.cache.remember(digest, documents)
        for document in documents:
            self.load_document(file, document)

    def _yaml_error(self, file: str, exc: yaml.YAMLError) -> None:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        context = getattr(exc, "context", None)
        message = f"YAML syntax error: {problem}" + (f" ({context})" if context else "")
        line = mark.line + 1 if mark is not None else None
        column = mark.column + 1 if mark is not None else None
        self.result.diagnostics.append(Diagnostic("error", message, file, line, column))

    def load_document(self, file: str, parsed: ParsedDocument) -> None:
        index, data, migrated = parsed.index, parsed.data, parsed.migrations
        if not isinstance(data, dict):
            self._place("error", file, index, (), None,
                        f"a spec document must be a mapping with apiVersion, kind, metadata "
                        f"and spec (got a {type(data).__name__})")
            return
        api_version, kind = data.get("apiVersion"), data.get("kind")
        name = _name_of(data)
        if not isinstance(api_version, str) or not api_version.startswith(f"{API_GROUP}/"):
            if api_version is None and kind is None:
                self._place("warning", file, index, (), name,
                            "not a manifest (no apiVersion or kind): ignored")
            return  # another tool's manifest
        if api_version != API_VERSION:
            self._place("error", file, index, ("apiVersion",), name,
                        f"unsupported apiVersion {api_version!r}: use {API_VERSION}")
            return
        model = KINDS.get(kind) if isinstance(kind, str) else None
        if model is None:
            self._place("error", file, index, ("kind",), name,
                        f"unknown kind {kind!r} for {API_VERSION}: use one of "
                        f"{', '.join(sorted(KINDS))}")
            return
        document = SpecDocument(file, index, str(kind), name)
        self.result.documents.append(document)
        if migrated:
            self._place("warning", file, index, ("apiVersion",), name,
                        f"old spelling upgraded in memory ({', '.join(migrated)}): run "
                        f"'reconciler migrate --write {file}' to update the file")
        try:
            document.resource = model.model_validate(data)
        except ValidationError as exc:
            for problem in schema_problems(exc, data, model):
                self._place("error", file, index, problem.path, name, problem.message,
                            at_key=problem.at_key)

    def _place(
        self, severity: Severity, file: str, index: int, path: tuple[str | int, ...],
        job: str | None, message: str, at_key: bool = False, line_offset: int = 0,
    ) -> None:
        position, _ = self.locator.locate(file, self.texts.get(file, ""), index, path, at_key)
        line = column = None
        if position is not None:
            line = position.line + line_offset + (1 if position.block_scalar else 0)
            column = position.column if line_offset == 0 else 1
        self.result.diagnostics.append(
            Diagnostic(severity, message, file, line, column, job, dotted(path) or None)
        )

    def _report(self, severity: Severity, message: str, file: str) -> None:
        self.result.diagnostics.append(Diagnostic(severity, message, file))

    def cross_check(self) -> None:
        self._duplicates()
        valid = [d for d in self.result.documents if d.resource is not None]
        entries = [Entry(position, d.resource) for position, d in enumerate(valid)
                   if d.resource is not None]
        for finding in check_all(entries, self.now, self.horizon_days):
            self._finding(valid[finding.document], finding)

    def _finding(self, document: SpecDocument, finding: Finding) -> None:
        self._place(finding.severity, document.file, document.index, finding.path,
                    document.name, finding.message, line_offset=finding.line_offset)
        if finding.severity == "error" and finding.path[:1] != ("metadata",):
            document.resource = None

    def _duplicates(self) -> None:
        seen: dict[tuple[str, str], list[SpecDocument]] = {}
        for document in self.result.documents:
            if document.resource is not None and document.name is not None:
                seen.setdefault((str(document.kind), document.name), []).append(document)
        for (kind, name), documents in seen.items():
            if len(documents) < 2:
                continue
            places = [self._where(d) for d in documents]
            for document, place in zip(documents, places, strict=True):
                others = ", ".join(p for p in places if p != place)
                self._place("error", document.file, document.index, ("metadata", "name"), name,
                            f"duplicate {kind} name {name!r}: also defined at {others}; "
                            f"names must be unique")
                document.resource = None

    def _where(self, document: SpecDocument) -> str:
        text = self.texts.get(document.file, "")
        position, _ = self.locator.locate(document.file, text, document.index,
                                          ("metadata", "name"))
        return f"{document.file}:{position.line}" if position else document.file


def _decoded(content: bytes) -> str:
    """``content`` as ``Path.read_text`` decodes it (UTF-8, universal newlines), so line
    numbers and decode errors read the same whether or not a cache is in use."""
    return io.TextIOWrapper(io.BytesIO(content), encoding="utf-8").read()


def _parsed(text: str) -> list[ParsedDocument]:
    """The non-empty documents of a file, old spellings upgraded (in place, in memory)."""
    return [ParsedDocument(index, data, upgrade_document(data) if isinstance(data, dict) else [])
            for index, data in enumerate(load_documents(text)) if data is not None]


def _name_of(data: dict[str, Any]) -> str | None:
    metadata = data.get("metadata")
    name = metadata.get("name") if isinstance(metadata, dict) else None
    return name if isinstance(name, str) else None


def load_paths(
    paths: Sequence[str], now: float | None = None, horizon_days: int = DEFAULT_HORIZON_DAYS,
    cache: SpecCache | None = None,
) -> LoadResult:
    """Load and fully validate every spec under ``paths``.

    Raises ``SpecLoadError`` only when a path does not exist; every problem inside the files
    is reported as a diagnostic, and only documents without errors appear in ``jobs`` and
    ``channels``. With a ``cache``, files whose content it holds are not parsed again (and
    the files parsed are added to it); the result is the same either way.
    """
    loader = _Loader(SystemClock().now() if now is None else now, horizon_days, cache)
    with collector.paused():
        for path in discover(paths):
            loader.load_file(path)
        loader.cross_check()
    loader.result.diagnostics.sort(
        key=lambda d: (d.file or "", d.line or 0, d.column or 0, d.severity)
    )
    return loader.result
