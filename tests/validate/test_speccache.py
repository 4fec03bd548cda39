"""The spec parse cache: a cached load is the uncached load, and no cache state (stale, edited,
truncated, foreign) can change which jobs load."""

from __future__ import annotations

import json
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reconciler.sources import loader
from reconciler.sources.directory import DirectorySource
from reconciler.sources.loader import load_paths
from reconciler.sources.speccache import (
    CACHE_FILE,
    ParsedDocument,
    SpecCache,
    content_digest,
    is_plain_json,
)

NOW = 1_790_000_000.0  # 2026-09-21T14:13:20Z
CORPUS = Path(__file__).parent / "corpus"
LEGACY = Path(__file__).parent.parent / "migrate" / "golden" / "legacy.yaml"

JOB = """\
apiVersion: reconciler.dev/v1
kind: ScheduledJob
metadata:
  name: {name}
spec:
  schedule: {{every: 1h}}
  run: {{command: [echo, {word}]}}
"""

TREE = {
    "valid.yaml": JOB.format(name="valid", word="hi"),
    # Old spellings: warnings that name the migration steps, jobs that still load.
    "legacy.yaml": LEGACY.read_text(),
    "nested/old.yml": ("apiVersion: reconciler.dev/v1alpha1\nkind: ScheduledJob\n"
                       "metadata: {name: old}\nspec:\n  schedule: '0 9 * * *'\n"
                       "  enabled: false\n  run: {command: 'echo old'}\n"),
    # Schema errors, placed by line and column.
    "schema.yaml": ("apiVersion: reconciler.dev/v1\nkind: ScheduledJob\nmetadata: {name: bad}\n"
                    "spec:\n  schedule: {every: 10 minutes}\n  run: {command: [x]}\n"
                    "  colour: blue\n"),
    "syntax.yaml": "apiVersion: reconciler.dev/v1\nkind: [unclosed\n",
    # Several documents: ours, an empty one, another tool's, a non-mapping, a duplicate name.
    "multi.yaml": (JOB.format(name="first", word="1") + "---\n---\napiVersion: apps/v1\n"
                   "kind: Deployment\nmetadata: {name: web}\n---\n- a list\n---\n"
                   + JOB.format(name="valid", word="again")),
    # Cross-file checks that depend on the instant: a DST warning, an unknown channel.
    "cross.yaml": ("apiVersion: reconciler.dev/v1\nkind: ScheduledJob\nmetadata: {name: dst}\n"
                   "spec:\n  schedule: {cron: '30 2 * * *', timezone: Europe/Berlin}\n"
                   "  run: {command: [x]}\n  failureAlert: {channel: nowhere}\n"),
    # An int key (YAML 1.2 reads `75:` as a number): not JSON, never cached, loads the same.
    "exit-codes.yaml": ("apiVersion: reconciler.dev/v1\nkind: ScheduledJob\n"
                        "metadata: {name: codes}\nspec:\n  schedule: {every: 1h}\n"
                        "  run: {command: [x], exitCodes: {75: rate_limit}}\n"),
}


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


