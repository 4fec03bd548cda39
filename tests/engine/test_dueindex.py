"""The heap-indexed state table: due jobs come out in order, rewrites never duplicate."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from reconciler.model.state import JobState, evolve
from reconciler.runtime.dueindex import StateTable


def test_due_jobs_pop_in_order_and_rewrites_replace_the_old_entry() -> None:
    table = StateTable([JobState("b", next_effective_at=20.0),
                        JobState("a", next_effective_at=10.0),
                        JobState("c", next_effective_at=None)])
    table["b"] = evolve(table["b"], next_effective_at=5.0)  # the 20.0 entry is now stale
    assert table.next_wake() == 5.0
    assert [table.pop_next_due(30.0) for _ in range(3)] == ["b", "a", None]
    assert table.next_wake() is None  # popped jobs leave the index until re-indexed
    table.reindex("a")
    assert table.pop_next_due(9.0) is None and table.pop_next_due(10.0) == "a"
    del table["b"]
    table.pop("a")
    assert table.next_wake() is None and "c" in table


@given(st.lists(st.tuples(st.sampled_from("abcdef"), st.none() | st.floats(0, 100)),
                max_size=40), st.floats(0, 100))
def test_popping_matches_a_full_scan(writes: list[tuple[str, float | None]], now: float
                                     ) -> None:
    table = StateTable()
    for name, at in writes:
        table[name] = JobState(name, next_effective_at=at)
    expected = sorted((s.next_effective_at, n) for n, s in table.items()
                      if s.next_effective_at is not None and s.next_effective_at <= now)
    popped = []
    while (name := table.pop_next_due(now)) is not None:
        popped.append(name)
    assert popped == [name for _, name in expected]
