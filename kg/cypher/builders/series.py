"""Indicator series: points in a time window, one value per day, aggregates
and rankings over them, derived series (spreads, month-on-month changes), which day or
month, one series read in the periods another meets a condition, series named by their
relations.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from kg.cypher.frame import (
    _AGG_SHAPES,
    _CLOSE_WORD,
    _DAILY_AGGS,
    _DAILY_PICKS,
    _IDENT,
    _ONE_VALUE_WINDOWS,
    _VALUE_AGGS,
    _WHICH,
    ROW_LIMIT,
    Frame,
    ReadingCandidate,
    _any,
    _asks,
    _ever,
    _folds,
    _month_starts,
)
from kg.cypher.lexicon import Lexicon, Sense, triggers
from kg.cypher.shapes import ShapeName as S
from kg.cypher.shapes import render, shape
from kg.cypher.units import TimeWindow, untimed
from kg.graph.ontology import Ontology


class SeriesBuilder:
    lex: Lexicon
    onto: Ontology

    # -- "when": the start of a fact's validity -------------------------------------------
    def _when(self, frame: Frame) -> list[ReadingCandidate]:
        if not frame.when or not frame.anchors or (frame.periods and frame.units.comparisons):
            return []  # "on the days when A closed above x": a filter, not "since when"
        if frame.point_time and all(a.label == "Indicator" for a in frame.anchors):
            return []  # "A减B的收盘利差哪天最大": the day of a series' extreme, not a fact's start
        rels = [r for r in frame.relations if _IDENT.match(r)] or [""]
        out = []
        a0 = frame.anchors[0]
        other = frame.anchors[1] if len(frame.anchors) > 1 else None
        for r in rels[:3]:
            rel = f":{r}" if r else ""
            if other is not None:
                cy = render(S.WHEN_PAIR, rel=rel)
                params = {"a0": a0.key, "a1": other.key}
                desc = f"since when {a0.name} {r.lower()} {other.name}"
            elif r:
                cy = render(S.WHEN_ONE, rel=rel)
                params = {"a0": a0.key}
                desc = f"since when {a0.name} {r.lower()}"
            else:
                continue
            out.append(ReadingCandidate(cy, params, desc, 6.0, "when", list(params.values())))
        return out

    # -- indicator values (dynamic partition) ---------------------------------------------
    def _indicator_anchors(self, frame: Frame) -> list[tuple[str, str, str]]:
        """(indicator match pattern, anchor id, how) for anchors that have values."""
        out = []
        for a in frame.anchors:
            if a.label == "Indicator":
                out.append(("(i:Indicator {id: $a})", a.key, "indicator"))
            elif a.label in ("Bond", "Region", "Company", "Fund") and (
                frame.units.value_word or frame.agg not in (None, "count")
            ):
                # relational reasoning: the indicator that tracks the anchor
                out.append(("(i:Indicator)-[:TRACKS]->(:Entity {id: $a})", a.key, "tracks"))
            elif (
                frame.units.value_word
                or frame.agg not in (None, "count")
                or (frame.agg == "count" and frame.units.comparisons and frame.units.time)
            ):  # "the rate the Fed sets": the series a relation the question names joins
                for r in frame.relations:
                    if _IDENT.match(r) and self.lex.edge_stats.get((a.label, r, "Indicator")):
                        pat = f"(:Entity {{id: $a}})-[:{r}]->(i:Indicator)"
                        out.append((pat, a.key, "tracks"))
                        break
        return out

    def series_set_frame(self, frame: Frame) -> Frame | None:
        """ "The yields that track US Treasury notes: spread at Friday's close", "跟踪美国国债
        的两个收益率 哪个跌得更多": a series question about indicators named by their
        relations, not by name. The frame of the set query (which indicators), to be run
        first; None when the question names its series or asks nothing of their values."""
        if not frame.anchors or any(a.label == "Indicator" for a in frame.anchors):
            return None
        if frame.target != "Indicator" and "Indicator" not in frame.concepts:
            return None
        if frame.most is not None or frame.agg == "count" or frame.same_as:
            return None
        if not (frame.spread or frame.compare is not None or frame.direction is not None):
            return None  # a spread, "which is higher", "which fell more" of the set
        units = replace(frame.units, aggregation=None, comparisons=(), time=None)
        return replace(
            frame,
            target="Indicator",
            units=units,
            spread=False,
            compare=None,
            daily=None,
            direction=None,
            top=None,
            last_n=None,
            fall=False,
            range_agg=False,
        )

    def with_series(self, frame: Frame, ids: list[str]) -> Frame:
        """The question again, about the indicators the set query found."""
        senses = [
            Sense("entity", i, "Indicator", str(self.lex.entities.get(i, {}).get("name") or i))
            for i in ids
        ]
        return replace(
            frame,
            anchors=senses,
            concepts=[c for c in frame.concepts if c not in ("Indicator", "Bond")],
            target=None,
            relations=[],
            values=[],
            negated=frozenset(),
            either={},
            anchor_at={i: 0 for i in ids},
        )

    def _series(self, frame: Frame, now: datetime) -> list[ReadingCandidate]:
        u = frame.units
        wants_values = (
            u.value_word
            or u.time is not None
            or frame.agg in ("max", "min", "avg", "change", "first", "latest")
            or (frame.agg == "count" and bool(u.comparisons))
            or frame.spread
            or frame.range_agg
            or frame.compare is not None
            or frame.mom
            or frame.point_time is not None
        )
        if frame.target == "Indicator" and wants_values and frame.agg in ("max", "min", "avg"):
            as_values = self._regions_as_values(frame, "Indicator")
            if as_values is not frame and not as_values.anchors:  # "US yield indicators"
                return self._series_over_set(as_values)
        inds = self._indicator_anchors(frame)
        if not inds and wants_values and frame.agg in ("max", "min", "avg"):
            return self._series_over_set(frame)
        if not inds or not wants_values:
            return []
        direct = [aid for _p, aid, how in inds if how == "indicator"]
        if frame.spread and len(direct) >= 2:  # a derived series: the daily difference
            derived = self._spread_daily(frame, direct[0], direct[1])  # type: ignore[attr-defined]
            if derived is not None:
                return [derived]
        joint = self._series_joint(frame, [a for _p, a, how in inds if how == "indicator"])
        if joint is not None:
            return [joint]
        filtered = self._series_filtered(frame, [a for _p, a, how in inds if how == "indicator"])
        if filtered is not None:
            return [filtered]
        counted = frame.agg == "count" and not u.comparisons  # "how many" of a spread: no
        if frame.spread and len(inds) >= 2 and not counted and not frame.range_agg:
            return [self._spread(frame, inds[:2])]
        listed = len(direct) >= 3 and frame.wh and not frame.spread  # "(1m 3m 6m 1y ...)"
        if listed and frame.compare is None and frame.most is not None:
            frame = replace(frame, compare=frame.most)  # "which fell the most"
        if listed and len(u.comparisons) == 1 and frame.compare is None:
            return [self._which_meet(frame, direct)]
        if frame.compare and frame.wh and len(direct) >= 2 and not frame.spread:
            return [self._which_of(frame, direct)]
        if (  # "which of them rose between the Nov 16 and Nov 20 closes"
            frame.direction
            and frame.wh
            and len(direct) >= 2
            and not frame.spread
            and u.time is not None
            and _WHICH.search(frame.question)
        ):
            return [self._which_of(frame, direct)]
        # "what is the frequency of US1M", "SOFR属于什么类别": a property of the series asked,
        # not its value (the attribute reading answers; the latest value only if it cannot)
        asks_property = (
            bool(self._named_text_props(frame))
            and frame.agg in (None, "latest")
            and u.time is None
            and not u.comparisons
        )
        out = []
        for pattern, aid, how in inds:
            prior = 3.0 if how == "indicator" else 2.0
            if asks_property:
                prior -= 1.5
            if how == "tracks" and (u.time is not None or frame.agg in _VALUE_AGGS):
                prior += 2.5  # "the highest yield of the 10-year bond on <day>"
            if how == "tracks" and any(a.label == "Indicator" for a in frame.anchors):
                continue
            if (
                frame.wh
                and frame.target not in (None, "Indicator")
                and frame.relations
                and frame.agg is None
                and u.time is None
            ):
                prior -= 1.5  # "who issues the bond the 10Y yield tracks": an entity

            out.append(self._series_one(frame, pattern, aid, prior))
        return out

    def _series_joint(self, frame: Frame, ids: list[str]) -> ReadingCandidate | None:
        """Days on which each of two or more series meets its own comparison ("days the US
        10Y closed above 4.2 and the 2Y below 3.6"): each comparison belongs to the series
        named last before it, every series to one comparison (``series_joint_days``)."""
        comps = frame.units.comparisons
        if len(comps) < 2 or len(set(ids)) < 2 or frame.spread:
            return None
        owners: list[str] = []
        for at in frame.compare_at:
            before = [a for a in ids if frame.anchor_at.get(a, 10**6) <= at + 1]
            if not before:
                return None
            owners.append(max(before, key=lambda a: frame.anchor_at.get(a, -1)))
        if len(set(owners)) != len(owners):
            return None  # "between 4.2 and 4.3": one series, two bounds
        params: dict[str, Any] = {"ids": owners, "n": len(owners)}
        conds = []
        for k, (a, c) in enumerate(zip(owners, comps, strict=True)):
            params[f"s{k}"], params[f"c{k}"] = a, c.value
            conds.append(f"(r.s = $s{k} AND r.v {c.op} $c{k})")
        ow, dw = self._window_where(frame.units.time, params, frame.known_at)
        counted = frame.agg == "count"
        fold = (
            "RETURN count(k) AS count"
            if counted
            else "RETURN k AS period_start, [r IN met WHERE r.s = $s0][0].v AS value\n"
            "ORDER BY period_start"
        )
        pick = _DAILY_PICKS["open" if frame.daily == "open" else "close"]
        cond = " OR ".join(conds)
        cy = render(
            S.SERIES_JOINT_DAYS, obs_where=ow, daily_where=dw, pick=pick, conds=cond, fold=fold
        )
        names = [self.lex.entities.get(a, {}).get("name", a) for a in owners]
        what = " and ".join(f"{n} {c.op} a value" for n, c in zip(names, comps, strict=True))
        desc = ("number of " if counted else "") + shape(S.SERIES_JOINT_DAYS).describe.format(
            conds=what
        )
        return ReadingCandidate(f"{cy}\nLIMIT {ROW_LIMIT}", params, desc, 7.0, "series", owners)

    def _series_filtered(self, frame: Frame, ids: list[str]) -> ReadingCandidate | None:
        """One series read in the periods another meets the question's comparison ("the
        average CPI in the months M2 was below 7.5"): the condition's series is the one
        named last before the comparison, the other is read (``series_filtered``)."""
        comps = frame.units.comparisons
        if not frame.periods or len(ids) < 2 or len(comps) != 1:
            return None
        at = frame.compare_at[0]
        before = [a for a in ids if frame.anchor_at.get(a, 10**6) <= at + 1]
        if not before:
            return None
        cond = max(before, key=lambda a: frame.anchor_at.get(a, -1))
        target = next(a for a in ids if a != cond)
        if frame.spread and frame.anchor_at.get(target, -1) <= at:
            return None  # "days the 10y-2y spread was above 0.8": one spread, not a filter
        params: dict[str, Any] = {"a": target, "b": cond, "f0": comps[0].value}
        ow, dw = self._window_where(frame.units.time, params, frame.known_at)
        monthly = all(
            self.lex.entities.get(a, {}).get("frequency") == "monthly" for a in (cond, target)
        )
        if monthly:  # calendar months: the count of month starts up to a time is its month
            params["months"] = _month_starts(frame.units.time)
            keys = {k: f"size([m IN $months WHERE m <= {k}.t])" for k in ("q", "p")}
        else:
            keys = {k: f"{k}.t / 86400000" for k in ("q", "p")}
        head = render(
            S.SERIES_FILTERED,
            obs_where=ow,
            daily_where=dw,
            obs_where2=ow.replace("o.", "o2."),
            daily_where2=dw.replace("d.", "d2."),
            key_q=keys["q"],
            key_p=keys["p"],
            op=comps[0].op,
        )
        rest = replace(frame, units=replace(frame.units, comparisons=()))
        agg = frame.agg if frame.agg not in (None, "latest") else "avg"
        ret = self._series_return(rest, agg, params)
        slots = params.pop("_slots", {})
        name = self.lex.entities.get(target, {}).get("name", target)
        other = self.lex.entities.get(cond, {}).get("name", cond)
        desc = shape(S.SERIES_FILTERED).describe.format(
            agg=agg, name=name, other=other, op=comps[0].op
        )
        cy = f"{head}\n{render(ret, **slots)}\nLIMIT {ROW_LIMIT}"
        return ReadingCandidate(cy, params, desc, 7.0, "series", [target, cond])

    def _which_of(self, frame: Frame, ids: list[str]) -> ReadingCandidate:
        """Which of the named series is higher (lower): now, or its aggregate in the
        question's window ("Which was higher on Nov 18, the US 10Y or the CN 10Y?")."""
        params: dict[str, Any] = {"ids": ids}
        head = render(S.INDICATOR_SET, matches="", optionals="", where="\nWHERE t.id IN $ids")
        order = "ASC" if frame.compare == "min" else "DESC"
        moved = frame.agg == "change" or frame.fall or frame.direction is not None
        if moved and frame.units.time is not None:  # "which fell more from Mon close to Fri"
            body = self._points("(i)", replace(frame, daily="close"), params)
            days = (
                "WITH i, p.t / 86400000 AS day, collect(p.v) AS vs\n"
                "WITH i, day, vs[size(vs) - 1] AS v ORDER BY day\n"
                "WITH i, collect(v) AS dv"
                if frame.daily == "close"
                else "WITH i, collect(p.v) AS dv"
            )
            down = frame.fall or frame.direction == "down"
            value = "dv[0] - dv[size(dv) - 1]" if down else "dv[size(dv) - 1] - dv[0]"
            tail = render(S.SERIES_ARGMAX, value=value, order=order)
            if frame.compare is None and frame.direction is not None:  # "which rose"
                tail = render(S.SERIES_WHICH_MOVED, value=value, op=">")
            cy = f"{head}\n{body}\nWITH i, p ORDER BY p.t\n{days}\n{tail}"
            what = "fell" if down else "rose"
            desc = f"which of {', '.join(ids)} {what} {'less' if order == 'ASC' else 'more'}"
            return ReadingCandidate(cy, params, desc, 6.0, "series", ids)
        if frame.units.time is None and frame.known_at is None:
            cy = f"{head}\n{render(S.SERIES_ARGMAX, value='i.last_value', order=order)}"
        else:
            value = {"min": "min(p.lo)", "avg": "sum(p.s) / sum(p.n)"}.get(
                frame.agg or "", "max(p.hi)" if frame.compare == "max" else "min(p.lo)"
            )
            if frame.agg in (None, "latest"):
                value = "sum(p.s) / sum(p.n)"  # "higher on Nov 18": the day's level
            body = self._points("(i)", frame, params)
            cy = f"{head}\n{body}\n{render(S.SERIES_ARGMAX, value=value, order=order)}"
        desc = f"which of {', '.join(ids)} is {'lower' if order == 'ASC' else 'higher'}"
        return ReadingCandidate(cy, params, desc, 6.0, "series", ids)

    def _which_meet(self, frame: Frame, ids: list[str]) -> ReadingCandidate:
        """Which of the named series meet the comparison, by their last value in the window
        (their close on a day): a filter over a named set of series."""
        params: dict[str, Any] = {"ids": ids, "c0": frame.units.comparisons[0].value}
        head = render(S.INDICATOR_SET, matches="", optionals="", where="\nWHERE t.id IN $ids")
        plain = replace(frame, units=replace(frame.units, comparisons=()))
        body = self._points("(i)", plain, params)
        op = frame.units.comparisons[0].op
        last = "WITH i, p ORDER BY p.t\nWITH i, collect(p.v) AS vs"
        tail = render(S.SERIES_WHICH_MEET, value="vs[size(vs) - 1]", op=op)
        desc = f"which of {', '.join(ids)} {op} a value"
        return ReadingCandidate(f"{head}\n{body}\n{last}\n{tail}", params, desc, 6.0, "series", ids)

    def _series_over_set(self, frame: Frame) -> list[ReadingCandidate]:
        """Values of the indicators an entity-set path selects: the highest (lowest,
        average) point among them, or which of them has it ("which yield tracking US
        Treasuries had the lowest average this week")."""
        target = frame.target or next((c for c in frame.concepts if c == "Indicator"), None)
        if target != "Indicator" or (frame.units.time is None and not frame.units.value_word):
            return []
        combos = self._constraints(frame, "Indicator", list(frame.anchors)) or []
        if not combos and not frame.anchors and frame.values:
            combos = [([], [], 0.0)]  # "US yield indicators": the set by its properties alone
        links = [  # "the indicators that track a bond", "跟踪债券的指标": an edge to a kind
            f"(t)-[fr{k}:{r}]->(:{c})"
            for k, r in enumerate(frame.relations)
            for c in frame.concepts
            if c != "Indicator"
            and _IDENT.match(r)
            and _IDENT.match(c)
            and self._data("Indicator", r, c)
        ]
        if links and not frame.anchors:
            combos = [([*p, *links], n, sc) for p, n, sc in (combos or [([], [], 0.0)])]
        agg = frame.agg or "max"
        value = {"max": "max(p.hi)", "min": "min(p.lo)", "avg": "sum(p.s) / sum(p.n)"}[agg]
        if frame.range_agg and agg in ("max", "min"):  # "谁的日内振幅最大": the widest range
            value = "max(p.hi) - min(p.lo)"
        which = frame.wh and frame.target == "Indicator"
        which = which and bool(_WHICH.search(frame.question) or "谁" in frame.question)
        daily = frame.daily if frame.daily in ("close", "open") else None
        if daily is None and _CLOSE_WORD.search(frame.question):
            daily = "close"  # "the maximum friday close across the indicators ..."
        out = []
        for pats, negs, score in combos[:2]:
            params: dict[str, Any] = {f"a{k}": a.key for k, a in enumerate(frame.anchors)}
            where, wparams, _used = self._target_filters(frame, "Indicator")
            params.update(wparams)
            slots = self._finish(frame, pats, negs, where, params)
            head = render(S.INDICATOR_SET, **slots)
            body = self._points("(i)", frame, params)
            order = "ASC" if agg == "min" else "DESC"
            if daily is not None:  # "the highest daily close", "周五收盘的平均"
                fn = f"{agg}(v)"
                fold = (
                    render(S.SERIES_ARGMAX, value=fn, order=order)
                    if which
                    else f"RETURN {fn} AS value"
                )
                ret = render(S.SERIES_SET_DAILY, pick=_DAILY_PICKS[daily], fold=fold)
                desc = f"{agg} of the daily {daily} values of the indicators"
            elif which:
                ret = render(S.SERIES_ARGMAX, value=value, order=order)
                desc = shape(S.SERIES_ARGMAX).describe.format(order=agg)
            else:
                ret = render({"max": S.SERIES_MAX, "min": S.SERIES_MIN, "avg": S.SERIES_AVG}[agg])
                desc = f"{agg} value of the indicators"
            cy = f"{head}\n{body}\n{ret}"
            prior = 4.0 + score + (1.0 if frame.units.time is not None else 0.0)
            out.append(ReadingCandidate(cy, params, desc, prior, "series", []))
        return out

    def _window_where(
        self, win: TimeWindow | None, params: dict[str, Any], known_at: int | None = None
    ) -> tuple[str, str]:
        """WHERE parts for instant points (o) and daily rows (d); with a knowledge time,
        only observations made by then (a day row by its last point)."""
        o, d = ["o.observed_at IS NOT NULL"], ["d.last_at IS NOT NULL"]
        if win and win.start_ms is not None:
            params["from"] = win.start_ms
            o.append("o.observed_at >= $from")
            d.append("d.last_at >= $from")
        if win and win.end_ms is not None:
            params["to"] = win.end_ms
            o.append("o.observed_at < $to")
            d.append("d.first_at < $to")
        if known_at is not None:
            params["known_at"] = known_at
            o.append("o.observed_at <= $known_at")  # a market print is public when observed
            d.append("d.last_at <= $known_at")
        return " AND ".join(o), " AND ".join(d)

    def _points(self, pattern: str, frame: Frame, params: dict[str, Any]) -> str:
        ow, dw = self._window_where(frame.units.time, params, frame.known_at)
        return render(
            S.SERIES_POINTS,
            pattern=pattern,
            obs_where=ow,
            daily_where=dw,
            value_filter="" if frame.daily else self._value_filter(frame, params),
        )

    def _value_filter(self, frame: Frame, params: dict[str, Any]) -> str:
        parts = []
        for k, c in enumerate(frame.units.comparisons):
            params[f"c{k}"] = c.value
            parts.append(f"p.v {c.op} $c{k}")
        return (" AND " + " AND ".join(parts)) if parts else ""

    def _series_return(self, frame: Frame, agg: str | None, params: dict[str, Any]) -> S:
        """The RETURN shape of a series question, and its slots in ``params['_slots']``."""
        win = frame.units.time
        if frame.rank is not None and agg in ("max", "min") and frame.top is None:
            params["rank"] = frame.rank  # "the second highest reading", "第三低"
            params["_slots"] = {"order": "DESC" if agg == "max" else "ASC"}
            return S.SERIES_RANK
        if frame.top is not None and frame.daily is not None:  # "the 3 highest closes"
            params["top"] = frame.top[0]
            avg = _asks("avg", frame.question)
            fold = (
                "RETURN reduce(s = 0.0, x IN top | s + x) / size(top) AS value"
                if avg
                else render(S.RET_VALUES, xs="top")
            )
            pick = _DAILY_PICKS[frame.daily]
            params["_slots"] = {"pick": pick, "order": frame.top[1], "fold": fold}
            return S.SERIES_DAILY_TOP
        if frame.top is not None:
            params["top"] = frame.top[0]
            params["_slots"] = {"order": frame.top[1]}
            return S.SERIES_TOP_AVG if _asks("avg", frame.question) else S.SERIES_TOP_LIST
        if frame.last_n is not None:
            params["last"] = frame.last_n
            folds = {k: f"RETURN {v} AS value" for k, v in _folds("xs").items()}
            folds["change"] = "RETURN xs[0] - xs[size(xs) - 1] AS value"  # newest first
            folds["count"] = "RETURN size(xs) AS count"
            fold = folds.get(agg or "", render(S.RET_VALUES, xs="xs"))
            params["_slots"] = {"agg": fold}
            return S.SERIES_LAST_N
        if frame.range_agg and frame.daily != "range":
            return S.SERIES_RANGE
        if frame.daily is not None and agg in _DAILY_AGGS:
            pick = _DAILY_PICKS[frame.daily]
            conds = []
            for k, c in enumerate(frame.units.comparisons):  # on the day's value, not ticks
                params[f"c{k}"] = c.value
                conds.append(f"x {c.op} $c{k}")
            if conds and agg in ("max", "min", "avg"):  # "the average close on days above x"
                kept = f"[x IN dv WHERE {' AND '.join(conds)}]"
                fold = _folds("kept")[agg].replace("kept", kept)
                fold = f"CASE WHEN size({kept}) = 0 THEN null ELSE {fold} END"
            elif agg == "count" or conds:
                fold = f"size([x IN dv WHERE {' AND '.join(conds) or 'true'}])"
            elif agg == "change" and frame.fall:
                fold = "dv[0] - dv[size(dv) - 1]"
            else:
                fold = _folds("dv").get(agg or "", "dv[size(dv) - 1]")
            keep = ""
            if frame.tail_days:  # "the last 5 trading days of august": the window's last n days
                params["tail_days"] = frame.tail_days
                keep = (
                    "\nWITH CASE WHEN size(dv) > $tail_days "
                    "THEN dv[size(dv) - $tail_days..] ELSE dv END AS dv"
                )
            params["_slots"] = {"pick": pick, "agg": fold, "keep": keep}
            return S.SERIES_DAILY
        if agg == "change" and frame.fall:
            return S.SERIES_FALL
        if agg in _AGG_SHAPES:
            return _AGG_SHAPES[agg]
        if agg == "latest" or (win is not None and win.point):
            return S.SERIES_LAST
        if win is not None and win.kind in _ONE_VALUE_WINDOWS:
            return S.SERIES_LAST  # "the PMI last month", "the 10Y on 2025-06-18"
        return S.SERIES_LIST

    def _series_mom(self, frame: Frame, pattern: str, aid: str, prior: float) -> ReadingCandidate:
        """Month-on-month changes (``series_mom``): the latest one in the window, how many
        rose (fell), the biggest rise (drop), their average."""
        params: dict[str, Any] = {"a": aid}
        win = frame.units.time
        params["mom_from"] = win.start_ms if win and win.start_ms is not None else 0
        early = replace(win, start_ms=None) if win else None  # the first one's predecessor
        body = self._points(pattern, replace(frame, units=replace(frame.units, time=early)), params)
        down = frame.direction == "down" or frame.fall
        agg = frame.agg  # "average MoM move": the average, though "move" names a change
        if agg not in ("count", "avg", "max", "min"):
            agg = next((a for a in ("avg", "max", "min") if _asks(a, frame.question)), agg)
        sign = "-" if down and agg in ("max", "min", None, "latest", "change") else ""
        name = self.lex.entities.get(aid, {}).get("name", aid)
        if frame.point_time is not None:  # which month had the biggest rise (drop)
            order = "ASC" if agg == "min" and frame.direction is None else "DESC"
            fold = (
                f"WITH d ORDER BY {sign}d.v {order} LIMIT 1\n"
                f"RETURN d.t AS period_start, d.v AS value"
            )
            desc = f"the month of the biggest month-on-month change of {name}"
            cy = f"{body}\n{render(S.SERIES_MOM, fold=fold)}\nLIMIT {ROW_LIMIT}"
            return ReadingCandidate(cy, params, desc, prior + 1.0, "series", [aid])
        if agg == "count":
            cond = {"up": "d.v > 0", "down": "d.v < 0", "any": "d.v <> 0"}.get(
                frame.direction or "", "true"
            )
            fold = f"WITH d WHERE {cond}\nRETURN count(d) AS count"
        elif agg in ("max", "min") and frame.direction is not None:
            fold = f"RETURN max({sign}d.v) AS value"  # "biggest drop": the largest fall
        elif agg in ("max", "min", "avg"):
            fold = f"RETURN {agg}(d.v) AS value"
        else:
            fold = (
                f"WITH d ORDER BY d.t DESC LIMIT 1\nRETURN {sign}d.v AS value, d.t AS observed_at"
            )
        desc = shape(S.SERIES_MOM).describe.format(name=name)
        cy = f"{body}\n{render(S.SERIES_MOM, fold=fold)}\nLIMIT {ROW_LIMIT}"
        return ReadingCandidate(cy, params, desc, prior + 1.0, "series", [aid])

    def _series_when(self, frame: Frame, pattern: str, aid: str, prior: float) -> ReadingCandidate:
        """Which day (month) of the series: the period with the highest (lowest) value,
        the first (last) one meeting the question's threshold, or all that do."""
        params: dict[str, Any] = {"a": aid}
        body = self._points(pattern, replace(frame, daily="close"), params)  # no tick filter
        monthly = self.lex.entities.get(aid, {}).get("frequency") == "monthly"
        if monthly or frame.point_time == "month":
            key, pick = "p.t", "vs[size(vs) - 1]"
        else:
            daily = frame.daily or ("range" if frame.range_agg else "close")
            key, pick = "p.t / 86400000 * 86400000", _DAILY_PICKS[daily]
        conds = []
        for k, c in enumerate(frame.units.comparisons):
            params[f"c{k}"] = c.value
            conds.append(f"v {c.op} $c{k}")
        trig = triggers()["point_time"]
        agg = frame.agg if frame.agg in ("max", "min") else None
        if agg is None and frame.compare is not None and not conds:
            agg = frame.compare  # "哪天振幅更大"
        name = self.lex.entities.get(aid, {}).get("name", aid)
        period = "month" if monthly else "day"
        if frame.rank is not None and agg is not None:  # "the month of the second highest"
            params["rank"] = frame.rank
            order = "DESC" if agg == "max" else "ASC"
            cond = " AND ".join(conds) or "v IS NOT NULL"
            ret = render(S.SERIES_WHEN_RANK, key=key, pick=pick, cond=cond, order=order)
            desc = shape(S.SERIES_WHEN_RANK).describe.format(period=period, name=name, what=agg)
            cy = f"{body}\n{ret}\nLIMIT {ROW_LIMIT}"
            return ReadingCandidate(cy, params, desc, prior + 1.0, "series", [aid])
        asked = untimed(frame.question)  # "first half", "last month": the window's words
        if _any(trig["first"], asked):
            order, limit = "k ASC", "\nLIMIT 1"
        elif _any(trig["last"], asked):
            order, limit = "k DESC", "\nLIMIT 1"
        elif agg is not None:
            order, limit = f"v {'DESC' if agg == 'max' else 'ASC'}, k", "\nLIMIT 1"
        else:
            order, limit = "k", ""
        ret = render(
            S.SERIES_WHEN,
            key=key,
            pick=pick,
            cond=" AND ".join(conds) or "v IS NOT NULL",
            order=order,
            limit=limit,
        )
        desc = shape(S.SERIES_WHEN).describe.format(period=period, name=name, what=order)
        cy = f"{body}\n{ret}\nLIMIT {ROW_LIMIT}"
        return ReadingCandidate(cy, params, desc, prior + 1.0, "series", [aid])

    def _series_one(self, frame: Frame, pattern: str, aid: str, prior: float) -> ReadingCandidate:
        if frame.mom and frame.point_time is not None:  # "哪个月环比跌得最多"
            return self._series_mom(frame, pattern, aid, prior)
        if frame.point_time is not None:
            return self._series_when(frame, pattern, aid, prior)
        if frame.mom:
            return self._series_mom(frame, pattern, aid, prior)
        params: dict[str, Any] = {"a": aid}
        agg = "change" if frame.fall and frame.agg in (None, "latest") else frame.agg
        win = frame.units.time
        name = self.lex.entities.get(aid, {}).get("name", aid)
        plain = (
            not frame.units.comparisons
            and frame.top is None
            and not frame.range_agg
            and frame.last_n is None
        )
        if agg is None and win is None and plain and frame.daily is None:
            agg = "latest"  # "what is the US 10Y yield?": its current value
        if agg == "latest" and win is None and plain and frame.known_at is None:
            cy = render(S.SERIES_LATEST, pattern=pattern)
            desc = shape(S.SERIES_LATEST).describe.format(name=name)
            return ReadingCandidate(cy, params, desc, prior + 1, "series", [aid])
        body = self._points(pattern, frame, params)
        ret = self._series_return(frame, agg, params)
        slots = params.pop("_slots", {})
        desc = shape(ret).describe.format(name=name, **slots)
        if win is not None:
            desc += f" {win.text}"
        cy = f"{body}\n{render(ret, **slots)}\nLIMIT {ROW_LIMIT}"
        return ReadingCandidate(cy, params, desc, prior, "series", [aid])

    def _spread(self, frame: Frame, inds: list[tuple[str, str, str]]) -> ReadingCandidate:
        (p1, a1, _), (p2, a2, _) = inds
        params: dict[str, Any] = {"a": a1, "b": a2}
        right = p2.replace("(i:", "(j:").replace("$a", "$b")
        n1 = self.lex.entities.get(a1, {}).get("name", a1)
        n2 = self.lex.entities.get(a2, {}).get("name", a2)
        win = frame.units.time
        tail = self._spread_tail(frame, params)
        if tail is None and win is None and frame.known_at is None:
            cy = render(S.SERIES_SPREAD, left=p1, right=right)
            desc = shape(S.SERIES_SPREAD).describe.format(name=n1, other=n2)
        else:  # in a window: each spread then folded (tail), or the spread at its end
            which = S.SERIES_SPREAD_AT if tail is None else S.SERIES_SPREAD_POINTS
            ow, _ = self._window_where(win, params, frame.known_at)
            slots = {"left": p1, "right": right, "obs_where": ow}
            slots["obs_where2"] = ow.replace("o.", "o2.")
            cy = render(which, **slots, **({} if tail is None else {"agg": tail}))
            desc = shape(which).describe.format(name=n1, other=n2)
        return ReadingCandidate(cy, params, desc, 3.5, "series", [a1, a2])

    def _spread_tail(self, frame: Frame, params: dict[str, Any]) -> str | None:
        """How spreads over a window are folded (None: one spread, now or at a time)."""
        conds = []
        agg = frame.agg
        for k, c in enumerate(frame.units.comparisons if agg == "count" else ()):
            params[f"c{k}"] = c.value
            conds.append(f"d {c.op} $c{k}")
        if frame.daily in ("close", "open") and (agg in ("max", "min", "avg") or conds):
            pick = "ds[size(ds) - 1]" if frame.daily == "close" else "ds[0]"
            fold = (
                f"size([x IN dv WHERE {' AND '.join(c.replace('d ', 'x ') for c in conds)}])"
                if conds
                else _folds("dv")[agg or "max"]
            )
            return (
                "WITH t / 86400000 AS day, t, d ORDER BY t\n"
                "WITH day, collect(d) AS ds\n"
                f"WITH day, {pick} AS v ORDER BY day\n"
                f"WITH collect(v) AS dv WHERE size(dv) > 0\nRETURN {fold} AS value"
            )
        if conds:
            return f"WITH d WHERE {' AND '.join(conds)}\nRETURN count(d) AS count"
        if agg in ("max", "min", "avg") and (frame.units.time is not None or _ever(frame)):
            return f"RETURN {agg}(d) AS value"
        return None

    def _named_text_props(self, frame: Frame) -> list[str]:
        """The question's property words that name a text property of an indicator (unit,
        frequency, category, country): a question about the series' record."""
        c = self.onto.concept("Indicator")
        text = {p.name for p in c.properties if p.type in ("string", "", None)} if c else set()
        return [p for p in frame.properties if p in text]
