"""The benchmark harness cannot rot: every scenario runs for about a second at tiny sizes.

The reconciler side always runs; the peers (APScheduler, SQLAlchemy) only where the bench extra
is installed, since CI installs the dev extra alone. Nothing here asserts on timing: this
machine is shared, and the figures belong in BENCHMARKS.md, not in tests.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from bench import fire, firekit, record, report, start
from bench.fire_reconciler import child as reconciler_fire
from bench.harness import ROOT, Rounds, peers_available
from bench.start_seed import seed

peers = pytest.mark.skipif(not peers_available(), reason="bench extra (apscheduler) not installed")

FIRE_KEYS = {"fires_per_s", "keep_up", "p50", "p95", "p99", "max", "cpu_per_1k", "rss_mib"}


@pytest.fixture(autouse=True)
def short_windows(monkeypatch: pytest.MonkeyPatch) -> None:
    # The window starts at the next whole second and the drain is short: ~1-2 s per contender.
    monkeypatch.setattr(firekit, "LEAD", 0.0)
    monkeypatch.setattr(firekit, "DRAIN", 0.3)


def _check_fire(result: dict[str, object], samples: Path) -> None:
    assert set(result) >= FIRE_KEYS
    assert result["runs_in_window"], result  # the jobs fired in the window at all
    assert samples.exists()


@pytest.mark.parametrize("kind", ["interval", "cron"])
def test_reconciler_fires(tmp_path: Path, kind: str) -> None:
    samples = tmp_path / "samples.json"
    result = reconciler_fire(10, 1, kind, str(samples))
    _check_fire({**result, "rss_mib": 0}, samples)
    assert "decision_p99" in result


@peers
@pytest.mark.parametrize(("contender", "kind"), [("aps-memory", "interval"),
                                                 ("aps-sqlite", "cron")])
def test_apscheduler_fires(tmp_path: Path, contender: str, kind: str) -> None:
    from bench.fire_aps import child

    samples = tmp_path / "samples.json"
    result = child(contender, 5, 1, kind, str(samples))
    assert FIRE_KEYS - {"rss_mib"} <= set(result)
    assert samples.exists()


def test_fire_cli_alternates_in_fresh_interpreters() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench.fire", "--jobs", "5", "--seconds", "1", "--reps", "1",
         "--contenders", "reconciler"],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert "| reconciler | 5 |" in done.stdout


def test_start_over_existing_state(tmp_path: Path) -> None:
    seeded = seed(tmp_path, 300, peers=peers_available())
    assert {"specs_s", "state_s"} <= set(seeded)
    result = start.reconciler_child(tmp_path, time.time())
    assert result["jobs"] == 300
    assert result["first_tick_s"] > 0
    if peers_available():
        assert start.aps_child(tmp_path, time.time())["first_tick_s"] > 0


def test_record_both_stores() -> None:
    sqlite = record.child("sqlite", [20, 100], 15, 1)
    whole = record.child("json", [20, 100], 15, 1)
    assert {"per_run_us_20", "per_run_us_100", "batched_us_100", "growth"} <= set(sqlite)
    assert {"per_run_us_20", "per_run_us_100", "growth"} <= set(whole)


def test_report_rewrites_only_its_section(tmp_path: Path) -> None:
    def run(**values: float) -> dict[str, float]:
        base = dict.fromkeys(("fires_per_s", "keep_up", "p50", "p95", "p99", "max",
                              "cpu_per_1k", "rss_mib", "missed", "decision_p50",
                              "decision_p99", "started_in_window", "handled_per_s",
                              "runs_in_window"), 1.0)
        return {**base, **values}

    rounds = Rounds(["reconciler", "aps-memory"],
                    {"reconciler": [run(p99=2.0)], "aps-memory": [run(p99=10.0)]})
    outcome = fire.FireOutcome("fire-1k", 1000, 1, "interval", rounds,
                               {"reconciler": [1.0, 2.0], "aps-memory": [5.0, 10.0]})
    png = report.plot(outcome, tmp_path)
    text = report.section([("fire-1k", fire.markdown(outcome, "cmd"))], ["header"],
                          {"fire-1k": outcome})
    assert "0.20x APScheduler in-memory's (target <= 0.25x): **met**" in text
    doc = tmp_path / "BENCHMARKS.md"
    doc.write_text(f"# B\n\n<!-- section: store -->\nkept\n<!-- /section: store -->\n\n"
                   f"{report.BEGIN}\nSTALE-FIGURES\n{report.END}\ntail\n")
    report.rewrite(doc, text)
    rewritten = doc.read_text()
    assert "kept" in rewritten and "tail" in rewritten and "STALE-FIGURES" not in rewritten
    assert rewritten.count(report.BEGIN) == 1
    if png is not None:
        assert png.stat().st_size > 0
