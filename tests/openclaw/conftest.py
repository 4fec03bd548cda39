from __future__ import annotations

from pathlib import Path

import pytest

from reconciler.sources.openclaw.importer import ImportResult, import_store

FIXTURES = Path(__file__).parent / "fixtures"
# The instant of the import: 2026-06-01T00:00:00Z. The fixture states were written by hand
# with OpenClaw's rules as they stood at this instant (see test_next_fire.py).
NOW = 1_780_272_000.0


@pytest.fixture(scope="session")
def inline() -> ImportResult:
    return import_store(FIXTURES / "inline" / "jobs.json", NOW)


@pytest.fixture(scope="session")
def split() -> ImportResult:
    return import_store(FIXTURES / "split", NOW)
