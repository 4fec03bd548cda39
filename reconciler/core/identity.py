"""Identities of occurrences and runs (DESIGN §3.8), and the hashes that detect spec changes.

An occurrence key is ``sha256(job name, nominal UTC epoch)``: the same slot of the same job has
the same key on every machine and after every restart, so a redelivery after a crash is
recognisable downstream (it is the delivery ``Idempotency-Key``'s root). A run id adds the
attempt. A manual run has no nominal slot; its key is derived from the instant it was asked for.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from reconciler.model.job import ScheduledJob


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


def occurrence_key(job: str, nominal: float) -> str:
    """The identity of one scheduled slot of one job (whole milliseconds of the nominal time)."""
    return _digest(job, str(round(nominal * 1000)))[:32]


def manual_occurrence_key(job: str, requested_at: float) -> str:
    return _digest(job, "manual", str(round(requested_at * 1000)))[:32]


def run_id(occurrence: str, attempt: int) -> str:
    """The identity of one attempt of one occurrence: stable across restarts."""
    return f"{occurrence[:24]}-{attempt}"


# One encoder for every hash: ``json.dumps`` with these options builds a new one per call,
# which costs a daemon start hashing every job a tenth of the encoding itself.
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), default=str)


def _canonical(value: Any) -> str:
    return _CANONICAL.encode(value)


def spec_hash(job: ScheduledJob) -> str:
    """Changes whenever anything in the job's spec changes."""
    return spec_hashes(job)[0]


def schedule_hash(job: ScheduledJob) -> str:
    """Changes only when the schedule itself changes; other edits keep the pending fire."""
    return spec_hashes(job)[1]


def spec_hashes(job: ScheduledJob) -> tuple[str, str]:
    """``(spec_hash, schedule_hash)`` from one dump of the spec (a daemon start hashes every
    job)."""
    dumped = job.spec.model_dump(mode="json", by_alias=True)
    return _digest(_canonical(dumped))[:16], _digest(_canonical(dumped["schedule"]))[:16]
