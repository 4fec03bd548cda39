"""Random and mutated YAML through the loader and validator: only clean diagnostics."""

from __future__ import annotations

import copy
import tempfile
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reconciler.cli import main
from reconciler.sources.loader import load_paths

NOW = 1_790_000_000.0
VALID: dict[str, Any] = {
    "apiVersion": "reconciler.dev/v1",
    "kind": "ScheduledJob",
    "metadata": {"name": "fuzzed", "labels": {"team": "data"}},
    "spec": {
        "schedule": {"cron": "0 17 * * 1-5", "timezone": "Asia/Shanghai", "stagger": "5m"},
        "run": {"command": ["echo", "{{ run.id }}"], "env": {"A": "b"}},
        "timeout": "10m",
        "catchUp": {"policy": "latest", "window": "24h"},
        "retry": {"maxAttempts": 3, "backoff": ["30s", "1m"]},
        "delivery": {"webhook": {"url": "http://127.0.0.1:9/", "secret": {"fromEnv": "S"}}},
        "failureAlert": {"after": 2, "cooldown": "1h"},
    },
}

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-10**6, 10**6), st.floats(allow_nan=False),
    st.text(max_size=20), st.sampled_from(["*/0 * * * *", "61 * * * *", "Mars/Olympus",
                                           "{{", "{% if %}", "10 minutes", "-1s", "0", "@daily"]),
)
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)),
    max_leaves=8)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(node, dict):
        for key, child in node.items():
            found += _paths(child, (*prefix, key))
    elif isinstance(node, list):
        for index, child in enumerate(node):
            found += _paths(child, (*prefix, index))
    return found


def _mutate(document: dict[str, Any], data: st.DataObject) -> dict[str, Any]:
    mutated = copy.deepcopy(document)
    for _ in range(data.draw(st.integers(1, 4))):
        paths = [p for p in _paths(mutated) if p]
        if not paths:
            break
        path = data.draw(st.sampled_from(paths))
        parent = mutated
        for part in path[:-1]:
            parent = parent[part]
        action = data.draw(st.sampled_from(["replace", "delete", "add"]))
        if action == "replace":
            parent[path[-1]] = data.draw(values)
        elif action == "delete":
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[data.draw(st.text(min_size=1, max_size=8))] = data.draw(values)
    return mutated


def _check(text: str) -> None:
    with tempfile.TemporaryDirectory() as directory:
        (Path(directory) / "spec.yaml").write_text(text)
        result = load_paths([directory], now=NOW)
        for diagnostic in result.diagnostics:
            assert diagnostic.message
            assert diagnostic.line is None or diagnostic.line >= 1
        assert main(["validate", directory, "--format", "json"]) in (0, 1)


FUZZ = settings(max_examples=150, deadline=None,
                suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(st.data())
def test_mutated_specs_give_only_clean_errors(data: st.DataObject) -> None:
    _check(yaml.safe_dump(_mutate(VALID, data), sort_keys=False))


@FUZZ
@given(st.text(max_size=300))
def test_random_text_gives_only_clean_errors(text: str) -> None:
    _check(text)


@FUZZ
@given(st.data())
def test_damaged_yaml_text_gives_only_clean_errors(data: st.DataObject) -> None:
    text = yaml.safe_dump(VALID, sort_keys=False)
    for _ in range(data.draw(st.integers(1, 5))):
        position = data.draw(st.integers(0, len(text)))
        text = text[:position] + data.draw(st.sampled_from(
            ["", ":", "{", "[", "- ", "\t", "'", '"', "\n  ", "*a", "&a ", "!!python/object "]
        )) + text[position + data.draw(st.integers(0, 3)):]
    _check(text)
