"""The command line: thin. Parse arguments, call runtime/core, print.

Each command lives in its own module exposing ``register(subparsers)``; ``register`` adds a
sub-parser whose ``handler`` default takes the parsed namespace and returns an exit code.
Exit codes: 0 ok, 1 the checked thing is invalid or failed, 2 usage error.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence

from reconciler import __version__
from reconciler.errors import ReconcilerError, UsageError

EXIT_OK = 0
EXIT_INVALID = 1
EXIT_USAGE = 2

# One module per command; each adds its own sub-parser.
COMMAND_MODULES = [
    "reconciler.cli.validate_cmd",
    "reconciler.cli.migrate_cmd",
    "reconciler.cli.import_cmd",
    "reconciler.cli.schema_cmd",
    "reconciler.cli.crd_cmd",
    "reconciler.cli.simulate_cmd",
    "reconciler.cli.plan_cmd",
    "reconciler.cli.status_cmd",
    "reconciler.cli.run_cmd",
    "reconciler.cli.trigger_cmd",
    "reconciler.cli.next_cmd",
]

Handler = Callable[[argparse.Namespace], int]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        raise UsageError(f"{self.prog}: {message}")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="reconciler",
        description="Declarative GitOps job-spec reconciler.",
    )
    parser.add_argument("--version", action="version", version=f"reconciler {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for module_name in COMMAND_MODULES:
        module = importlib.import_module(module_name)
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        handler: Handler | None = getattr(args, "handler", None)
        if handler is None:
            parser.print_help(sys.stderr)
            return EXIT_USAGE
        return handler(args)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except ReconcilerError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INVALID
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (`reconciler status | head`): not an error worth a traceback.
        # Point stdout at devnull so the interpreter's final flush does not fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
