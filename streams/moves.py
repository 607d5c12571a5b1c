"""Indicator move and threshold alerts (pure logic; the agent is
streams/processors/indicator_alerts.py).

Per indicator the state keeps the last observation and a reference observation. A
move alert fires when the value has moved at least the configured amount away from the
reference or from the previous observation (a jump after a drift the other way still
counts): in basis points for rates quoted in percent or bp (a 10 bp default), in
percent of the reference otherwise. The reference then restarts at the new value, so
one jump fires once; it also rolls forward once it is older than the window, so slow
drifts are not reported as a move. Threshold alerts fire when a value crosses a
configured level. Ticks older than the last one seen are ignored (out of order).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from core.records import Alert, AlertKind, Evidence, IndicatorTick, stable_id, to_epoch_ms

BP_UNITS = {"bp", "bps"}
RATE_UNITS = {"%", "pct", "percent"} | BP_UNITS


class Threshold(BaseModel):
    level: float
    direction: Literal["above", "below"] = "above"


class MoveRules(BaseModel):
    move_bp: float = Field(default=10.0, gt=0)  # rates (unit % or bp)
    move_pct: float = Field(default=2.0, gt=0)  # everything else, relative to the reference
    window_s: float = Field(default=3600.0, gt=0)
    thresholds: dict[str, list[Threshold]] = Field(default_factory=dict)


class Obs(BaseModel):
    id: str
    value: float
    time_ms: int


class IndicatorState(BaseModel):
    indicator_id: str
    last: Obs
    ref: Obs
    sides: dict[str, bool] = Field(default_factory=dict)  # threshold key -> value above it


def _move(tick: IndicatorTick, ref: Obs, rules: MoveRules) -> tuple[float, str, bool]:
    """(size, description, exceeds) of the move from ``ref`` to ``tick``."""
    unit = tick.unit.strip().lower()
    if unit in RATE_UNITS:
        bp = (tick.value - ref.value) * (1.0 if unit in BP_UNITS else 100.0)
        return bp, f"{bp:+.1f} bp", abs(bp) >= rules.move_bp
    if ref.value == 0:
        return 0.0, "n/a", False
    pct = (tick.value - ref.value) / abs(ref.value) * 100.0
    return pct, f"{pct:+.2f}%", abs(pct) >= rules.move_pct


def _severity(size: float, limit: float) -> Literal["info", "warning", "critical"]:
    ratio = abs(size) / limit
    return "critical" if ratio >= 3 else "warning" if ratio >= 1.5 else "info"


def update(
    state: IndicatorState | None, tick: IndicatorTick, rules: MoveRules
) -> tuple[IndicatorState | None, list[Alert]]:
    """Fold one tick into the indicator's state; return the new state and any alerts."""
    obs = Obs(id=tick.id, value=tick.value, time_ms=to_epoch_ms(tick.event_time))
    if state is None:
        sides = {_key(t): tick.value > t.level for t in rules.thresholds.get(tick.indicator_id, [])}
        return IndicatorState(indicator_id=tick.indicator_id, last=obs, ref=obs, sides=sides), []
    if obs.time_ms <= state.last.time_ms:
        return state, []  # out of order or a replay: moves are judged in event time
    alerts: list[Alert] = []
    ref = state.ref
    if obs.time_ms - ref.time_ms > rules.window_s * 1000:
        ref = state.last  # the window rolls on
    size, text, exceeds = _move(tick, ref, rules)
    step = _move(tick, state.last, rules)
    if abs(step[0]) > abs(size):
        ref, (size, text, exceeds) = state.last, step
    if exceeds:
        limit = rules.move_bp if tick.unit.strip().lower() in RATE_UNITS else rules.move_pct
        minutes = (obs.time_ms - ref.time_ms) / 60_000
        alerts.append(
            Alert(
                id=stable_id("indicator_move", tick.indicator_id, tick.id),
                source="indicator_alerts",
                event_time=tick.event_time,
                kind=AlertKind.INDICATOR_MOVE,
                entity_id=tick.indicator_id,
                severity=_severity(size, limit),
                message=f"{tick.name or tick.indicator_id} moved {text} to {tick.value:g}"
                f"{tick.unit} in {minutes:.0f} min",
                evidence=Evidence(
                    source_ids=[ref.id, tick.id],
                    values={"from": ref.value, "to": tick.value, "move": round(size, 4)},
                ),
            )
        )
        ref = obs  # one jump, one alert
    sides = dict(state.sides)
    for t in rules.thresholds.get(tick.indicator_id, []):
        key, above = _key(t), tick.value > t.level
        was = sides.get(key)
        sides[key] = above
        crossed = was is not None and was != above and above == (t.direction == "above")
        if crossed:
            alerts.append(
                Alert(
                    id=stable_id("indicator_threshold", tick.indicator_id, key, tick.id),
                    source="indicator_alerts",
                    event_time=tick.event_time,
                    kind=AlertKind.INDICATOR_THRESHOLD,
                    entity_id=tick.indicator_id,
                    severity="warning",
                    message=f"{tick.name or tick.indicator_id} crossed {t.direction} "
                    f"{t.level:g}{tick.unit}: {tick.value:g}{tick.unit}",
                    evidence=Evidence(
                        source_ids=[state.last.id, tick.id],
                        values={"level": t.level, "from": state.last.value, "to": tick.value},
                    ),
                )
            )
    new = IndicatorState(indicator_id=tick.indicator_id, last=obs, ref=ref, sides=sides)
    return new, alerts


def _key(t: Threshold) -> str:
    return f"{t.direction}:{t.level:g}"
