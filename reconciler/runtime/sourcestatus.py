"""What the daemon last read from its source: revision, when, and the spec errors (with the
jobs still running their last good spec). Written atomically to ``source.json`` in the state
directory (0600) after every reconcile, read by ``status`` without any lock."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from reconciler.core.timefmt import iso_utc
from reconciler.sources.directory import SourceSnapshot

SOURCE_FILE = "source.json"


def write_source_status(state_dir: Path, snapshot: SourceSnapshot, at: float) -> None:
    payload = {
        "revision": snapshot.revision,
        "reconciledAt": iso_utc(at),
        "files": snapshot.files,
        "jobs": len(snapshot.desired),
        "errors": [d.to_json() for d in snapshot.errors],
        "stalled": snapshot.stalled,
    }
    handle, temporary = tempfile.mkstemp(prefix=".source-", dir=state_dir)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            json.dump(payload, stream, indent=2)
        os.chmod(temporary, 0o600)
        os.replace(temporary, state_dir / SOURCE_FILE)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def read_source_status(state_dir: str | Path) -> dict[str, Any] | None:
    path = Path(state_dir) / SOURCE_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
