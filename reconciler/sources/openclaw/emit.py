"""Write imported specs: one readable YAML file per job and per Channel, with comments.

Written with ruamel.yaml so each note sits as a comment right above the key it is about. Files
go to ``OUT/jobs/<name>.yaml`` and ``OUT/channels/<name>.yaml``; jobs that could not be mapped
are kept verbatim in ``OUT/openclaw-unmapped.json`` (the loader reads only .yaml files).
An existing file with different content is not overwritten unless ``force`` is given.
"""

from __future__ import annotations

import io
import json
import textwrap
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq

from reconciler.errors import SpecLoadError
from reconciler.sources.openclaw.importer import ImportedJob, ImportResult
from reconciler.sources.openclaw.notes import Note

UNMAPPED_FILE = "openclaw-unmapped.json"
_WIDTH = 96


def _tree(value: Any) -> Any:
    """Plain dicts and lists as ruamel nodes (short lists of scalars in flow style)."""
    if isinstance(value, dict):
        node = CommentedMap()
        for key, item in value.items():
            node[key] = _tree(item)
        return node
    if isinstance(value, list):
        sequence = CommentedSeq(_tree(item) for item in value)
        if all(not isinstance(item, dict | list) for item in value):
            sequence.fa.set_flow_style()
        return sequence
    return value


def _wrap(lines: Iterable[str], indent: int) -> str:
    wrapped: list[str] = []
    for line in lines:
        wrapped.extend(textwrap.wrap(line, _WIDTH - indent - 2, break_on_hyphens=False) or [""])
    return "\n".join(wrapped)


def render(document: dict[str, Any], header: list[str], notes: list[Note]) -> str:
    """The YAML text of ``document``: ``header`` on top, each note above its key."""
    root = _tree(document)
    by_path: dict[tuple[str, ...], list[str]] = {}
    for note in notes:
        by_path.setdefault(note.path, []).append(note.message)
    for path, messages in by_path.items():
        parent = root
        for key in path[:-1]:
            parent = parent[key]
        if path[-1] in parent:
            indent = 2 * (len(path) - 1)
            parent.yaml_set_comment_before_after_key(
                path[-1], before=_wrap(dict.fromkeys(messages), indent), indent=indent)
    if header:
        root.yaml_set_start_comment(_wrap(header, 0))
    yaml = YAML(typ="rt")
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=4, offset=2)
    out = io.StringIO()
    yaml.dump(root, out)
    return out.getvalue()


def _job_header(job: ImportedJob, store: str) -> list[str]:
    header = [f"Imported from OpenClaw ({store}): job {job.openclaw_id!r}, "
              f"named {job.openclaw_name!r}."]
    if job.normalised:
        header.append("Legacy shapes normalised first: " + ", ".join(job.normalised) + ".")
    return header


def planned_files(result: ImportResult, out: Path) -> dict[Path, str]:
    """Every file the import writes, with its content."""
    files: dict[Path, str] = {}
    store = str(result.store.path)
    for job in result.jobs:
        if job.document is not None:
            files[out / "jobs" / f"{job.name}.yaml"] = render(
                job.document, _job_header(job, store), job.notes)
    for name, document, comments in result.channels:
        files[out / "channels" / f"{name}.yaml"] = render(document, comments, [])
    if result.unmapped:
        files[out / UNMAPPED_FILE] = json.dumps(
            [{"id": job.openclaw_id, "name": job.openclaw_name, "reason": job.error,
              "job": job.raw} for job in result.unmapped],
            indent=2, ensure_ascii=False) + "\n"
    return files


def write_files(files: dict[Path, str], force: bool) -> None:
    """Write ``files``; ``SpecLoadError`` (before writing anything) if one would overwrite a
    different existing file and ``force`` is not set."""
    conflicts = [path for path, text in files.items()
                 if path.exists() and path.read_text(encoding="utf-8") != text]
    if conflicts and not force:
        listed = ", ".join(str(path) for path in conflicts[:5])
        raise SpecLoadError(f"{len(conflicts)} files exist with other content ({listed}): "
                            "import into an empty directory, or pass --force to overwrite")
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
