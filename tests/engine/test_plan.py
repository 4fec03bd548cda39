"""plan(desired, observed, now): pure diffs of specs against state."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from reconciler.core.due import Activity, resolve_due
from reconciler.core.plan import plan, reconcile_job
from reconciler.model.state import JobState
from tests.engine.helpers import at, job, jobs

NOW = at("2026-01-05T09:10:00")


def test_new_job_gets_anchor_and_first_fire() -> None:
    (change,) = plan(jobs(job("a", {"every": "30m"})), {}, NOW)
    assert change.kind == "added" and change.state is not None
    # Anchored at the first reconcile (09:10): the first fire is one interval later.
    assert change.state.anchor == NOW
    assert change.state.next_nominal_at == at("2026-01-05T09:40:00")
    assert change.state.first_reconciled_at == NOW


def test_removed_job_is_reported_with_its_running_run() -> None:
    from reconciler.model.state import RunningMarker

    observed = {"gone": JobState("gone", running=RunningMarker("r-1", NOW - 5))}
    (change,) = plan({}, observed, NOW)
    assert change.kind == "removed" and change.state is None
    assert change.effects == ("running run will finish and be recorded",)


def test_description_edit_keeps_the_pending_fire() -> None:
    before = job("a", {"every": "1h", "anchor": "2026-01-05T08:20:00Z"}, description="x")
    after = job("a", {"every": "1h", "anchor": "2026-01-05T08:20:00Z"}, description="y")
    state = reconcile_job(before, None, "a", NOW).state
    assert state is not None
    change = reconcile_job(after, state, "a", NOW + 60)
    assert change.kind == "changed" and change.state is not None
    # Grid 08:20 + k hours; at 09:10 the pending slot is 09:20, and it stays.
    assert change.state.next_nominal_at == state.next_nominal_at == at("2026-01-05T09:20:00")
    assert change.state.spec_hash != state.spec_hash


def test_schedule_edit_recomputes_from_now_without_repeating_a_slot() -> None:
    before = job("a", {"cron": "0 * * * *", "stagger": 0})
    state = reconcile_job(before, None, "a", at("2026-01-05T08:59:00")).state
    assert state is not None and state.next_nominal_at == at("2026-01-05T09:00:00")
    # The 09:00 slot ran; at 09:00:30 the schedule changes to every 30 minutes from :00.
    ran = replace(state, last_nominal_at=at("2026-01-05T09:00:00"),
                  next_nominal_at=at("2026-01-05T10:00:00"),
                  next_effective_at=at("2026-01-05T10:00:00"))
    after = job("a", {"cron": "0,30 * * * *", "stagger": 0})
    change = reconcile_job(after, ran, "a", at("2026-01-05T09:00:30"))
    assert change.state is not None
    assert change.state.next_nominal_at == at("2026-01-05T09:30:00")
    # A schedule that would offer 09:00 again (it is "ahead" with a stagger) never does.
    again = job("a", {"cron": "0 * * * *", "stagger": "10m"})
    change = reconcile_job(again, ran, "a", at("2026-01-05T09:00:30"))
    assert change.state is not None and change.state.next_nominal_at == at("2026-01-05T10:00:00")


def test_suspend_and_resume_flip_only_the_marker() -> None:
    active = job("a", {"every": "1h", "anchor": "2026-01-05T08:00:00Z"})
    paused = job("a", {"every": "1h", "anchor": "2026-01-05T08:00:00Z"}, suspend=True)
    state = reconcile_job(active, None, "a", NOW).state
    assert state is not None
    suspended = reconcile_job(paused, state, "a", NOW + 1).state
    assert suspended is not None and suspended.suspended_since == NOW + 1
    assert suspended.next_nominal_at == state.next_nominal_at
    resumed = reconcile_job(active, suspended, "a", NOW + 2).state
    assert resumed is not None and resumed.suspended_since is None


def test_a_suspended_slot_is_skipped_with_reason_suspended() -> None:
    paused = job("a", {"every": "1h", "anchor": "2026-01-05T08:00:00Z"}, suspend=True)
    state = reconcile_job(paused, None, "a", NOW).state
    assert state is not None
    decision = resolve_due(paused, state, at("2026-01-05T10:00:00"), Activity())
    assert decision is not None and decision.start is None
    assert [(s.fire.nominal, s.reason) for s in decision.skips] == [
        (at("2026-01-05T10:00:00"), "suspended")]
    assert decision.state.next_nominal_at == at("2026-01-05T11:00:00")


def test_a_disabled_job_is_re_enabled_by_a_spec_change() -> None:
    before = job("a", {"every": "1h"})
    state = reconcile_job(before, None, "a", NOW).state
    assert state is not None
    broken = replace(state, disabled=True, disabled_reason="x", schedule_errors=3)
    change = reconcile_job(job("a", {"every": "2h"}), broken, "a", NOW)
    assert change.state is not None and not change.state.disabled
    assert "re-enabled by the spec change" in change.effects


def test_a_past_one_shot_never_run_is_due_now() -> None:
    once = job("once", {"at": "2026-01-05T09:00:00Z"})
    change = reconcile_job(once, None, "once", NOW)
    assert change.state is not None and change.state.next_effective_at == at(
        "2026-01-05T09:00:00")


names = st.lists(st.from_regex(r"[a-z][a-z0-9]{0,8}", fullmatch=True), min_size=2, max_size=6,
                 unique=True)
schedules = st.sampled_from([
    {"every": "30m"}, {"every": "1h", "anchor": "2026-01-01T00:00:00Z"},
    {"cron": "0 * * * *"}, {"cron": "*/5 * * * *", "timezone": "Europe/Berlin"},
    {"at": "2026-02-01T00:00:00Z"}, {"cron": "30 2 * * *", "timezone": "America/New_York"},
])


@settings(max_examples=60, deadline=None)
@given(names, st.lists(schedules, min_size=6, max_size=6), st.data())
def test_adding_or_editing_one_job_never_moves_another(
    job_names: list[str], picked: list[dict[str, str]], data: st.DataObject
) -> None:
    desired = {name: job(name, picked[i]) for i, name in enumerate(job_names)}
    observed = {c.name: c.state for c in plan(desired, {}, NOW) if c.state is not None}
    target = data.draw(st.sampled_from(job_names))
    edited = dict(desired)
    edited[target] = job(target, data.draw(schedules), description="edited")
    edited["zz-new"] = job("zz-new", {"every": "7m"})
    later = NOW + data.draw(st.integers(0, 3600))
    for change in plan(edited, observed, later):
        if change.name not in (target, "zz-new"):
            assert change.state == observed[change.name], change.name


_SCHEDULES = st.sampled_from([
    {"every": "1m", "anchor": "2026-01-05T08:00:00Z"},
    {"every": "45s", "anchor": "2026-01-05T08:00:07Z"},
    {"cron": "*/5 * * * *", "timezone": "UTC"},
    {"cron": "30 2 * * *", "timezone": "Europe/Berlin"},
    {"cron": "* * * * * *", "withSeconds": True},
    {"cron": "0 * * * *", "stagger": "5m"},
])


@settings(max_examples=150, deadline=None)
@given(schedule=_SCHEDULES, steps=st.lists(st.integers(0, 7200), min_size=1, max_size=6))
def test_reusing_the_lookahead_fire_never_changes_a_decision(schedule: dict[str, object],
                                                              steps: list[int]) -> None:
    """resolve_due takes the pending fire after an on-time start from the look-ahead it
    made while collecting due slots; advancing with and without it must agree."""
    import reconciler.core.due as due

    desired = job("a", schedule)
    state = reconcile_job(desired, None, "a", NOW).state
    assert state is not None
    original = due._when_free

    def without_lookahead(*args: object, **kwargs: object) -> due.Decision:
        return original(*args[:6])  # type: ignore[arg-type]

    now = NOW
    for step in steps:
        now += step
        fast = resolve_due(desired, state, now, Activity(started_at=NOW))
        due._when_free = without_lookahead  # type: ignore[assignment]
        try:
            slow = resolve_due(desired, state, now, Activity(started_at=NOW))
        finally:
            due._when_free = original
        assert fast == slow
        if fast is not None:
            state = fast.state
