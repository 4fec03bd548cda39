"""Prometheus metrics: counters and histograms fed by service events, gauges read at scrape time.

Everything lives on a dedicated ``CollectorRegistry`` (never the process-global one), so tests
and several services in one process do not share series. Labels are job names and small closed
sets (status, trigger, reason, kind), never run ids: the number of series grows with the jobs,
not with the runs. A job removed from the specs drops its series at the next reconcile.

Gauges that describe the state (next fire, failures, running) are computed from
``service.snapshot()`` when scraped, which never waits for the service's lock.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Protocol

from prometheus_client import CollectorRegistry, Counter, Histogram, ProcessCollector
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.registry import Collector

from reconciler.clock import Clock, SystemClock
from reconciler.core.jobview import DesiredJob
from reconciler.core.plan import JobChange
from reconciler.core.stagger import job_offset_ms
from reconciler.model.state import JobState, RunRecord, SkipRecord
from reconciler.runtime.events import Alert

# Jobs run for seconds to hours: the default buckets (up to 10 s) would put most runs in +Inf.
DURATION_BUCKETS = (0.1, 0.5, 1, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 7200)
# A healthy scheduler starts within a second; minutes mean it is overloaded or was held.
LAG_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900)

# The outbox's terminal failure, and what a delivery event may say instead.
DELIVERY_FAILED = frozenset({"failed", "error"})

CONTENT_TYPE = CONTENT_TYPE_LATEST


class StateSource(Protocol):
    """What the scrape-time gauges read: the service's snapshot and desired specs."""

    desired: dict[str, DesiredJob]
    ready: bool

    def snapshot(self) -> Mapping[str, JobState]: ...


class MetricsSink:
    """An ``EventSink`` that counts runs, skips, alerts and delivery failures.

    Create it before the service (the service takes it as, or inside, its sink), then call
    ``watch(service)`` once (``build_app`` does) to add the state gauges and to let the lag
    histogram subtract each job's stagger."""

    def __init__(self, registry: CollectorRegistry | None = None, clock: Clock | None = None
                 ) -> None:
        self.registry = registry or CollectorRegistry()
        self._clock: Clock = clock or SystemClock()
        self._source: StateSource | None = None
        self._families = _Families(self.registry)
        # Which label values each job used, so a removed job's series can be dropped.
        self._series: dict[str, set[tuple[str, tuple[str, ...]]]] = {}

    # ---- wiring ----------------------------------------------------------------------------

    def watch(self, source: StateSource, *, process: bool = True) -> None:
        if self._source is source:
            return
        if self._source is not None:
            raise ValueError("these metrics already watch another service")
        self._source = source
        self.registry.register(_StateCollector(source))
        if process:
            # CPU, memory and open files of the daemon: Linux only; elsewhere it exports nothing.
            ProcessCollector(registry=self.registry)

    def render(self) -> bytes:
        """The registry in the Prometheus text format (``CONTENT_TYPE``)."""
        return generate_latest(self.registry)

    # ---- EventSink -------------------------------------------------------------------------

    def reconciled(self, changes: list[JobChange], at: float) -> None:
        self._families.reconciles.inc()
        for change in changes:
            if change.kind == "removed":
                self._forget(change.name)

    def run_started(self, run: RunRecord) -> None:
        if run.trigger != "schedule" or run.scheduled_at is None:
            return  # manual, retry and catch-up starts are late on purpose
        # The clock, not the record: an armed run is recorded with its slot as its start and
        # announced once it has begun, so this is when it really started (an upper bound).
        lag = self._clock.now() - run.scheduled_at - self._stagger(run.job)
        self._observe("lag", (run.job,), max(0.0, lag))

    def run_finished(self, run: RunRecord) -> None:
        status = run.status or "unknown"
        self._count("runs", (run.job, status, run.trigger))
        if run.finished_at is not None:
            self._observe("duration", (run.job,), max(0.0, run.finished_at - run.started_at))

    def skipped(self, skip: SkipRecord) -> None:
        self._count("skipped", (skip.job, skip.reason))

    def alert(self, alert: Alert) -> None:
        self._count("alerts", (alert.job, alert.kind))

    def delivery(self, record: dict[str, Any]) -> None:
        job, status = record.get("job"), record.get("status")
        if isinstance(job, str) and status in DELIVERY_FAILED:
            self._count("delivery_failures", (job,))

    # ---- helpers ---------------------------------------------------------------------------

    def _stagger(self, job: str) -> float:
        desired = None if self._source is None else self._source.desired.get(job)
        if desired is None:
            return 0.0
        return job_offset_ms(job, desired.spec.spec.schedule) / 1000

    def _count(self, family: str, labels: tuple[str, ...]) -> None:
        counter = self._families.counters[family]
        counter.labels(*labels).inc()
        self._series.setdefault(labels[0], set()).add((family, labels))

    def _observe(self, family: str, labels: tuple[str, ...], value: float) -> None:
        self._families.histograms[family].labels(*labels).observe(value)
        self._series.setdefault(labels[0], set()).add((family, labels))

    def _forget(self, job: str) -> None:
        for family, labels in self._series.pop(job, set()):
            metric = self._families.counters.get(family) or self._families.histograms[family]
            metric.remove(*labels)


