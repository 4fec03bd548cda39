"""bench/store.py keeps working: a tiny run of it produces the table and the target lines."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent.parent / "bench" / "store.py"


def test_bench_runs_small(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = importlib.util.spec_from_file_location("bench_store", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "bench_store", module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    argv = ["--jobs", "1000,10000", "--runs", "15", "--json-runs", "1", "--history", "0",
            "--batch", "5", "--dir", str(tmp_path)]  # fmt: skip
    assert module.main(argv) == 0
    out = capsys.readouterr().out
    assert "| 1,000 |" in out and "| 10,000 |" in out
    assert "JSON rewrite / SQLite at 10,000 jobs" in out
