"""Options and output helpers shared by the commands."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

DEFAULT_SPECS = "./specs"
DEFAULT_STATE = "./.reconciler"


def add_format(parser: argparse.ArgumentParser, *extra: str) -> None:
    choices = ["text", "json", *extra]
    parser.add_argument(
        "--format", choices=choices, default="text",
        help="output format (default text, for people; json is stable and documented)",
    )


def add_state(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--state", default=DEFAULT_STATE,
        help=f"state directory (default {DEFAULT_STATE})",
    )


def print_json(payload: Any) -> None:
    # One write: json.dump to a stream issues a write per token, slow for big reports.
    sys.stdout.write(json.dumps(payload, indent=2, sort_keys=False, ensure_ascii=False) + "\n")
