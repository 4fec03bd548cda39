"""``reconciler crd [--kind K]``: the CustomResourceDefinitions generated from the models.

The files under ``crds/`` are this command's output, one per kind; refresh them with
``reconciler crd --kind ScheduledJob > crds/reconciler.dev_scheduledjobs.yaml`` and
``reconciler crd --kind Channel > crds/reconciler.dev_channels.yaml``.
"""

from __future__ import annotations

import argparse
from typing import Any

import yaml

from reconciler.cli.common import add_format, print_json
from reconciler.model.crd import crds, file_name
from reconciler.model.job import KINDS


class _Dumper(yaml.SafeDumper):
    """Plain YAML for kubectl and for people: no anchors or aliases."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "crd",
        help="print the Kubernetes CRDs generated from the models (committed under crds/)",
        description=(
            "Print apiextensions.k8s.io/v1 CustomResourceDefinitions for the spec kinds: "
            "YAML documents (text) or a kubectl List (json). Install with "
            "'reconciler crd | kubectl apply -f -' or 'kubectl apply -f crds/'."
        ),
    )
    parser.add_argument("--kind", choices=list(KINDS), help="only this kind's CRD")
    add_format(parser)
    parser.set_defaults(handler=run)


def header(kind: str) -> str:
    """The comment atop each generated document: what made it and how to refresh it."""
    return (
        "# Generated from the reconciler models by `reconciler crd`; do not edit.\n"
        f"# Refresh: reconciler crd --kind {kind} > crds/{file_name(kind)}\n"
    )


def render_yaml(kind: str | None = None) -> str:
    """The YAML stream that ``reconciler crd`` prints (and ``crds/`` holds)."""
    documents = []
    for document in crds(kind):
        body = yaml.dump(document, Dumper=_Dumper, sort_keys=False, width=100,
                         allow_unicode=True, default_flow_style=False)
        documents.append(header(document["spec"]["names"]["kind"]) + body)
    return "---\n".join(documents)


def run(args: argparse.Namespace) -> int:
    if args.format == "json":
        print_json({"apiVersion": "v1", "kind": "List", "items": crds(args.kind)})
    else:
        print(render_yaml(args.kind), end="")
    return 0
