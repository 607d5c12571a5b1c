"""Derived series (issue 44, composition): a series made of two others, one value per day.

The part of the query algebra that turns two series into one: their difference at each
day's close (or open), on the days both have one. Any fold then applies to it as to a
series of its own: the days it met a condition (counted or listed), its highest, lowest or
average, the day of its extreme, its last value. Two series compared with no number ("days
SOFR > US_EFFR", "the 2y closing above the 10y") are this difference against zero (read
in ``kg/cypher/frame.py``: ``series_versus``).
"""

from __future__ import annotations

import re
from typing import Any

from kg.cypher.frame import ROW_LIMIT, Frame, ReadingCandidate
from kg.cypher.lexicon import Lexicon
from kg.cypher.shapes import ShapeName as S
from kg.cypher.shapes import render, shape

# A count of days ("how many sessions", "有几天", "交易日"): the days of the derived series.
_DAYS = re.compile(
    r"\b(days?|sessions?|dates?|closes?|closing|closed)\b|天|日子|交易日|收盘|收在", re.I
)

# The last n days of the window on which both series have a value (``frame.tail_days``).
_TAIL = (
    "WITH collect({day: day, v: v}) AS dv\n"
    "UNWIND (CASE WHEN size(dv) > $tail_days THEN dv[size(dv) - $tail_days..] ELSE dv END) AS r\n"
    "WITH r.day AS day, r.v AS v ORDER BY day\n"
)


class DerivedBuilder:
    """Mixin of ``Synthesizer`` (after ``SeriesBuilder``, whose ``_window_where`` it uses)."""

    lex: Lexicon

    def _spread_daily(self, frame: Frame, a1: str, a2: str) -> ReadingCandidate | None:
        """The daily difference of two series, folded as the question asks; None when the
        question asks a spread at one instant or over ticks (``series_spread_points``)."""
        agg = frame.agg
        conds = frame.units.comparisons
        by_day = frame.daily in ("close", "open") or frame.point_time == "day"
        counted_days = agg == "count" and bool(conds) and bool(_DAYS.search(frame.question))
        if not (by_day or counted_days) or (frame.units.time is None and not counted_days):
            return None
        params: dict[str, Any] = {"a": a1, "b": a2}
        ow, dw = self._window_where(frame.units.time, params, frame.known_at)
        where = []
        for k, c in enumerate(conds):
            params[f"c{k}"] = c.value
            where.append(f"v {c.op} $c{k}")
        cond = f"WITH day, v WHERE {' AND '.join(where)}\n" if where else ""
        if agg == "count":
            fold, what = f"{cond}RETURN count(*) AS count", "number of days"
        elif frame.point_time == "day" and agg in ("max", "min"):
            order = "DESC" if agg == "max" else "ASC"
            fold = (
                f"{cond}RETURN day * 86400000 AS period_start, v AS value "
                f"ORDER BY value {order}, period_start LIMIT 1"
            )
            what = f"the day of the {'highest' if agg == 'max' else 'lowest'}"
        elif frame.point_time == "day" or (where and agg in (None, "latest")):
            fold = f"{cond}RETURN day * 86400000 AS period_start, v AS value ORDER BY period_start"
            what = "the days"
        elif agg in ("max", "min", "avg"):
            fold, what = (
                f"{cond}RETURN {agg}(v) AS value",
                {"max": "highest", "min": "lowest"}.get(agg, "average"),
            )
        elif agg == "change":
            fold = (
                f"{cond}WITH collect(v) AS vs WHERE size(vs) > 0\n"
                "RETURN vs[size(vs) - 1] - vs[0] AS value"
            )
            what = "change"
        else:
            fold = f"{cond}RETURN v AS value ORDER BY day DESC LIMIT 1"
            what = "latest"
        if frame.tail_days:  # "over the last 4 trading days of august": the window's last n days
            params["tail_days"] = frame.tail_days
            fold = _TAIL + fold
            what = f"{what}, last {frame.tail_days} days"
        pick = "vs[0]" if frame.daily == "open" else "vs[size(vs) - 1]"
        cy = render(
            S.SERIES_SPREAD_DAILY,
            left="(i:Indicator {id: $a})",
            right="(j:Indicator {id: $b})",
            obs_where=ow,
            obs_where2=ow.replace("o.", "o2."),
            daily_where=dw,
            daily_where2=dw.replace("d.", "d2."),
            pick=pick,
            fold=fold,
        )
        n1 = self.lex.entities.get(a1, {}).get("name", a1)
        n2 = self.lex.entities.get(a2, {}).get("name", a2)
        desc = f"{what}: " + shape(S.SERIES_SPREAD_DAILY).describe.format(name=n1, other=n2)
        if "LIMIT" not in fold:
            cy += f"\nLIMIT {ROW_LIMIT}"
        return ReadingCandidate(cy, params, desc, 4.0, "series", [a1, a2])
