"""``reconciler migrate PATH... [--write]``: upgrade old spec spellings, comments kept.

Like ``black --check``: without ``--write`` it prints a unified diff of what would change and
exits 1 when anything would (0 when every file is already current); with ``--write`` it rewrites
the files atomically and exits 0. A file that cannot be read or parsed is reported as
``file:line:col: message`` and makes the exit code 1; a missing path is a usage error (2).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from reconciler.cli.common import add_format, print_json
from reconciler.errors import SpecLoadError, UsageError
from reconciler.sources.migrate_files import (
    FileMigration,
    MigrateFileError,
    discover,
    plan_file,
    write_atomically,
)


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "migrate",
        help="upgrade old spellings of specs to reconciler.dev/v1 (comments kept)",
        description=(
            "Upgrade old spellings of specs. Without --write: print a unified diff and exit 1 "
            "if anything would change, 0 if nothing would. With --write: rewrite the files."
        ),
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="spec files or directories")
    parser.add_argument("--write", action="store_true", help="rewrite the files in place")
    add_format(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    try:
        files = discover(args.paths)
    except SpecLoadError as exc:
        raise UsageError(str(exc)) from exc
    plans: list[FileMigration] = []
    errors: list[dict[str, Any]] = []
    for path in files:
        try:
            plans.append(plan_file(path))
        except MigrateFileError as exc:
            errors.append(_error_json(exc))
    written = _write(plans) if args.write else []
    if args.format == "json":
        print_json(_as_json(plans, errors, args.write, written))
    else:
        _print_text(plans, errors, args.write)
    pending = any(plan.changed for plan in plans) and not args.write
    return 1 if errors or pending else 0


def _write(plans: list[FileMigration]) -> list[str]:
    written = []
    for plan in plans:
        if plan.changed:
            write_atomically(Path(plan.file), plan.migrated)
            written.append(plan.file)
    return written


def _error_json(exc: MigrateFileError) -> dict[str, Any]:
    return {"file": exc.file, "line": exc.line, "column": exc.column, "message": exc.problem}


def _as_json(plans: list[FileMigration], errors: list[dict[str, Any]], write: bool,
             written: list[str]) -> dict[str, Any]:
    return {
        "write": write,
        "changed": any(plan.changed for plan in plans),
        "files": [
            {"file": plan.file, "changed": plan.changed, "steps": sorted(set(plan.steps)),
             "written": plan.file in written, "diff": plan.diff() if plan.changed else ""}
            for plan in plans
        ],
        "errors": errors,
    }


def _print_text(plans: list[FileMigration], errors: list[dict[str, Any]], write: bool) -> None:
    changed = [plan for plan in plans if plan.changed]
    for plan in changed:
        if not write:
            sys.stdout.write(plan.diff())
        verb = "migrated" if write else "would migrate"
        print(f"{verb} {plan.file} ({', '.join(sorted(set(plan.steps)))})", file=sys.stderr)
    for error in errors:
        where = ":".join(str(error[k]) for k in ("file", "line", "column") if error[k] is not None)
        print(f"{where}: {error['message']}", file=sys.stderr)
    verb = "migrated" if write else "would be migrated"
    print(f"{len(changed)} files {verb}, {len(plans) - len(changed)} unchanged, "
          f"{len(errors)} errors", file=sys.stderr)
