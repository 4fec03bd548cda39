"""`reconciler crd`: the committed CRDs match the models, are structural, and accept exactly the
examples that `validate` accepts (and reject what it rejects, where a CRD can say so)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from reconciler.cli import main
from reconciler.cli.crd_cmd import render_yaml
from reconciler.model.crd import crds, file_name
from reconciler.model.job import KINDS
from reconciler.sources.loader import load_paths
from reconciler.sources.yamlio import load_documents

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "specs" / "examples"

# Keywords a structural schema may use (OpenAPI v3.0 subset plus Kubernetes extensions).
ALLOWED = {
    "type", "description", "properties", "required", "items", "additionalProperties", "enum",
    "pattern", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
    "minLength", "maxLength", "minItems", "maxItems", "nullable", "oneOf", "anyOf", "allOf",
    "not", "x-kubernetes-preserve-unknown-fields", "x-kubernetes-int-or-string",
    "x-kubernetes-list-type", "x-kubernetes-list-map-keys",
}
TYPES = {"object", "array", "string", "integer", "number", "boolean"}
# Inside a logical junctor only value validations may appear (no type, description, ...).
FORBIDDEN_IN_JUNCTORS = {"type", "description", "default", "additionalProperties", "nullable",
                         "x-kubernetes-preserve-unknown-fields", "x-kubernetes-int-or-string"}
JUNCTORS = ("oneOf", "anyOf", "allOf", "not")


def _schema(kind: str) -> dict[str, Any]:
    (document,) = crds(kind)
    schema: dict[str, Any] = document["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    return schema


def _structural_problems(node: dict[str, Any], path: str, problems: list[str]) -> None:
    unknown = set(node) - ALLOWED
    if unknown:
        problems.append(f"{path}: keywords a structural schema does not allow: {unknown}")
    open_value = node.get("x-kubernetes-preserve-unknown-fields") or node.get(
        "x-kubernetes-int-or-string")
    if "type" not in node and not open_value:
        problems.append(f"{path}: no type (and not preserve-unknown-fields/int-or-string)")
    if "type" in node and node["type"] not in TYPES:
        problems.append(f"{path}: type {node['type']!r} is not one OpenAPI type")
    if node.get("x-kubernetes-int-or-string") and "type" in node:
        problems.append(f"{path}: int-or-string must not set a type")
    if node.get("additionalProperties") is False:
        problems.append(f"{path}: additionalProperties: false is not allowed")
    if "properties" in node and "additionalProperties" in node:
        problems.append(f"{path}: properties and additionalProperties are exclusive")
    for junctor in JUNCTORS:
        for branch in _branches(node.get(junctor)):
            _junctor_problems(branch, f"{path}.{junctor}", problems)
    for name, child in (node.get("properties") or {}).items():
        _structural_problems(child, f"{path}.{name}", problems)
    for key in ("items", "additionalProperties"):
        if isinstance(node.get(key), dict):
            _structural_problems(node[key], f"{path}.{key}", problems)


def _branches(value: Any) -> list[dict[str, Any]]:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def _junctor_problems(node: dict[str, Any], path: str, problems: list[str]) -> None:
    found = FORBIDDEN_IN_JUNCTORS & set(node)
    if found:
        problems.append(f"{path}: {found} inside a logical junctor")
    for child in (node.get("properties") or {}).values():
        _junctor_problems(child, path, problems)
    for junctor in JUNCTORS:
        for branch in _branches(node.get(junctor)):
            _junctor_problems(branch, path, problems)


def _as_draft4(node: Any) -> Any:
    """OpenAPI v3.0 -> JSON Schema draft 4 for the `jsonschema` library: Kubernetes keywords
    dropped (preserve-unknown and int-or-string nodes then accept any value, like the API
    server does), `nullable: true` turned into a null type."""
    if isinstance(node, list):
        return [_as_draft4(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _as_draft4(value) for key, value in node.items()
           if not key.startswith("x-kubernetes-") and key != "nullable"}
    if node.get("x-kubernetes-int-or-string"):
        out["type"] = ["integer", "string"]
    if node.get("nullable") and "type" in out:
        out["type"] = [*_types(out["type"]), "null"]
    return out


def _types(value: Any) -> list[str]:
    return value if isinstance(value, list) else [value]


def _crd_errors(document: dict[str, Any]) -> list[str]:
    # kubectl sends JSON: integer map keys (exitCodes) become strings.
    as_json = json.loads(json.dumps(document))
    validator = jsonschema.Draft4Validator(_as_draft4(_schema(document["kind"])))
    return [f"{list(e.path)}: {e.message}" for e in validator.iter_errors(as_json)]


def _example_documents() -> list[tuple[str, dict[str, Any]]]:
    return [
        (f"{path.relative_to(ROOT)}#{index}", document)
        for path in sorted(EXAMPLES.rglob("*.yaml"))
        for index, document in enumerate(load_documents(path.read_text()))
        if document is not None
    ]


@pytest.mark.parametrize("kind", list(KINDS))
def test_committed_crds_match_the_models(kind: str) -> None:
    path = ROOT / "crds" / file_name(kind)
    refresh = f"reconciler crd --kind {kind} > crds/{file_name(kind)}"
    assert path.exists(), f"{path} is missing: run `{refresh}`"
    assert path.read_text() == render_yaml(kind), (
        f"crds/{file_name(kind)} differs from what the models generate: run `{refresh}`"
    )


def test_cli_prints_every_crd(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["crd"]) == 0
    documents = list(yaml.safe_load_all(capsys.readouterr().out))
    assert [d["spec"]["names"]["kind"] for d in documents] == list(KINDS)
    assert main(["crd", "--kind", "Channel", "--format", "json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed["kind"] == "List"
    assert [item["metadata"]["name"] for item in listed["items"]] == ["channels.reconciler.dev"]


@pytest.mark.parametrize("kind", list(KINDS))
def test_schemas_are_structural(kind: str) -> None:
    schema = _schema(kind)
    assert "$ref" not in json.dumps(schema) and "$defs" not in json.dumps(schema)
    problems: list[str] = []
    _structural_problems(schema, "openAPIV3Schema", problems)
    assert not problems, "\n".join(problems)
    # Only restrictions on metadata.name are allowed in the metadata schema.
    metadata = schema["properties"]["metadata"]
    assert set(metadata) == {"type", "properties"} and set(metadata["properties"]) == {"name"}


def test_structural_checker_catches_violations() -> None:
    problems: list[str] = []
    bad = {"type": "object", "properties": {
        "a": {"anyOf": [{"type": "string"}, {"type": "object"}]},
        "b": {"$ref": "#/$defs/B"},
        "c": {"type": "object", "additionalProperties": False},
    }}
    _structural_problems(bad, "root", problems)
    assert len(problems) >= 4


@pytest.mark.parametrize("kind", list(KINDS))
def test_crd_shape(kind: str) -> None:
    (document,) = crds(kind)
    spec = document["spec"]
    assert document["apiVersion"] == "apiextensions.k8s.io/v1"
    assert spec["group"] == "reconciler.dev" and spec["scope"] == "Namespaced"
    (version,) = spec["versions"]
    assert (version["name"], version["served"], version["storage"]) == ("v1", True, True)
    assert version["subresources"] == {"status": {}}
    assert spec["names"]["categories"] == ["reconciler"]
    assert not {"cj", "sj", "ch"} & set(spec["names"]["shortNames"])
    columns = [c["name"] for c in version["additionalPrinterColumns"]]
    if kind == "ScheduledJob":
        assert columns[:5] == ["Schedule", "Suspended", "Next Run", "Last Status", "Age"]
        status = version["schema"]["openAPIV3Schema"]["properties"]["status"]["properties"]
        assert {"nextRunAt", "lastRunAt", "lastStatus", "consecutiveErrors",
                "conditions"} <= set(status)


def test_pod_template_is_kept_whole() -> None:
    run = _schema("ScheduledJob")["properties"]["spec"]["properties"]["run"]["properties"]
    template = run["kubernetes"]["properties"]["template"]
    assert template == {**template, "type": "object", "x-kubernetes-preserve-unknown-fields": True}


@pytest.mark.parametrize(("where", "document"), _example_documents(), ids=lambda v: str(v)[:60])
def test_examples_are_accepted_by_the_crd(where: str, document: dict[str, Any]) -> None:
    assert not _crd_errors(document), f"{where}: {_crd_errors(document)}"


BROKEN: dict[str, dict[str, Any]] = {
    "no schedule kind": {"schedule": {"timezone": "UTC"}},
    "two schedule kinds": {"schedule": {"cron": "0 9 * * *", "every": "5m"}},
    "two executors": {"run": {"command": ["true"], "shell": "true"}},
    "no executor": {"run": {"env": {"A": "b"}}},
    "duration in words": {"timeout": "10 minutes"},
    "unknown policy": {"concurrencyPolicy": "Sometimes"},
    "list where a map belongs": {"catchUp": ["latest"]},
    "two delivery targets": {"delivery": {"channel": "ops", "mode": "none"}},
    "unknown delivery result": {"delivery": {"mode": "none", "on": ["maybe"]}},
    "zero max concurrent": {"maxConcurrent": 0},
    "too much memory": {"run": {"agent": {"endpoint": "http://x", "model": "m", "prompt": "p",
                                          "memory": 99}}},
}
# Not expressible in a CRD, so checked only by the reconciler: unknown fields (the API server
# prunes them), secret references and failureAlert (they take several types, so they are
# preserve-unknown-fields), cron syntax, zones and channel references.


def _job(name: str = "broken-job", **spec: Any) -> dict[str, Any]:
    body = {"schedule": {"every": "5m"}, "run": {"command": ["true"]}, **spec}
    return {"apiVersion": "reconciler.dev/v1", "kind": "ScheduledJob",
            "metadata": {"name": name}, "spec": body}


@pytest.mark.parametrize("case", list(BROKEN))
def test_schema_errors_of_validate_are_crd_errors(case: str, tmp_path: Path) -> None:
    document = _job(**BROKEN[case])
    spec_file = tmp_path / "job.yaml"
    spec_file.write_text(yaml.safe_dump(document))
    assert load_paths([str(spec_file)]).errors, f"validate accepts {case!r}"
    assert _crd_errors(document), f"the CRD accepts {case!r}"


@pytest.mark.parametrize("document", [
    _job(name="Upper-Case"),
    {"apiVersion": "reconciler.dev/v1", "kind": "Channel", "metadata": {"name": "tg"},
     "spec": {"type": "telegram", "token": {"fromEnv": "T"}}},
    {"apiVersion": "reconciler.dev/v1", "kind": "Channel", "metadata": {"name": "s"},
     "spec": {"type": "slack", "url": {"fromEnv": "U"}, "chatId": "1"}},
], ids=["uppercase name", "telegram without chat id", "chat id on slack"])
def test_names_and_channel_rules_are_crd_errors(document: dict[str, Any]) -> None:
    assert _crd_errors(document)
