"""Property-based tests (hypothesis) of the schedule math.

The oracle test re-derives the Debian DST rules independently, by brute force: it walks every
UTC minute, reads the wall clock with zoneinfo, and applies the rules to each minute, then
compares the fire sequence with ``next_fire``/``previous_fire``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from hypothesis import example, given, settings
from hypothesis import strategies as st

from reconciler.core.schedule import ScheduleState, next_fire, previous_fire
from reconciler.core.stagger import stagger_offset_ms
from reconciler.model.schedule import Schedule

ZONES = [
    "UTC", "America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "Pacific/Chatham",
    "Asia/Shanghai", "Asia/Kathmandu",
]
# 2024 transitions of the DST zones (UTC), where the interesting cases are.
ZONE_TRANSITIONS = [
    ("America/New_York", datetime(2024, 3, 10, 7, tzinfo=UTC)),
    ("America/New_York", datetime(2024, 11, 3, 6, tzinfo=UTC)),
    ("Europe/Berlin", datetime(2024, 3, 31, 1, tzinfo=UTC)),
    ("Europe/Berlin", datetime(2024, 10, 27, 1, tzinfo=UTC)),
    ("Australia/Lord_Howe", datetime(2024, 4, 6, 15, tzinfo=UTC)),
    ("Australia/Lord_Howe", datetime(2024, 10, 5, 15, 30, tzinfo=UTC)),
    ("Pacific/Chatham", datetime(2024, 4, 6, 14, tzinfo=UTC)),
    ("Pacific/Chatham", datetime(2024, 9, 28, 14, tzinfo=UTC)),
    ("UTC", datetime(2024, 12, 31, 12, tzinfo=UTC)),
    ("Asia/Shanghai", datetime(2024, 2, 28, 12, tzinfo=UTC)),
    ("Asia/Kathmandu", datetime(2024, 12, 31, 12, tzinfo=UTC)),
]
ANY_TIME = st.integers(
    int(datetime(1971, 1, 1, tzinfo=UTC).timestamp()),
    int(datetime(2200, 1, 1, tzinfo=UTC).timestamp()),
)


@dataclass(frozen=True)
class Fields:
    """A cron expression drawn as value sets, so the oracle knows what it means."""

    minutes: frozenset[int] | int | None    # a set, a '*/n' step, or '*'
    hours: frozenset[int] | int | None
    weekdays: frozenset[int] | None          # cron numbering, Sunday 0; None = '*'

    def text(self) -> str:
        return " ".join([_field(self.minutes), _field(self.hours), "*", "*",
                         _field(self.weekdays)])

    @property
    def fixed_time(self) -> bool:
        return isinstance(self.minutes, frozenset) and isinstance(self.hours, frozenset)

    def matches(self, wall: datetime) -> bool:
        cron_weekday = (wall.weekday() + 1) % 7
        return (_has(self.minutes, wall.minute) and _has(self.hours, wall.hour)
                and (self.weekdays is None or cron_weekday in self.weekdays))


def _field(value: frozenset[int] | int | None) -> str:
    if value is None:
        return "*"
    if isinstance(value, int):
        return f"*/{value}"
    return ",".join(str(v) for v in sorted(value))


def _has(value: frozenset[int] | int | None, number: int) -> bool:
    if value is None:
        return True
    if isinstance(value, int):
        return number % value == 0
    return number in value


def _field_strategy(high: int) -> st.SearchStrategy[frozenset[int] | int | None]:
    return st.one_of(
        st.none(),
        st.integers(1, 12),
        st.frozensets(st.integers(0, high), min_size=1, max_size=6),
    )


FIELDS = st.builds(
    Fields,
    minutes=_field_strategy(59),
    hours=st.one_of(
        st.none(), st.integers(1, 6),
        # The small hours, where clocks change, most of the time.
        st.frozensets(st.integers(0, 4), min_size=1), st.frozensets(st.integers(0, 23), min_size=3),
    ),
    weekdays=st.one_of(st.none(), st.frozensets(st.integers(0, 6), min_size=3)),
)


def oracle_fires(fields: Fields, zone_name: str, start: int, end: int) -> list[int]:
    """Every fire in ``(start, end]``, minute by minute, by the Debian rules."""
    zone = ZoneInfo(zone_name)
    fires: list[int] = []
    instant = start - start % 60 + 60
    previous_local = datetime.fromtimestamp(instant - 60, zone)
    while instant <= end:
        local = datetime.fromtimestamp(instant, zone)
        wall = local.replace(tzinfo=None, fold=0)
        in_second_pass = local.fold == 1
        if fields.matches(wall):
            fires_now = not (in_second_pass and fields.fixed_time)
        else:
            fires_now = fields.fixed_time and _gap_matches(fields, previous_local, local)
        if fires_now:
            fires.append(instant)
        previous_local = local
        instant += 60
    return fires


def _gap_matches(fields: Fields, before: datetime, now: datetime) -> bool:
    # Clocks jumped between the previous minute and this one: the skipped wall minutes run now.
    skipped = before.replace(tzinfo=None, fold=0) + timedelta(minutes=1)
    target = now.replace(tzinfo=None, fold=0)
    while skipped < target:
        if fields.matches(skipped):
            return True
        skipped += timedelta(minutes=1)
    return False


def exact(text: str, zone: str) -> Schedule:
    return Schedule.model_validate({"cron": text, "timezone": zone, "stagger": "0"})


NEW_YORK_FALL = ZONE_TRANSITIONS[1]
LORD_HOWE_SPRING = ZONE_TRANSITIONS[5]


@settings(max_examples=150, deadline=None)
# Each rule once for sure, whatever the random draw: fixed time in a fold and in a gap, a
# wildcard starting in the first pass of a fold.
@example(Fields(frozenset({30}), frozenset({1}), None), NEW_YORK_FALL, -90)
@example(Fields(frozenset({15}), frozenset({2}), None), LORD_HOWE_SPRING, -120)
@example(Fields(frozenset({10}), None, None), NEW_YORK_FALL, -30)
@example(Fields(None, frozenset({1, 2}), frozenset({0})), NEW_YORK_FALL, -200)
@given(
    fields=FIELDS,
    zone_and_transition=st.sampled_from(ZONE_TRANSITIONS),
    shift_minutes=st.integers(-30 * 60, 4 * 60),
)
def test_fires_match_a_brute_force_oracle_of_the_debian_rules(
    fields: Fields, zone_and_transition: tuple[str, datetime], shift_minutes: int
) -> None:
    zone, near = zone_and_transition
    start = int(near.timestamp()) + shift_minutes * 60 + 17
    end = start + 36 * 3600
    expected = oracle_fires(fields, zone, start, end)
    schedule = exact(fields.text(), zone)
    found: list[int] = []
    after = float(start)
    while (fire := next_fire("job", schedule, ScheduleState(), after)) and fire.nominal <= end:
        found.append(int(fire.nominal))
        after = fire.effective
    assert found == expected, fields.text()
    # Every ten minutes through the window, the due fire is the oracle's latest one.
    for probe in range(start + 600, end, 600):
        earlier = [instant for instant in expected if instant <= probe]
        if earlier:
            due = previous_fire("job", schedule, ScheduleState(), probe)
            assert due is not None and due.nominal == earlier[-1], (fields.text(), probe)


CRON_TEXTS = st.sampled_from([
    "* * * * *", "*/7 * * * *", "0 * * * *", "30 2 * * *", "30 1 * * *", "15,45 */3 * * *",
    "0 0 29 2 *", "0 0 31 * *", "0 9 * * 1-5", "0 0 1 * 1", "0 0 */2 * 1", "@weekly",
    "59 23 31 12 *", "0 12 1-7 * mon",
])


@settings(max_examples=150, deadline=None)
@given(
    text=CRON_TEXTS, zone=st.sampled_from(ZONES), start=ANY_TIME,
    fraction=st.floats(0, 0.999), name=st.from_regex(r"[a-z][a-z0-9-]{0,20}", fullmatch=True),
)
def test_next_is_strictly_after_and_iteration_never_skips_what_previous_reports(
    text: str, zone: str, start: int, fraction: float, name: str
) -> None:
    schedule = Schedule.model_validate({"cron": text, "timezone": zone})
    after = start + fraction
    fire = next_fire(name, schedule, ScheduleState(), after)
    assert fire is not None and fire.effective > after and int(fire.nominal) > int(after) - 300
    before = previous_fire(name, schedule, ScheduleState(), after)
    assert before is None or before.effective <= after < fire.effective
    for _ in range(4):
        following = next_fire(name, schedule, ScheduleState(), fire.effective)
        assert following is not None
        assert following.nominal > fire.nominal and following.effective > fire.effective
        # Nothing fires in between: just before the following fire, the due one is this fire.
        due = previous_fire(name, schedule, ScheduleState(), following.effective - 0.001)
        assert due == fire
        fire = following


@given(name=st.text(min_size=1, max_size=63), window_ms=st.integers(1, 7 * 86_400_000))
def test_stagger_offset_is_stable_and_inside_its_window(name: str, window_ms: int) -> None:
    offset = stagger_offset_ms(name, window_ms)
    assert 0 <= offset < window_ms
    assert stagger_offset_ms(name, window_ms) == offset


@settings(max_examples=100, deadline=None)
@given(
    anchor=ANY_TIME,
    every_ms=st.integers(1_000, 7 * 86_400_000),
    durations=st.lists(st.floats(0, 5.0), min_size=1, max_size=25),
    stagger=st.sampled_from(["0", "90s"]),
)
def test_anchored_intervals_never_drift_whatever_the_run_durations(
    anchor: int, every_ms: int, durations: list[float], stagger: str
) -> None:
    schedule = Schedule.model_validate({
        "every": f"{every_ms}ms",
        "anchor": datetime.fromtimestamp(anchor, UTC).isoformat(),
        "stagger": stagger,
    })
    state = ScheduleState()
    now = float(anchor)
    last_nominal = None
    for duration_in_intervals in durations:
        fire = next_fire("poller", schedule, state, now)
        assert fire is not None and fire.effective > now
        offset_ms = round((fire.nominal - anchor) * 1000)
        assert offset_ms % every_ms == 0
        assert last_nominal is None or fire.nominal > last_nominal
        last_nominal = fire.nominal
        state = ScheduleState(last_nominal=fire.nominal, last_run_started=fire.effective)
        now = fire.effective + duration_in_intervals * every_ms / 1000
