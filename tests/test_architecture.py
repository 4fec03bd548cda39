"""The import direction and the purity rules of DESIGN.md §1, checked on the source itself."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "reconciler"

# What each layer may import from inside the package (besides itself and the package root).
ALLOWED = {
    "errors": set(),
    "clock": set(),
    "collector": set(),  # the process's garbage-collector policy: no dependencies
    "model": {"errors", "clock"},
    "core": {"model", "errors", "clock"},
    "sources": {"core", "model", "errors", "clock", "collector"},
    "store": {"core", "model", "errors", "clock"},
    "executors": {"core", "model", "errors", "clock"},
    "delivery": {"core", "model", "errors", "clock", "store", "executors"},
    "runtime": {"sources", "store", "executors", "delivery", "core", "model", "errors", "clock",
                "collector"},
    "cli": {
        "runtime", "sources", "store", "executors", "delivery", "core", "model", "errors",
        "clock",
    },
    "__main__": {"cli"},
}

# The pure core and the model do no I/O and hold no clock.
IMPURE_MODULES = {
    "asyncio", "os", "sqlite3", "httpx", "watchdog", "kubernetes", "subprocess", "socket",
    "time", "threading", "fcntl", "shutil", "pathlib", "requests",
}
PURE_LAYERS = {"core", "model"}

# Only the clock and the runtime may read the wall clock.
CLOCK_READS = {("datetime", "now"), ("datetime", "utcnow"), ("date", "today"),
               ("time", "time"), ("time", "monotonic"), ("time", "time_ns")}
CLOCK_OWNERS = {"clock", "runtime"}


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _layer(path: Path) -> str:
    relative = path.relative_to(PACKAGE)
    return relative.parts[0].removesuffix(".py") if relative.parts[0] != "__init__.py" else ""


def _imports(tree: ast.AST) -> list[str]:
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_point_down(path: Path) -> None:
    layer = _layer(path)
    if not layer:
        return
    tree = ast.parse(path.read_text())
    for name in _imports(tree):
        parts = name.split(".")
        if parts[0] == "reconciler" and len(parts) > 1:
            target = parts[1]
            assert target == layer or target in ALLOWED[layer], (
                f"{path.relative_to(PACKAGE)} ({layer}) imports {name}: "
                f"{layer} may import only {sorted(ALLOWED[layer])}"
            )
        if layer in PURE_LAYERS:
            assert parts[0] not in IMPURE_MODULES, (
                f"{path.relative_to(PACKAGE)} is pure ({layer}) but imports {name}"
            )


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_only_the_clock_and_runtime_read_the_time(path: Path) -> None:
    if _layer(path) in CLOCK_OWNERS:
        return
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            assert (node.value.id, node.attr) not in CLOCK_READS, (
                f"{path.relative_to(PACKAGE)}:{node.lineno} reads the clock "
                f"({node.value.id}.{node.attr}); take the instant as a parameter"
            )


def test_every_layer_is_known() -> None:
    layers = {_layer(path) for path in _modules()} - {""}
    assert layers <= set(ALLOWED), f"unknown layers: {layers - set(ALLOWED)}"
