"""Under the imported state, the next fire of every job is what OpenClaw would have computed.

The import happens at NOW = 2026-06-01T00:00:00Z (a Monday). Each expected value below is
derived by hand from OpenClaw's rules (seeds/003, openclaw-store.md):

* cron: the next wall-clock match in ``tz`` strictly after now, plus the job's stagger offset
  ``uint32_be(sha256(id)[0:4]) mod staggerMs`` (top-of-hour expressions default to 5 minutes);
* every: ``anchor + k * everyMs`` for the smallest k >= 1 that is after now (the anchor itself
  when now is before it);
* at: the instant itself until it has run.

The reconciler side is ``reconciler.core.schedule.next_fire`` over the imported state, and the
seeded ``next_effective_at`` the store receives.
"""

from __future__ import annotations

import hashlib

import pytest

from reconciler.core.schedule import next_fire
from reconciler.model.job import ScheduledJob
from reconciler.sources.openclaw.importer import ImportedJob, ImportResult
from reconciler.sources.openclaw.state import openclaw_offset_ms
from tests.openclaw.conftest import NOW

H = 3_600_000
EXPECTED_MS = {
    # "0 9 * * *" Asia/Shanghai, no stagger (hour 9 is not a wildcard): 09:00 CST on
    # 2026-06-01 = 01:00Z.
    "a1b2c3d4-0001-4000-8000-000000000001": 1_780_272_000_000 + 1 * H,
    # at 2026-06-01T08:00:00Z (atMs "1780300800000"), not run yet.
    "legacy-0003": 1_780_300_800_000,
    # "0 * * * *" Europe/Berlin, top of the hour: default stagger 5m; offset of id legacy-0004
    # = 67_646 ms. The next top of the hour after 00:00Z is 00:00Z itself, because its
    # effective time 00:01:07.646 is still ahead.
    "legacy-0004": 1_780_272_000_000 + 67_646,
    # every 50m (3000000.9 floored) from createdAtMs 2026-01-01T00:00Z: now is 151 days =
    # 217,440 minutes = 4348.8 intervals after the anchor -> k = 4349 -> 00:10Z.
    "legacy-0005": 1_767_225_600_000 + 4349 * 3_000_000,
    # "15 30 8 * * *" (croner: seconds first) with no tz (host zone, assumed UTC), staggerMs 0:
    # 08:30:15Z today. nextRunAtMs was 0 (= not scheduled), so OpenClaw computes it on load.
    "legacy-0006": 1_780_272_000_000 + 8 * H + 30 * 60_000 + 15_000,
    # at 2026-06-01T09:00:00+08:00 = 01:00Z.
    "legacy-0007": 1_780_272_000_000 + 1 * H,
    # every 24h anchored at 2026-05-31T22:00Z (anchorMs as a string): k = 1 -> 06-01 22:00Z.
    "legacy-0009": 1_780_264_800_000 + 24 * H,
    # "0 8 * * 1" America/New_York: Monday 08:00 EDT = 12:00Z today.
    "split-0001": 1_780_272_000_000 + 12 * H,
    # "0 */2 * * *" UTC, staggerMs 300000: offset of split-0002 = 30_438 ms; the 00:00Z slot
    # is still ahead at 00:00:30.438.
    "split-0002": 1_780_272_000_000 + 30_438,
    # every 35m from 2026-01-01T00:00Z: 217,440 / 35 = 6212.57 -> k = 6213 -> 00:15Z.
    "split-0003": 1_767_225_600_000 + 6213 * 2_100_000,
}
# enabled "false": OpenClaw computes no next run; split-0004 is a one-shot that already ran
# (2026-05-30T10:00Z, ok) and was disabled, as OpenClaw does after a successful one-shot
SUSPENDED = {"legacy-0002", "split-0004"}


def _jobs(inline: ImportResult, split: ImportResult) -> dict[str, ImportedJob]:
    return {job.openclaw_id: job for result in (inline, split) for job in result.jobs
            if job.document is not None}


def test_offsets_used_above_are_openclaws() -> None:
    for job_id, offset in (("legacy-0004", 67_646), ("split-0002", 30_438)):
        digest = hashlib.sha256(job_id.encode()).digest()
        assert int.from_bytes(digest[:4], "big") % 300_000 == offset
        assert openclaw_offset_ms(job_id, 300_000) == offset


def test_every_imported_job_is_covered(inline: ImportResult, split: ImportResult) -> None:
    assert set(_jobs(inline, split)) == set(EXPECTED_MS) | SUSPENDED


@pytest.mark.parametrize("job_id", sorted(EXPECTED_MS))
def test_next_fire_equals_openclaws(job_id: str, inline: ImportResult,
                                    split: ImportResult) -> None:
    imported = _jobs(inline, split)[job_id]
    assert imported.document is not None and imported.state is not None
    spec = ScheduledJob.model_validate(imported.document)
    expected = EXPECTED_MS[job_id] / 1000
    fire = next_fire(spec.name, spec.spec.schedule, imported.state.schedule_state(), NOW)
    assert fire is not None
    seeded = imported.state.job_state.next_effective_at
    if seeded is not None:
        assert seeded == expected  # the store is seeded with OpenClaw's own next run
    stagger = spec.spec.schedule.stagger
    if stagger:
        # Same slot; the offset inside the window is keyed by name here, by id in OpenClaw
        oc_offset = openclaw_offset_ms(job_id, int(stagger.total_seconds() * 1000)) / 1000
        assert fire.nominal == expected - oc_offset
        assert imported.state.job_state.next_nominal_at == fire.nominal
        assert 0 <= fire.effective - fire.nominal < stagger.total_seconds()
    else:
        assert fire.effective == expected


@pytest.mark.parametrize("job_id", sorted(EXPECTED_MS))
def test_the_last_run_is_not_repeated(job_id: str, inline: ImportResult,
                                      split: ImportResult) -> None:
    """Even asked from just before the last run, the schedule never offers its slot again."""
    imported = _jobs(inline, split)[job_id]
    assert imported.state is not None and imported.document is not None
    state = imported.state
    if state.last_nominal is None:
        return
    spec = ScheduledJob.model_validate(imported.document)
    assert state.job_state.last_nominal_at == state.last_nominal
    fire = next_fire(spec.name, spec.spec.schedule, state.schedule_state(),
                     state.last_nominal - 1)
    assert fire is not None and fire.nominal > state.last_nominal


def test_suspended_job_has_no_seeded_next(inline: ImportResult) -> None:
    (job,) = [j for j in inline.jobs if j.openclaw_id == "legacy-0002"]
    assert job.state is not None and job.state.job_state.next_effective_at is None


def test_spent_one_shot_never_fires_again(split: ImportResult) -> None:
    (job,) = [j for j in split.jobs if j.openclaw_id == "split-0004"]
    assert job.document is not None and job.state is not None
    spec = ScheduledJob.model_validate(job.document)
    assert spec.spec.suspend and spec.spec.delete_after_run is False
    assert job.state.job_state.last_status == "ok"
    assert next_fire(spec.name, spec.spec.schedule, job.state.schedule_state(), NOW) is None
