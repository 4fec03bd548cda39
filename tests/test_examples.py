"""The bundled examples validate cleanly and cover every schedule, executor and channel kind."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel

from reconciler.cli import main
from reconciler.model.enums import ChannelType
from reconciler.model.job import KINDS, Channel, ScheduledJob
from reconciler.model.run import EXECUTOR_KINDS
from reconciler.model.secrets import SecretRef
from reconciler.sources.loader import LoadResult, load_paths
from reconciler.sources.schema_errors import known_keys
from reconciler.sources.yamlio import load_documents

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "specs" / "examples"
SCHEMA = ROOT / "schemas" / "reconciler.schema.json"
MODELINE = re.compile(r"^# yaml-language-server: \$schema=(\S+)$", re.M)


@pytest.fixture(scope="module")
def loaded() -> LoadResult:
    return load_paths([str(EXAMPLES)])


def test_examples_validate_without_errors_or_warnings(loaded: LoadResult) -> None:
    problems = [d.render() for d in loaded.diagnostics]
    assert not problems, "\n".join(problems)
    files = list(EXAMPLES.rglob("*.yaml"))
    assert loaded.files == len(files)
    assert len(loaded.jobs) + len(loaded.channels) == len(loaded.documents)


def test_validate_specs_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--strict", str(ROOT / "specs")]) == 0
    assert "0 errors, 0 warnings" in capsys.readouterr().out


def test_every_schedule_kind_and_variant(loaded: LoadResult) -> None:
    schedules = [job.spec.schedule for job in loaded.jobs]
    crons = [s for s in schedules if s.kind == "cron"]
    everys = [s for s in schedules if s.kind == "every"]
    assert {s.kind for s in schedules} == {"cron", "every", "at"}
    assert any(s.timezone != "UTC" for s in crons), "a cron with a time zone"
    assert any(s.with_seconds for s in crons), "a cron with seconds"
    assert any((s.cron or "").startswith("@") for s in crons), "a cron alias"
    assert any(s.anchor is not None for s in everys), "an anchored interval"
    assert any(s.anchor is None for s in everys), "an interval without anchor"


def test_every_executor_kind(loaded: LoadResult) -> None:
    assert {job.spec.run.kind for job in loaded.jobs} == set(EXECUTOR_KINDS)


def test_every_channel_type(loaded: LoadResult) -> None:
    assert {channel.spec.type for channel in loaded.channels} == set(ChannelType)


def _secret_refs(value: Any) -> list[SecretRef]:
    if isinstance(value, SecretRef):
        return [value]
    if isinstance(value, BaseModel):
        return [ref for name in type(value).model_fields
                for ref in _secret_refs(getattr(value, name))]
    if isinstance(value, dict):
        return [ref for item in value.values() for ref in _secret_refs(item)]
    return []


def test_every_kind_of_secret_reference(loaded: LoadResult) -> None:
    refs = [ref for resource in [*loaded.jobs, *loaded.channels] for ref in _secret_refs(resource)]
    assert {ref.describe().split(":")[0] for ref in refs} == {"env", "file", "secret"}


def test_delivery_and_alert_forms(loaded: LoadResult) -> None:
    deliveries = [job.spec.delivery for job in loaded.jobs if job.spec.delivery is not None]
    assert any(d.channel for d in deliveries)
    assert any(d.webhook is not None and d.webhook.secret is not None for d in deliveries)
    assert any(d.mode == "none" for d in deliveries)
    alerts = [job.spec.failure_alert for job in loaded.jobs if job.spec.failure_alert]
    assert any(a.enabled and a.channel for a in alerts)
    assert any(a.enabled and a.webhook for a in alerts)
    assert any(not a.enabled for a in alerts)


def test_everything_example_shows_every_field() -> None:
    text = (EXAMPLES / "everything.yaml").read_text()
    keys = set().union(*(known_keys(model) for model in KINDS.values()))
    missing = sorted(k for k in keys if not re.search(rf"(^|[\s{{,\"]){re.escape(k)}\"?:", text,
                                                       re.M))
    assert not missing, f"everything.yaml does not show: {missing}"
    kinds = {d["kind"] for d in load_documents(text)}
    assert kinds == {ScheduledJob.__name__, Channel.__name__}


@pytest.mark.parametrize("path", sorted(EXAMPLES.rglob("*.yaml")), ids=lambda p: p.name)
def test_examples_point_editors_at_the_schema(path: Path) -> None:
    match = MODELINE.search(path.read_text())
    assert match, f"{path.name}: add '# yaml-language-server: $schema=<relative path>'"
    assert (path.parent / match.group(1)).resolve() == SCHEMA


@pytest.mark.parametrize("path", sorted(EXAMPLES.rglob("*.yaml")), ids=lambda p: p.name)
def test_examples_mean_the_same_to_yaml_1_1(path: Path) -> None:
    """kubectl reads YAML 1.1, where a bare `on:` key is true: examples must not depend on
    the loader's YAML 1.2 reading to keep their keys."""

    def keys(value: Any) -> Any:
        if isinstance(value, dict):
            return {str(k): keys(v) for k, v in value.items()}
        if isinstance(value, list):
            return [keys(item) for item in value]
        return None

    text = path.read_text()
    assert keys(list(yaml.safe_load_all(text))) == keys(load_documents(text))
