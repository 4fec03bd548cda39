from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reconciler.model.state import JobState, RunRecord, evolve


def test_evolve_refuses_unknown_fields_like_replace() -> None:
    with pytest.raises(TypeError, match="no field"):
        evolve(JobState("a"), next_fire=1.0)


def test_evolve_validates_like_the_constructor() -> None:
    with pytest.raises(ValueError, match="unknown run status"):
        evolve(JobState("a"), last_status="exploded")
    with pytest.raises(ValueError, match="unknown trigger"):
        evolve(RunRecord("r", "o", "a", None, 0.0), trigger="cron")


@given(st.floats(allow_nan=False) | st.none(), st.integers(0, 10), st.booleans())
def test_evolve_equals_replace(next_at: float | None, errors: int, disabled: bool) -> None:
    state = JobState("a", anchor=5.0, consecutive_errors=1)
    changes = {"next_effective_at": next_at, "consecutive_errors": errors, "disabled": disabled}
    assert evolve(state, **changes) == replace(state, **changes)  # type: ignore[arg-type]
    assert state.consecutive_errors == 1  # the original is untouched
