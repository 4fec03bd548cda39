"""``reconciler validate PATH...``: check specs for CI, with ``file:line:col`` errors."""

from __future__ import annotations

import argparse
from datetime import timedelta
from typing import Any

from reconciler.cli.common import add_format, print_json
from reconciler.core.checks import DEFAULT_HORIZON_DAYS
from reconciler.errors import SpecLoadError, UsageError
from reconciler.model.diagnostics import Diagnostic
from reconciler.model.duration import parse_duration
from reconciler.sources.loader import LoadResult, load_paths


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "validate",
        help="check spec files (schema, cron, zones, templates, names, channels)",
        description="Check spec files and directories; exit 0 if valid, 1 if not.",
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="spec files or directories")
    add_format(parser, "github")
    parser.add_argument("--strict", action="store_true", help="treat warnings as errors")
    parser.add_argument(
        "--horizon", type=_horizon, default=DEFAULT_HORIZON_DAYS, metavar="DURATION",
        help="a cron whose next fire is further away is an error (default 1462d: four years "
             "and a day, so February 29th jobs pass)")
    parser.set_defaults(handler=run)


def _horizon(text: str) -> int:
    try:
        days = parse_duration(text) / timedelta(days=1)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc
    if days < 1:
        raise argparse.ArgumentTypeError("the horizon must be at least 1d")
    return int(days)


def run(args: argparse.Namespace) -> int:
    try:
        result = load_paths(args.paths, horizon_days=args.horizon)
    except SpecLoadError as exc:
        raise UsageError(str(exc)) from exc
    valid = result.valid and not (args.strict and result.warnings)
    if args.format == "json":
        print_json(as_json(result, valid))
    elif args.format == "github":
        _print_github(result, valid)
    else:
        _print_text(result, valid)
    return 0 if valid else 1


def as_json(result: LoadResult, valid: bool) -> dict[str, Any]:
    return {
        "valid": valid,
        "files": result.files,
        "jobs": result.job_documents,
        "channels": sum(1 for d in result.documents if d.kind == "Channel"),
        "errors": [d.to_json() for d in result.errors],
        "warnings": [d.to_json() for d in result.warnings],
    }


def _summary(result: LoadResult, valid: bool) -> str:
    counts = f"{result.files} files, {result.job_documents} jobs"
    problems = f"{len(result.errors)} errors, {len(result.warnings)} warnings"
    return f"{'valid' if valid else 'invalid'}: {counts}, {problems}"


def _print_text(result: LoadResult, valid: bool) -> None:
    for diagnostic in result.diagnostics:
        print(diagnostic.render())
    print(_summary(result, valid))


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_annotation(diagnostic: Diagnostic) -> str:
    """A GitHub Actions workflow command that annotates the file in the pull request."""
    properties = []
    if diagnostic.file:
        properties.append(f"file={_escape_property(diagnostic.file)}")
    if diagnostic.line:
        properties.append(f"line={diagnostic.line}")
    if diagnostic.column:
        properties.append(f"col={diagnostic.column}")
    if diagnostic.path:
        properties.append(f"title={_escape_property(diagnostic.path)}")
    message = diagnostic.message + (f" (job {diagnostic.job})" if diagnostic.job else "")
    return f"::{diagnostic.severity} {','.join(properties)}::{_escape_data(message)}"


def _print_github(result: LoadResult, valid: bool) -> None:
    for diagnostic in result.diagnostics:
        print(github_annotation(diagnostic))
    print(_summary(result, valid))
