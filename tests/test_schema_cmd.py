"""`reconciler schema`: the JSON Schema editors use, generated from the models and committed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from reconciler.cli import main
from reconciler.model.jsonschema import combined_schema, kind_schema, walk
from reconciler.sources.yamlio import load_documents

ROOT = Path(__file__).resolve().parent.parent
SCHEMA_FILE = ROOT / "schemas" / "reconciler.schema.json"
EXAMPLES = ROOT / "specs" / "examples"
REFRESH = "reconciler schema > schemas/reconciler.schema.json"


def _example_documents() -> list[tuple[str, dict[str, Any]]]:
    return [
        (f"{path.relative_to(ROOT)}#{index}", document)
        for path in sorted(EXAMPLES.rglob("*.yaml"))
        for index, document in enumerate(load_documents(path.read_text()))
        if document is not None
    ]


def _job(**spec: Any) -> dict[str, Any]:
    body = {"schedule": {"every": "5m"}, "run": {"command": ["true"]}, **spec}
    return {"apiVersion": "reconciler.dev/v1", "kind": "ScheduledJob",
            "metadata": {"name": "a-job"}, "spec": body}


def _validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(combined_schema())


def test_committed_schema_matches_the_models(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema"]) == 0
    printed = capsys.readouterr().out
    assert SCHEMA_FILE.exists(), f"{SCHEMA_FILE} is missing: run `{REFRESH}`"
    assert SCHEMA_FILE.read_text() == printed, (
        f"schemas/reconciler.schema.json differs from the models: run `{REFRESH}`"
    )


def test_schema_is_valid_draft_2020_12() -> None:
    jsonschema.Draft202012Validator.check_schema(combined_schema())
    for kind in ("ScheduledJob", "Channel"):
        jsonschema.Draft202012Validator.check_schema(kind_schema(kind))


def test_kind_option_prints_one_kind(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", "--kind", "Channel", "--format", "json"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert schema["title"] == "reconciler.dev/v1 Channel"
    assert schema["properties"]["kind"]["const"] == "Channel"


def test_unknown_kind_is_a_usage_error() -> None:
    assert main(["schema", "--kind", "CronJob"]) == 2


@pytest.mark.parametrize(("where", "document"), _example_documents(), ids=lambda v: str(v)[:60])
def test_every_example_matches_the_schema(where: str, document: dict[str, Any]) -> None:
    errors = [f"{list(e.path)}: {e.message}" for e in _validator().iter_errors(document)]
    assert not errors, f"{where}: {errors}"
    per_kind = jsonschema.Draft202012Validator(kind_schema(document["kind"]))
    assert not list(per_kind.iter_errors(document))


def test_every_property_has_a_description() -> None:
    missing: list[str] = []

    def visit(node: dict[str, Any]) -> None:
        if node.get("type") != "object":
            return  # a cross-field rule (oneOf/not branch), not a described object
        for name, prop in (node.get("properties") or {}).items():
            if "description" not in prop and "$ref" not in prop and "const" not in prop:
                missing.append(name)

    for name, definition in combined_schema()["$defs"].items():
        walk(definition, visit)
        assert "description" in definition or "enum" in definition or name in {
            "CatchUp", "ChannelSpec", "JobSpec", "Metadata", "Retry"
        }, f"{name} has no description and is not described where it is used"
    assert not missing, f"properties without a description: {missing}"


def test_defaults_are_written_as_specs_write_them() -> None:
    job_spec = combined_schema()["$defs"]["JobSpec"]["properties"]
    assert job_spec["timeout"]["default"] == "10m"
    assert combined_schema()["$defs"]["FailureAlert"]["properties"]["cooldown"]["default"] == "1h"


@pytest.mark.parametrize("spec", [
    {"failureAlert": False},
    {"schedule": {"cron": "0 * * * *", "stagger": 0}},
    {"timeout": 0},
    {"run": {"command": ["true"], "exitCodes": {"75": "rate_limit"}}},
])
def test_accepted_spellings(spec: dict[str, Any]) -> None:
    assert not list(_validator().iter_errors(_job(**spec)))


@pytest.mark.parametrize("spec", [
    {"schedule": {"timezone": "UTC"}},
    {"schedule": {"cron": "0 * * * *", "every": "5m"}},
    {"run": {"command": ["true"], "shell": "true"}},
    {"timeout": "10 minutes"},
    {"delivery": {"channel": "a", "mode": "none"}},
    {"concurrencyPolicy": "Sometimes"},
    {"unknownField": 1},
    {"failureAlert": {"channel": "a", "webhook": {"url": "http://x"}}},
    {"delivery": {"webhook": {"url": {"fromEnv": "A", "fromFile": "/b"}}}},
])
def test_rejected_specs(spec: dict[str, Any]) -> None:
    assert list(_validator().iter_errors(_job(**spec)))


def test_telegram_needs_token_and_chat_id() -> None:
    spec: dict[str, Any] = {"type": "telegram", "token": {"fromEnv": "T"}}
    channel = {"apiVersion": "reconciler.dev/v1", "kind": "Channel",
               "metadata": {"name": "tg"}, "spec": spec}
    assert list(_validator().iter_errors(channel))
    spec["chatId"] = "42"
    assert not list(_validator().iter_errors(channel))


def test_other_manifests_pass_and_our_group_is_checked() -> None:
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}
    assert not list(_validator().iter_errors(config_map))
    assert list(_validator().iter_errors({**config_map, "apiVersion": "reconciler.dev/v2"}))
    assert list(_validator().iter_errors({**_job(), "kind": "CronJob"}))
