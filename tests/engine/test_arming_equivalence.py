"""Arming changes when a run is decided, never what is recorded: simulated side by side,
with enough run slots and no manual events, a lead of 0 and a lead of 500 ms (or 7 s) give
the same runs (slot, start, end, status, trigger), the same skips and the same final states."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from reconciler.executors.scripted import ScriptedOutcome
from reconciler.runtime.service import ServiceConfig
from reconciler.runtime.simulate import Simulation, run_simulation
from tests.engine.helpers import at, job

START = at("2026-03-29T00:30:00")  # the hour spans Europe's spring-forward at 01:00 UTC
# A quarter second before a whole second: no slot falls on the window's end, where a run and
# the end of the simulation would share an instant (their order is the loop's, either way).
UNTIL = START + 3600 - 0.25

SCHEDULES = [
    {"every": "1m"},
    {"every": "90s", "anchor": "2026-03-29T00:00:07Z"},
    {"every": "5m", "anchor": "2026-03-29T00:00:00Z"},
    {"cron": "*/2 * * * *", "timezone": "UTC"},
    {"cron": "*/10 * * * * *", "withSeconds": True},
    {"cron": "0,30 1-3 * * *", "timezone": "Europe/Berlin"},
    {"cron": "0 * * * *", "stagger": "5m"},
    {"at": "2026-03-29T00:45:00Z"},
]
POLICIES = ["Forbid", "Allow", "Replace", "Queue"]

outcome = st.builds(
    ScriptedOutcome,
    status=st.sampled_from(["ok", "ok", "error"]),
    error=st.just("503 busy"),
    # Never a whole second: a run that ends on the very instant of a slot is a tie whose order
    # is the event loop's (armed or not); real clocks do not produce it.
    duration=st.integers(0, 400).map(lambda s: timedelta(seconds=s + 0.3)),
)
job_case = st.tuples(st.sampled_from(range(len(SCHEDULES))), st.sampled_from(POLICIES),
                     st.lists(outcome, max_size=6))


def _simulate(cases: list[tuple[int, str, list[ScriptedOutcome]]], lead: float
              ) -> dict[str, Any]:
    desired = {}
    outcomes = {}
    for index, (schedule, policy, script) in enumerate(cases):
        name = f"job-{index}"
        # Off the grid of whole seconds too: a timeout is a run's end.
        desired[name] = job(name, SCHEDULES[schedule], concurrencyPolicy=policy,
                            timeout="299700ms")
        outcomes[name] = script
    report = run_simulation(Simulation(
        desired=desired, start=START, until=UNTIL, outcomes=outcomes,
        config=ServiceConfig(max_concurrent_runs=100, arm_ahead=lead)))
    # Instants to the millisecond: virtual time reached by other sequences of timer jumps
    # differs in the last microsecond.
    runs = sorted((r.job, r.scheduled_at, round(r.started_at, 3),
                   None if r.finished_at is None else round(r.finished_at, 3), r.status,
                   r.trigger, r.attempt) for r in report.sink.finished)
    skips = sorted((s.job, s.scheduled_at, s.reason) for s in report.sink.skips)
    final = {name: {key: round(value, 3) if isinstance(value, float) else value
                    for key, value in vars(state).items()}
             for name, state in report.final.items()}
    return {"runs": runs, "skips": skips, "final": final}


@settings(max_examples=40, deadline=None)
@given(cases=st.lists(job_case, min_size=1, max_size=4), lead=st.sampled_from([0.5, 7.0]))
def test_arming_records_exactly_what_deciding_at_the_slot_records(
        cases: list[tuple[int, str, list[ScriptedOutcome]]], lead: float) -> None:
    assert _simulate(cases, lead) == _simulate(cases, 0.0)
