"""What every side-by-side scenario shares: children, alternation, statistics, the machine.

Each contender runs in a fresh interpreter (``python -m bench.<scenario> --child NAME ...``), so
its peak RSS and CPU time are its own and nothing one contender imported or allocated is left
for the next. A child prints one JSON object as its last line of stdout. Repetitions alternate
the contenders (A B C A B C ...), so a burst of someone else's load on this shared machine hits
every contender alike, and ratios are taken per repetition, inside the same round.
"""

from __future__ import annotations

import json
import os
import platform
import resource
import statistics
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def peers_available() -> bool:
    try:
        import apscheduler  # noqa: F401
        import sqlalchemy  # noqa: F401
    except ImportError:
        return False
    return True


def peak_rss_mib() -> float:
    # VmHWM, not ru_maxrss: Linux carries ru_maxrss over fork and exec, so a child spawned by
    # a big parent would report the parent's peak; VmHWM belongs to this address space alone.
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def emit(result: dict[str, Any]) -> None:
    """A child's answer: one JSON line, last on stdout."""
    result.setdefault("rss_mib", peak_rss_mib())
    print(json.dumps(result), flush=True)


def run_child(module: str, args: Sequence[str], timeout: float) -> dict[str, Any]:
    command = [sys.executable, "-m", module, *args]
    env = dict(os.environ, PYTHONHASHSEED="0")
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                          env=env, check=False)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"{' '.join(command)} failed ({done.returncode}):\n"
                           f"{done.stdout[-2000:]}\n{done.stderr[-4000:]}")
    result: dict[str, Any] = json.loads(lines[-1])
    return result


@dataclass
class Rounds:
    """Results of alternating repetitions: ``runs[contender][rep]``."""

    contenders: list[str]
    runs: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def median(self, contender: str, key: str) -> float:
        return statistics.median(float(r[key]) for r in self.runs[contender])

    def ratios(self, key: str, num: str, den: str) -> list[float]:
        """``num / den`` of ``key`` in each repetition (same round, same machine state)."""
        return [ratio(a[key], b[key]) for a, b in zip(self.runs[num], self.runs[den],
                                                       strict=True)]


def ratio(a: float, b: float) -> float:
    return float("inf") if not b else float(a) / float(b)


def alternate(contenders: Sequence[str], reps: int, run: Callable[[str, int], dict[str, Any]],
              log: Callable[[str], None] | None = None) -> Rounds:
    rounds = Rounds(list(contenders), {name: [] for name in contenders})
    for rep in range(reps):
        for name in contenders:
            result = run(name, rep)
            rounds.runs[name].append(result)
            if log is not None:
                log(f"  rep {rep + 1}/{reps} {name}: {summary_line(result)}")
    return rounds


def summary_line(result: dict[str, Any]) -> str:
    keys = [k for k in ("fires_per_s", "keep_up", "p50", "p99", "max", "first_tick_s",
                        "per_run_us", "rss_mib") if k in result]
    return ", ".join(f"{k}={result[k]:.4g}" for k in keys)


def percentiles(values: Sequence[float]) -> dict[str, float]:
    """p50/p95/p99/max of ``values`` (nearest rank); zeros when there are none."""
    ordered = sorted(values)
    if not ordered:
        return {"p50": 0.0, "p95": 0.0, "p99": 0.0, "max": 0.0}

    def rank(p: float) -> float:
        return ordered[min(len(ordered) - 1, int(p * len(ordered)))]

    return {"p50": rank(0.50), "p95": rank(0.95), "p99": rank(0.99), "max": ordered[-1]}


def machine() -> str:
    return (f"{os.cpu_count()} cores ({platform.machine()}), Linux {platform.release()}, "
            f"Python {platform.python_version()}")


def versions() -> str:
    parts = []
    for module in ("apscheduler", "sqlalchemy"):
        try:
            parts.append(f"{module} {__import__(module).__version__}")
        except ImportError:
            parts.append(f"{module} not installed")
    return ", ".join(parts)
