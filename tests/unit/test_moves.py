from __future__ import annotations

from datetime import UTC, datetime, timedelta

from core.records import AlertKind, IndicatorTick
from streams.moves import IndicatorState, MoveRules, Threshold, update

T0 = datetime(2026, 11, 20, 1, 0, tzinfo=UTC)


def tick(value: float, minutes: float, ind: str = "SHIBOR_ON", unit: str = "%") -> IndicatorTick:
    return IndicatorTick(
        source="t",
        indicator_id=ind,
        value=value,
        unit=unit,
        event_time=T0 + timedelta(minutes=minutes),
    )


def run(ticks: list[IndicatorTick], rules: MoveRules) -> tuple[IndicatorState | None, list]:
    state, alerts = None, []
    for t in ticks:
        state, fired = update(state, t, rules)
        alerts += fired
    return state, alerts


def test_a_jump_in_a_rate_fires_once_in_basis_points() -> None:
    ticks = [tick(1.36 + i * 0.001, i * 5) for i in range(5)] + [tick(1.49, 25), tick(1.495, 30)]
    _, alerts = run(ticks, MoveRules(move_bp=10))
    assert len(alerts) == 1
    a = alerts[0]
    assert a.kind == AlertKind.INDICATOR_MOVE and a.entity_id == "SHIBOR_ON"
    assert a.evidence.values["move"] == round((1.49 - 1.36) * 100, 4)  # vs the reference
    assert a.evidence.source_ids == [ticks[0].id, ticks[5].id]
    assert "+13.0 bp" in a.message


def test_slow_drift_within_the_window_rolls_the_reference() -> None:
    # 2 bp every 40 min: 12 bp over 4 h, but never 10 bp within one window
    ticks = [tick(2.0 + i * 0.02, i * 40) for i in range(7)]
    _, alerts = run(ticks, MoveRules(move_bp=10, window_s=3600))
    assert alerts == []


def test_relative_moves_for_non_rates_and_severity() -> None:
    ticks = [tick(100.0, 0, ind="CSI300", unit="pt"), tick(107.0, 5, ind="CSI300", unit="pt")]
    _, alerts = run(ticks, MoveRules(move_pct=2.0))
    assert [a.severity for a in alerts] == ["critical"]  # 7% is 3.5x the 2% limit


def test_out_of_order_ticks_are_ignored() -> None:
    state, _ = run([tick(1.0, 10)], MoveRules())
    new, alerts = update(state, tick(5.0, 5), MoveRules())
    assert new is state and alerts == []


def test_threshold_crossings_in_the_configured_direction() -> None:
    rules = MoveRules(move_bp=1000, thresholds={"CN10Y": [Threshold(level=2.0, direction="above")]})
    values = [1.95, 1.99, 2.01, 2.03, 1.98, 2.02]
    _, alerts = run([tick(v, i, ind="CN10Y") for i, v in enumerate(values)], rules)
    crossings = [a for a in alerts if a.kind == AlertKind.INDICATOR_THRESHOLD]
    assert [a.evidence.values["to"] for a in crossings] == [2.01, 2.02]  # upward crossings only


def test_a_jump_after_a_drift_the_other_way_still_fires() -> None:
    # drift -6 bp over 30 min, then +11 bp in one step: only +5 bp vs the reference
    ticks = [tick(1.40 - i * 0.01, i * 5) for i in range(7)] + [tick(1.45, 35)]
    _, alerts = run(ticks, MoveRules(move_bp=10))
    assert len(alerts) == 1
    assert alerts[0].evidence.source_ids == [ticks[6].id, ticks[7].id]  # vs the previous tick