@pytest.fixture()
def parsed(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The texts the loader parsed with YAML (rather than took from a cache)."""
    texts: list[str] = []
    original = loader.load_documents

    def counting(text: str) -> list[Any]:
        texts.append(text)
        return original(text)

    monkeypatch.setattr(loader, "load_documents", counting)
    yield texts


def test_a_cached_load_is_the_uncached_load(tmp_path: Path, parsed: list[str]) -> None:
    tree = write_tree(tmp_path / "specs", TREE)
    shutil.copytree(CORPUS, tree / "corpus")
    uncached = load_paths([str(tree)], now=NOW)
    assert uncached.warnings and uncached.errors and uncached.jobs  # the tree covers them all
    cache = SpecCache()
    cold = load_paths([str(tree)], now=NOW, cache=cache)
    parsed.clear()
    warm = load_paths([str(tree)], now=NOW, cache=cache)
    assert cold == uncached
    assert warm == uncached  # every diagnostic (text, file, line, column, path) and every job
    # Only the files that cannot be cached were parsed again: YAML errors and non-JSON data.
    reparsed = {name for name, text in TREE.items() if text in parsed}
    assert reparsed == {"syntax.yaml", "exit-codes.yaml"}
    assert "codes" in {job.name for job in warm.jobs}


def test_without_a_cache_nothing_is_remembered(tmp_path: Path, parsed: list[str]) -> None:
    tree = write_tree(tmp_path / "specs", {"a.yaml": JOB.format(name="a", word="x")})
    load_paths([str(tree)], now=NOW)
    load_paths([str(tree)], now=NOW)
    assert len(parsed) == 2


def test_validation_cannot_change_what_the_next_load_gets() -> None:
    cache = SpecCache()
    digest = content_digest(b"file")
    cache.remember(digest, [ParsedDocument(0, {"spec": {"run": ["a"]}}, ["schedule-string"])])
    first = cache.lookup(digest)
    assert first is not None
    first[0].data["spec"]["run"].append("mutated")
    first[0].migrations.clear()
    assert cache.lookup(digest) == [ParsedDocument(0, {"spec": {"run": ["a"]}},
                                                   ["schedule-string"])]


def _source(tmp_path: Path) -> tuple[Path, Path]:
    specs = write_tree(tmp_path / "specs", {"a.yaml": JOB.format(name="a", word="one"),
                                             "b.yaml": JOB.format(name="b", word="two")})
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    return specs, state / CACHE_FILE


def _commands(source: DirectorySource) -> dict[str, list[str] | None]:
    return {name: desired.spec.spec.run.command
            for name, desired in source.load(NOW).desired.items()}


def test_the_cache_file_is_written_once_and_private(tmp_path: Path) -> None:
    specs, cache_file = _source(tmp_path)
    assert _commands(DirectorySource(specs, cache_path=cache_file)) == {
        "a": ["echo", "one"], "b": ["echo", "two"]}
    assert stat.S_IMODE(cache_file.stat().st_mode) == 0o600
    written = cache_file.stat().st_mtime_ns, cache_file.read_bytes()
    assert len(SpecCache.read(cache_file)) == 2
    source = DirectorySource(specs, cache_path=cache_file)
    source.load(NOW)
    source.load(NOW)
    assert (cache_file.stat().st_mtime_ns, cache_file.read_bytes()) == written  # unchanged
    assert [p.name for p in cache_file.parent.iterdir()] == [CACHE_FILE]  # no temp file left


def test_an_edited_file_loads_its_new_content(tmp_path: Path, parsed: list[str]) -> None:
    specs, cache_file = _source(tmp_path)
    source = DirectorySource(specs, cache_path=cache_file)
    source.load(NOW)
    old = content_digest((specs / "a.yaml").read_bytes())
    (specs / "a.yaml").write_text(JOB.format(name="a", word="edited"))
    parsed.clear()
    assert _commands(source) == {"a": ["echo", "edited"], "b": ["echo", "two"]}
    assert len(parsed) == 1  # b.yaml came from the cache kept in memory
    assert _commands(DirectorySource(specs, cache_path=cache_file))["a"] == ["echo", "edited"]
    assert old not in SpecCache.read(cache_file)


def test_a_deleted_file_takes_its_jobs_and_its_entry(tmp_path: Path) -> None:
    specs, cache_file = _source(tmp_path)
    source = DirectorySource(specs, cache_path=cache_file)
    source.load(NOW)
    gone = content_digest((specs / "b.yaml").read_bytes())
    (specs / "b.yaml").unlink()
    assert _commands(source) == {"a": ["echo", "one"]}
    saved = SpecCache.read(cache_file)
    assert gone not in saved and len(saved) == 1


@pytest.mark.parametrize("damage", ["truncated", "not-json", "empty", "a-list",
                                    "bad-entry", "bad-payload", "directory"])
def test_a_damaged_cache_file_means_a_full_parse(
    tmp_path: Path, parsed: list[str], damage: str
) -> None:
    specs, cache_file = _source(tmp_path)
    DirectorySource(specs, cache_path=cache_file).load(NOW)
    text = cache_file.read_text()
    saved = json.loads(text)
    digest = next(iter(saved["files"]))
    if damage == "truncated":
        cache_file.write_text(text[:len(text) // 2])
    elif damage == "not-json":
        cache_file.write_bytes(b"\xff\xfe not json")
    elif damage == "empty":
        cache_file.write_text("")
    elif damage == "a-list":
        cache_file.write_text("[]")
    elif damage == "bad-entry":
        cache_file.write_text(json.dumps({**saved, "files": {digest: 3}}))
    elif damage == "bad-payload":
        cache_file.write_text(json.dumps({**saved, "files": {digest: "[[0, {}]"}}))
    else:
        cache_file.unlink()
        cache_file.mkdir()
    parsed.clear()
    assert _commands(DirectorySource(specs, cache_path=cache_file)) == {
        "a": ["echo", "one"], "b": ["echo", "two"]}
    assert len(parsed) == 2
    if damage != "directory":  # rewritten whole (a directory in its place cannot be replaced)
        assert len(SpecCache.read(cache_file)) == 2


@pytest.mark.parametrize("version", [{"format": 0}, {"migrations": ["api-version-v1"]}, None])
def test_a_cache_from_another_version_is_ignored(
    tmp_path: Path, parsed: list[str], version: dict[str, Any] | None
) -> None:
    specs, cache_file = _source(tmp_path)
    DirectorySource(specs, cache_path=cache_file).load(NOW)
    saved = json.loads(cache_file.read_text())
    saved["version"] = None if version is None else {**saved["version"], **version}
    cache_file.write_text(json.dumps(saved))
    assert len(SpecCache.read(cache_file)) == 0
    parsed.clear()
    DirectorySource(specs, cache_path=cache_file).load(NOW)
    assert len(parsed) == 2
    assert len(SpecCache.read(cache_file)) == 2  # rewritten for this version


def test_a_cache_that_cannot_be_written_is_no_error(tmp_path: Path) -> None:
    specs, _ = _source(tmp_path)
    source = DirectorySource(specs, cache_path=tmp_path / "absent" / CACHE_FILE)
    assert _commands(source) == {"a": ["echo", "one"], "b": ["echo", "two"]}
    assert not (tmp_path / "absent").exists()


def test_files_that_are_not_exactly_json_are_not_cached(tmp_path: Path) -> None:
    cache = SpecCache()
    tree = write_tree(tmp_path, {
        "binary.yaml": "kind: x\ndata: !!binary aGVsbG8=\n",
        "infinite.yaml": "kind: x\nratio: .inf\n",
        "recursive.yaml": "kind: &k [*k]\n",
        "int-key.yaml": "kind: x\n1: one\n",
    })
    uncached = load_paths([str(tree)], now=NOW)
    assert load_paths([str(tree)], now=NOW, cache=cache) == uncached
    assert len(cache) == 0


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text()
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20)
not_json = (st.binary() | st.tuples(st.integers()) | st.sets(st.integers(), min_size=1)
            | st.sampled_from([float("nan"), float("inf"), -float("inf")])
            | st.dictionaries(st.integers() | st.booleans() | st.none(), st.integers(),
                              min_size=1))


def _exactly(a: Any, b: Any) -> bool:
    """Equal with the same types all the way down (``1 == 1.0 == True`` does not count)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_exactly(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_exactly(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


@given(json_values)
def test_plain_json_survives_the_cache_exactly(value: Any) -> None:
    assert is_plain_json(value)
    cache = SpecCache()
    cache.remember("d", [ParsedDocument(3, value, ["step"])])
    (document,) = cache.lookup("d") or []
    assert document.index == 3 and document.migrations == ["step"]
    assert _exactly(document.data, value)


@given(json_values, not_json, st.data())
def test_anything_else_anywhere_is_not_cached(value: Any, odd: Any, data: st.DataObject) -> None:
    # Put the odd value at a random place inside a JSON document.
    holder: Any = {"root": value}
    parent, key = holder, "root"
    while isinstance(parent[key], dict | list) and parent[key] and data.draw(st.booleans()):
        parent = parent[key]
        key = data.draw(st.sampled_from(list(parent) if isinstance(parent, dict)
                                        else range(len(parent))))
    parent[key] = odd
    assert not is_plain_json(holder)
    cache = SpecCache()
    cache.remember("d", [ParsedDocument(0, holder, [])])
    assert cache.lookup("d") is None and len(cache) == 0
