"""``reconciler schema [--kind K]``: the JSON Schema of the spec kinds, for editors and CI.

The committed ``schemas/reconciler.schema.json`` is this command's output; refresh it with
``reconciler schema > schemas/reconciler.schema.json``.
"""

from __future__ import annotations

import argparse
from typing import Any

from reconciler.cli.common import add_format, print_json
from reconciler.model.job import KINDS
from reconciler.model.jsonschema import spec_schema

SCHEMA_FILE = "schemas/reconciler.schema.json"


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "schema",
        help="print the JSON Schema of the spec kinds (for yaml-language-server and CI)",
        description=(
            "Print the JSON Schema (draft 2020-12) of the spec kinds, generated from the "
            "models. Without --kind, one schema accepts any spec file: documents of "
            f"reconciler.dev are checked by kind, other manifests pass. Committed as {SCHEMA_FILE}."
        ),
    )
    parser.add_argument("--kind", choices=list(KINDS), help="only this kind's schema")
    # The schema is JSON either way; --format is accepted like on every command.
    add_format(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    print_json(spec_schema(args.kind))
    return 0
