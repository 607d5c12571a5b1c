"""Conditions over a query's answer, and the difference from the previous answer.

The state kept per subscription is small and JSON-able (row digests, the last value,
the keys over their count), so 10,000 of them fit in a worker's table. A condition
fires when it *becomes* true: ``answer_changed`` and ``new_rows`` on a different (or
larger) row set, ``threshold`` when the value crosses to the far side (from the near
side or from no value), ``count_window`` when a key goes over its count.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from core.records import stable_id
from kg.subscribe.model import Condition, ConditionKind

Row = dict[str, Any]
MAX_DIFF_ROWS = 50


IDENTITY_COLUMNS = ("fact_id", "id")


def row_digest(row: Row) -> str:
    """A row's identity: its ``fact_id``/``id`` column when it has one (a restated fact
    whose ``doc_ids`` grew is not a new row), else all of its values."""
    for col in IDENTITY_COLUMNS:
        if isinstance(row.get(col), str):
            return stable_id("row-id", row[col])
    return stable_id("row", json.dumps(row, sort_keys=True, default=str, ensure_ascii=False))


def _number(v: Any) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int | float):
        return float(v)
    return None


@dataclass
class ConditionOutcome:
    fired: bool
    state: dict[str, Any]
    diff: dict[str, Any] = field(default_factory=dict)
    value: float | None = None  # threshold: the value now (kept in memory for the next diff)


def threshold_value(cond: Condition, rows: Sequence[Row]) -> float | None:
    return _number(rows[0].get(cond.column or "")) if rows else None


def state_of(cond: Condition, rows: Sequence[Row]) -> dict[str, Any]:
    """The state an answer leaves (also the baseline taken at registration): only what
    the next decision needs, so it changes (and is written) only on a transition: row
    digests for the row conditions, whether a threshold holds, the keys over their
    count. A value that moves on every tick is not state."""
    if cond.kind == ConditionKind.THRESHOLD:
        return {"holds": holds_threshold(cond, threshold_value(cond, rows))}
    if cond.kind == ConditionKind.COUNT_WINDOW:
        counts = window_counts(cond, rows)
        return {"over": sorted(k for k, n in counts.items() if n > (cond.count or 0))}
    return {"rows": sorted({row_digest(r) for r in rows})}


def holds_threshold(cond: Condition, value: float | None) -> bool:
    if value is None or cond.threshold is None:
        return False
    return value > cond.threshold if cond.direction == "above" else value < cond.threshold


def window_counts(cond: Condition, rows: Sequence[Row]) -> dict[str, int]:
    """Per key, the most rows inside one window of ``window_s`` (times in epoch ms)."""
    times: dict[str, list[float]] = defaultdict(list)
    for r in rows:
        t = _number(r.get(cond.time_column or ""))
        key = r.get(cond.key_column or "")
        if t is not None and key is not None:
            times[str(key)].append(t)
    width = (cond.window_s or 0) * 1000
    out: dict[str, int] = {}
    for key, ts in times.items():
        ts.sort()
        best, lo = 0, 0
        for hi, t in enumerate(ts):
            while t - ts[lo] > width:
                lo += 1
            best = max(best, hi - lo + 1)
        out[key] = best
    return out


def evaluate(
    cond: Condition,
    previous: dict[str, Any] | None,
    rows: Sequence[Row],
    *,
    previous_value: float | None = None,
) -> ConditionOutcome:
    """Fire or not on the new answer ``rows`` given the previous state (None: none yet).
    ``previous_value``: the threshold value last seen, for the diff only."""
    prev = previous or {}
    new = state_of(cond, rows)
    kind = cond.kind
    if kind == ConditionKind.THRESHOLD:
        value = threshold_value(cond, rows)
        fired = bool(new["holds"]) and not prev.get("holds", False)
        diff: dict[str, Any] = {
            "previous": previous_value,
            "value": value,
            "threshold": cond.threshold,
            "direction": cond.direction,
        }
        return ConditionOutcome(fired=fired, state=new, diff=diff, value=value)
    if kind == ConditionKind.COUNT_WINDOW:
        newly = sorted(set(new["over"]) - set(prev.get("over") or ()))
        counts = window_counts(cond, rows)
        diff = {"keys": newly, "counts": {k: counts[k] for k in newly}, "over": cond.count}
        return ConditionOutcome(fired=bool(newly), state=new, diff=diff)
    before = set(prev.get("rows") or ())
    after = set(new["rows"])
    added = [r for r in rows if row_digest(r) not in before][:MAX_DIFF_ROWS]
    diff = {"added": added, "removed": len(before - after)}
    if kind == ConditionKind.ANSWER_CHANGED:
        fired = before != after
    else:
        fired = bool(after - before)
    return ConditionOutcome(fired=fired, state=new, diff=diff)
