"""A run's delivery status as the store keeps it and status/history read it (issue 9's words).
Rows written before issue 9 are rewritten by store migration step 5 (its own tests)."""

from __future__ import annotations

from pathlib import Path

from reconciler.delivery.plan import plan_deliveries
from reconciler.executors.base import RunResult
from reconciler.model.state import RunFinish, RunStart
from reconciler.store import StateReader, StateWriter
from tests.delivery.helpers import SLACK_LIKE, T0, finished_run, job


def test_every_planned_status_is_recorded_with_the_run_and_read_back(tmp_path: Path) -> None:
    cases = {
        "not-requested": (job(), finished_run(run_id="a"), RunResult("ok")),
        "already-delivered": (job(delivery={"channel": "ops"}), finished_run(run_id="b"),
                              RunResult("ok", delivered=True)),
        "skipped-stale": (job(delivery={"channel": "ops"}),
                          finished_run(run_id="c", started_at=T0 + 4 * 3600), None),
        "not-delivered": (job(delivery={"channel": "gone"}), finished_run(run_id="d"), None),
        "pending": (job(delivery={"channel": "ops"}), finished_run(run_id="e"), None),
    }
    with StateWriter.open(tmp_path, now=T0) as writer:
        for expected, (spec, run, result) in cases.items():
            plan = plan_deliveries(spec, SLACK_LIKE, run, result)
            assert plan.status == expected
            writer.start_run(RunStart(run.run_id, run.job, run.occurrence_key, run.scheduled_at,
                                      run.started_at))
            assert run.finished_at is not None and run.status is not None
            writer.finish_run(RunFinish(run.run_id, run.job, run.finished_at, run.status,
                                        delivery_status=plan.status,
                                        deliveries=plan.deliveries))
    with StateReader.open(tmp_path) as reader:
        for expected, (_, run, _) in cases.items():
            assert reader.run(run.run_id).delivery_status == expected  # type: ignore[union-attr]
        (missing,) = reader.deliveries_of_run("d")
        assert missing.status == "failed" and "not defined" in (missing.last_error or "")