class _Families:
    """The event-fed metric families, registered once on one registry."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.reconciles = Counter(
            "reconciler_reconciles", "Reconcile passes (spec loads applied to the state).",
            registry=registry)
        self.counters: dict[str, Counter] = {
            "runs": Counter("reconciler_runs", "Finished runs by job, status and trigger.",
                            ["job", "status", "trigger"], registry=registry),
            "skipped": Counter("reconciler_skipped", "Occurrences skipped, by job and reason.",
                               ["job", "reason"], registry=registry),
            "alerts": Counter("reconciler_alerts", "Alerts raised, by job and kind.",
                              ["job", "kind"], registry=registry),
            "delivery_failures": Counter(
                "reconciler_delivery_failures", "Result deliveries that failed for good.",
                ["job"], registry=registry),
        }
        self.histograms: dict[str, Histogram] = {
            "duration": Histogram(
                "reconciler_run_duration_seconds", "Run duration, start to finish.",
                ["job"], buckets=DURATION_BUCKETS, registry=registry),
            "lag": Histogram(
                "reconciler_schedule_lag_seconds",
                "Start of a scheduled run minus its due time (nominal slot plus stagger).",
                ["job"], buckets=LAG_BUCKETS, registry=registry),
        }


class _StateCollector(Collector):
    """Gauges computed from the service's snapshot at each scrape."""

    def __init__(self, source: StateSource) -> None:
        self.source = source

    def describe(self) -> Iterator[Metric]:
        return iter(())  # the families are dynamic; an empty describe skips a snapshot read

    def collect(self) -> Iterator[Metric]:
        states = self.source.snapshot()
        next_fire = GaugeMetricFamily(
            "reconciler_next_fire_timestamp_seconds",
            "When the job's next run is due (UTC epoch seconds, stagger included).",
            labels=["job"])
        failures = GaugeMetricFamily(
            "reconciler_consecutive_failures", "Failed runs in a row since the last success.",
            labels=["job"])
        running = GaugeMetricFamily(
            "reconciler_job_running", "1 while a run of the job is in flight.", labels=["job"])
        disabled = GaugeMetricFamily(
            "reconciler_job_disabled", "1 when the job was disabled (e.g. schedule errors).",
            labels=["job"])
        for name in sorted(states):
            state = states[name]
            if state.next_effective_at is not None and not state.disabled:
                next_fire.add_metric([name], state.next_effective_at)
            failures.add_metric([name], state.consecutive_errors)
            running.add_metric([name], 1.0 if state.running is not None else 0.0)
            disabled.add_metric([name], 1.0 if state.disabled else 0.0)
        yield GaugeMetricFamily("reconciler_jobs", "Jobs in the state.", value=len(states))
        yield GaugeMetricFamily("reconciler_ready", "1 after the first reconcile.",
                                value=1.0 if self.source.ready else 0.0)
        yield from (next_fire, failures, running, disabled)

