"""Engine scenarios, each written as simulate inputs and the expected output.

A scenario file holds ``from``/``until``, ``specs`` (a YAML stream), optional ``outcomes``,
``events`` and extra ``files`` (specs applied by events), and ``expect``: the runs (exact
list, compared on the keys each expected entry names), the skipped occurrences (same), and
selected fields of the final job states. The expected instants were worked out by hand; the
comments in each file show the reasoning.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from reconciler.cli import main

SCENARIOS = sorted((Path(__file__).parent / "scenarios").glob("*.yaml"))


def _stagger_text(name: str, window_ms: int = 300_000) -> str:
    """minutes:seconds(.ms) of the stagger offset, from the rule in DESIGN.md §3.3."""
    offset_ms = int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "big") % window_ms
    minutes, rest = divmod(offset_ms, 60_000)
    seconds, millis = divmod(rest, 1000)
    return f"{minutes:02d}:{seconds:02d}" + (f".{millis:03d}" if millis else "")


SUBSTITUTIONS = {"{offset}": _stagger_text("hourly-report")}


def _substitute(value: Any) -> Any:
    if isinstance(value, str):
        for key, replacement in SUBSTITUTIONS.items():
            value = value.replace(key, replacement)
        return value
    if isinstance(value, list):
        return [_substitute(item) for item in value]
    if isinstance(value, dict):
        return {key: _substitute(item) for key, item in value.items()}
    return value


def simulate(scenario: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str],
             arm_ahead: str = "500ms") -> dict[str, Any]:
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "jobs.yaml").write_text(scenario["specs"])
    for relative, text in (scenario.get("files") or {}).items():
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    argv = ["simulate", "--specs", str(specs), "--from", str(scenario["from"]),
            "--until", str(scenario["until"]), "--format", "json", "--arm-ahead", arm_ahead]
    for key in ("outcomes", "events"):
        if key in scenario:
            path = tmp_path / f"{key}.yaml"
            path.write_text(yaml.safe_dump(scenario[key]))
            argv += [f"--{key}", str(path)]
    code = main(argv)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    result: dict[str, Any] = json.loads(captured.out)
    return result


def _project(actual: list[dict[str, Any]], expected: list[dict[str, Any]]) -> list[Any]:
    """Each actual entry cut to the keys its expected counterpart names."""
    if len(actual) != len(expected):
        return actual
    return [{key: entry.get(key) for key in want} for entry, want in zip(actual, expected,
                                                                           strict=True)]


# Every scenario holds whether on-time runs are decided at their slot or armed ahead of it
# (the daemon's default): arming changes when the work is done, never what is recorded.
@pytest.mark.parametrize("arm_ahead", ["0", "500ms", "7s"])
@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_scenario(path: Path, arm_ahead: str, tmp_path: Path,
                  capsys: pytest.CaptureFixture[str]) -> None:
    scenario = yaml.safe_load(path.read_text())
    expect = _substitute(scenario["expect"])
    result = simulate(scenario, tmp_path, capsys, arm_ahead)
    if "runs" in expect:
        assert _project(result["runs"], expect["runs"]) == expect["runs"], result["runs"]
    if "skipped" in expect:
        assert _project(result["skipped"], expect["skipped"]) == expect["skipped"], \
            result["skipped"]
    if "alerts" in expect:
        assert _project(result["alerts"], expect["alerts"]) == expect["alerts"], \
            result["alerts"]
    for job, fields in (expect.get("final") or {}).items():
        final = result["final"]["jobs"][job]
        assert {key: final[key] for key in fields} == fields


def test_simulate_refuses_an_arm_ahead_over_the_daemons_limit(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    specs = tmp_path / "specs"
    specs.mkdir()
    code = main(["simulate", "--specs", str(specs), "--from", "2026-01-01T00:00:00Z",
                 "--until", "2026-01-01T01:00:00Z", "--arm-ahead", "20s"])
    assert code == 2
    assert "--arm-ahead: invalid value '20s': must be at most 10s" in capsys.readouterr().err
