"""Under the imported state, the next fire of every job is what OpenClaw would have computed.

The import happens at NOW = 2026-06-01T00:00:00Z (a Monday). Each expected value below is
derived by hand from OpenClaw's rules (seeds/003, openclaw-store.md):

* cron: the next wall-clock match in ``tz`` strictly after now, plus the job's stagger offset
  ``uint32_be(sha256(id)[0:4]) mod staggerMs`` (top-of-hour expressions default to 5 minutes);
* every: ``anchor + k * everyMs`` for the smallest k >= 1 that is after now (the anchor itself
  when now is before it);
* at: the instant itself until it has run.

The reconciler side is the engine itself: ``core.plan.reconcile_job`` over the imported spec and
state (which must keep the state: the job is known and unchanged) gives the pending fire, and
``core.schedule.next_fire`` over the engine's view of the state gives the fire after it.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace

import pytest

from reconciler.core.jobview import DesiredJob, pending_fire, schedule_state
from reconciler.core.plan import reconcile_job
from reconciler.core.schedule import next_fire
from reconciler.model.job import ScheduledJob
from reconciler.model.state import JobState
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

M = 60_000
# The fire after that one, once it has run: the same rules one step further. One-shots are spent.
# For the staggered cron jobs only the slot is compared (the offset is keyed by name here).
FOLLOWING_MS: dict[str, int | None] = {
    "a1b2c3d4-0001-4000-8000-000000000001": EXPECTED_MS[
        "a1b2c3d4-0001-4000-8000-000000000001"] + 24 * H,
    "legacy-0003": None,
    "legacy-0004": 1_780_272_000_000 + 1 * H,           # slot 01:00Z
    "legacy-0005": EXPECTED_MS["legacy-0005"] + 50 * M,
    "legacy-0006": EXPECTED_MS["legacy-0006"] + 24 * H,
    "legacy-0007": None,
    "legacy-0009": EXPECTED_MS["legacy-0009"] + 24 * H,
    "split-0001": EXPECTED_MS["split-0001"] + 7 * 24 * H,
    "split-0002": 1_780_272_000_000 + 2 * H,            # slot 02:00Z
    "split-0003": EXPECTED_MS["split-0003"] + 35 * M,
}


def _jobs(inline: ImportResult, split: ImportResult) -> dict[str, ImportedJob]:
    return {job.openclaw_id: job for result in (inline, split) for job in result.jobs
            if job.document is not None}


def _engine(job: ImportedJob) -> tuple[DesiredJob, JobState]:
    """What the engine does with the imported spec and state at NOW."""
    assert job.document is not None and job.state is not None
    desired = DesiredJob.of(ScheduledJob.model_validate(job.document))
    change = reconcile_job(desired, job.state.job_state, desired.name, NOW)
    assert change.kind == "unchanged", "the engine must keep the carried-over state"
    assert change.state is not None
    return desired, change.state


def test_offsets_used_above_are_openclaws() -> None:
    for job_id, offset in (("legacy-0004", 67_646), ("split-0002", 30_438)):
        digest = hashlib.sha256(job_id.encode()).digest()
        assert int.from_bytes(digest[:4], "big") % 300_000 == offset
        assert openclaw_offset_ms(job_id, 300_000) == offset


def test_every_imported_job_is_covered(inline: ImportResult, split: ImportResult) -> None:
    assert set(_jobs(inline, split)) == set(EXPECTED_MS) | SUSPENDED
    assert set(FOLLOWING_MS) == set(EXPECTED_MS)


@pytest.mark.parametrize("job_id", sorted(EXPECTED_MS))
def test_next_fire_equals_openclaws(job_id: str, inline: ImportResult,
                                    split: ImportResult) -> None:
    _, state = _engine(_jobs(inline, split)[job_id])
    pending = pending_fire(state)
    assert pending is not None
    assert pending.effective == EXPECTED_MS[job_id] / 1000


@pytest.mark.parametrize("job_id", sorted(EXPECTED_MS))
def test_the_fire_after_it_equals_openclaws(job_id: str, inline: ImportResult,
                                            split: ImportResult) -> None:
    desired, state = _engine(_jobs(inline, split)[job_id])
    pending = pending_fire(state)
    assert pending is not None
    ran = replace(state, last_nominal_at=pending.nominal, last_started_at=pending.effective,
                  last_finished_at=pending.effective + 1, last_status="ok")
    schedule = desired.spec.spec.schedule
    following = next_fire(desired.name, schedule, schedule_state(desired, ran),
                          pending.effective)
    expected = FOLLOWING_MS[job_id]
    if expected is None:
        assert following is None
        return
    assert following is not None
    if schedule.stagger:
        assert following.nominal == expected / 1000
        assert 0 <= following.effective - following.nominal < schedule.stagger.total_seconds()
    else:
        assert following.effective == expected / 1000


@pytest.mark.parametrize("job_id", sorted(EXPECTED_MS))
def test_the_last_run_is_not_repeated(job_id: str, inline: ImportResult,
                                      split: ImportResult) -> None:
    """Even asked from just before the last run, the schedule never offers its slot again."""
    desired, state = _engine(_jobs(inline, split)[job_id])
    last = state.last_nominal_at
    if last is None:
        return
    fire = next_fire(desired.name, desired.spec.spec.schedule, schedule_state(desired, state),
                     last - 1)
    assert fire is not None and fire.nominal > last


def test_suspended_job_keeps_its_schedule(inline: ImportResult) -> None:
    (job,) = [j for j in inline.jobs if j.openclaw_id == "legacy-0002"]
    _, state = _engine(job)
    assert state.suspended_since is not None
    # OpenClaw would compute no next run; the engine keeps the slot and records it as
    # skipped (suspended) when it passes, so resuming never catches up a pile of slots
    assert state.next_nominal_at is not None


def test_spent_one_shot_never_fires_again(split: ImportResult) -> None:
    (job,) = [j for j in split.jobs if j.openclaw_id == "split-0004"]
    desired, state = _engine(job)
    assert desired.spec.spec.suspend and desired.spec.spec.delete_after_run is False
    assert state.last_status == "ok" and pending_fire(state) is None
