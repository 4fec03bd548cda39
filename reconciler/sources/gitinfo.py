"""The git revision of a spec directory, and fast-forwarding a clone (``--git-url``).

Uses the system ``git``; a directory that is not a work tree simply has no revision.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from reconciler.errors import SpecLoadError

_TIMEOUT = 60.0


def _git(args: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                              timeout=_TIMEOUT, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SpecLoadError(f"git {' '.join(args[:2])} failed: {exc}") from exc


def revision(directory: str | Path) -> str | None:
    """The commit checked out in ``directory``, or None if it is not a git work tree."""
    path = Path(directory)
    if not path.is_dir():
        return None
    try:
        result = _git(["rev-parse", "HEAD"], cwd=path)
    except SpecLoadError:
        return None
    return result.stdout.strip() or None if result.returncode == 0 else None


def clone_or_update(url: str, ref: str, directory: str | Path) -> str:
    """Clone ``url`` at ``ref`` into ``directory``, or fast-forward an existing clone.

    Returns the new revision. A fetch failure or a history that cannot fast-forward raises
    ``SpecLoadError`` and leaves the work tree (the last good specs) as it was."""
    path = Path(directory)
    if not (path / ".git").exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        result = _git(["clone", "--quiet", "--branch", ref, "--single-branch", url, str(path)])
        if result.returncode != 0:
            raise SpecLoadError(f"git clone {url} ({ref}) failed: {result.stderr.strip()}")
    else:
        fetch = _git(["fetch", "--quiet", "origin", ref], cwd=path)
        if fetch.returncode != 0:
            raise SpecLoadError(f"git fetch {ref} failed: {fetch.stderr.strip()}")
        merge = _git(["merge", "--ff-only", "--quiet", "FETCH_HEAD"], cwd=path)
        if merge.returncode != 0:
            raise SpecLoadError(f"cannot fast-forward to origin/{ref}: {merge.stderr.strip()}")
    current = revision(path)
    if current is None:
        raise SpecLoadError(f"{path} is not a git work tree after cloning {url}")
    return current
