"""The broken-spec corpus: every case exits 1 and names the right file, line and field, in
text, json and github formats. Each corpus file states what it expects in a leading comment:

    # expect: LINE FIELD.PATH :: substring of the message

(``-`` as the path means a problem of the whole document). The lines were counted by hand.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from reconciler.cli import main

CORPUS = Path(__file__).parent / "corpus"
EXPECT = re.compile(r"^# expect: (\d+) (\S+) :: (.+)$")


@dataclass(frozen=True)
class Expectation:
    file: Path
    line: int
    path: str | None
    message: str


def _expectations(case: Path) -> list[Expectation]:
    files = sorted(case.rglob("*.yaml")) if case.is_dir() else [case]
    found = []
    for file in files:
        for text in file.read_text().splitlines():
            match = EXPECT.match(text)
            if match:
                path = None if match.group(2) == "-" else match.group(2)
                found.append(Expectation(file, int(match.group(1)), path, match.group(3)))
    return found


CASES = sorted(p for p in CORPUS.iterdir() if p.suffix == ".yaml" or p.is_dir())


def test_the_corpus_has_at_least_25_distinct_cases() -> None:
    assert len(CASES) >= 25
    assert all(_expectations(case) for case in CASES), "every case states its expectation"


def _run(case: Path, fmt: str, capsys: pytest.CaptureFixture[str]) -> str:
    code = main(["validate", str(case), "--format", fmt])
    out = capsys.readouterr().out
    assert code == 1, f"{case.name} should be invalid ({fmt}):\n{out}"
    return out


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_json_names_file_line_and_field(case: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = json.loads(_run(case, "json", capsys))
    assert report["valid"] is False
    for expected in _expectations(case):
        matches = [
            error for error in report["errors"]
            if error["file"] == str(expected.file) and error["line"] == expected.line
            and error["path"] == expected.path and expected.message in error["message"]
        ]
        assert matches, f"{expected} not in {json.dumps(report['errors'], indent=1)}"
        assert matches[0]["column"] >= 1


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_text_names_file_line_and_field(case: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = _run(case, "text", capsys)
    for expected in _expectations(case):
        lines = [line for line in out.splitlines()
                 if line.startswith(f"{expected.file}:{expected.line}:")
                 and expected.message in line]
        assert lines, f"{expected} not in:\n{out}"
        if expected.path:
            assert expected.path in lines[0]
    assert out.splitlines()[-1].startswith("invalid:")


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_github_annotates_file_and_line(case: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = _run(case, "github", capsys)
    for expected in _expectations(case):
        prefix = f"::error file={expected.file},line={expected.line},col="
        assert any(line.startswith(prefix) for line in out.splitlines()), (
            f"{prefix} not in:\n{out}"
        )
