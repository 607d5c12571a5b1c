"""Cypher synthesis (FinQA, "Cypher Synthesis"): variable alignment and clause
combination of the parsing units into candidate queries.

A question's mentions (``lexicon``) and units (``units``) are read into a ``Frame``:
the anchors (linked entities), the concepts named, the relation, property and value
words, the aggregation, comparisons and time window. Every reading the schema allows
becomes a ``Candidate`` (Cypher + parameters + a plain-language description for
ranking + a prior from how much of the question it uses). Labels, relationship types
and property names come only from the ontology and the graph's own keys, so they may
be written into the query; every value travels as a parameter. Every query ends in a
LIMIT, and none writes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from kg.cypher.lexicon import Lexicon, Mention, Sense, triggers
from kg.cypher.units import TimeWindow, Units
from kg.ontology import Ontology, default_ontology

ROW_LIMIT = 200
_WH = re.compile(r"\b(which|what|who|whom|list|name|show)\b|哪|什么|谁|列出|有哪些", re.I)
_SPREAD = re.compile(r"\b(spread|difference|gap)\b|利差|差值|相差|之差", re.I)
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass
class Candidate:
    cypher: str
    params: dict[str, Any]
    description: str
    prior: float
    kind: str  # series | attribute | entities | describe
    anchors: list[str] = field(default_factory=list)
    score: float = 0.0


@dataclass
class Frame:
    question: str
    anchors: list[Sense]
    concepts: list[str]  # concept labels named, in order
    relations: list[str]
    properties: list[str]
    values: list[Sense]
    units: Units
    wh: bool
    spread: bool
    target: str | None = None  # the concept named right after a question word
    same_as: bool = False
    when: bool = False

    @property
    def agg(self) -> str | None:
        return self.units.aggregation


def _wh_target(tokens: list[str], mentions: list[Mention]) -> str | None:
    wh = set(triggers()["wh"]["tokens"])
    positions = [i for i, t in enumerate(tokens) if t in wh]
    concepts = [(m.start, s.key) for m in mentions if not m.of("entity") for s in m.of("concept")]
    for p in positions:
        after = [c for c in concepts if c[0] >= p]
        if after:
            return min(after)[1]
    return None


def read_frame(question: str, tokens: list[str], mentions: list[Mention], units: Units) -> Frame:
    anchors: list[Sense] = []
    concepts: list[str] = []
    relations: list[str] = []
    properties: list[str] = []
    values: list[Sense] = []
    for m in mentions:
        ents = m.of("entity")
        if ents:
            if ents[0].key not in {a.key for a in anchors}:
                anchors.append(ents[0])
        else:
            values.extend(m.of("value"))
            concepts.extend(s.key for s in m.of("concept") if s.key not in concepts)
        relations.extend(s.key for s in m.of("relation") if s.key not in relations)
        properties.extend(s.key for s in m.of("property") if s.key not in properties)
    same = any(re.search(p, question, re.I) for p in triggers()["same_as"]["patterns"])
    when = any(re.search(p, question, re.I) for p in triggers()["when"]["patterns"])
    return Frame(
        question,
        anchors,
        concepts,
        relations,
        properties,
        values,
        units,
        bool(_WH.search(question)),
        bool(_SPREAD.search(question)),
        _wh_target(tokens, mentions),
        same,
        when,
    )


class Synthesizer:
    def __init__(self, lexicon: Lexicon, ontology: Ontology | None = None) -> None:
        self.lex = lexicon
        self.onto = ontology or default_ontology()

    # -- entry point -------------------------------------------------------------------
    def candidates(self, frame: Frame, now: datetime) -> list[Candidate]:
        out: list[Candidate] = []
        out += self._when(frame)
        out += self._series(frame, now)
        out += self._attributes(frame)
        out += self._entity_sets(frame, now)
        if not out and frame.anchors:
            out.append(self._describe(frame))
        for c in out:
            c.cypher = c.cypher.strip()
        return out

    # -- helpers -----------------------------------------------------------------------
    def is_a(self, label: str, other: str) -> bool:
        return self.onto.is_a(label, other)

    def _props_of(self, label: str) -> set[str]:
        names: set[str] = set()
        for lb in self.onto.ancestors(label):
            c = self.onto.concept(lb)
            if c:
                names.update(p.name for p in c.properties)
        return names

    def _numeric_props(self, label: str) -> set[str]:
        out: set[str] = set()
        for lb in self.onto.ancestors(label):
            c = self.onto.concept(lb)
            if c:
                out.update(p.name for p in c.properties if p.type in ("float", "int"))
        return out

    # -- "when": the start of a fact's validity -------------------------------------------
    def _when(self, frame: Frame) -> list[Candidate]:
        if not frame.when or not frame.anchors:
            return []
        rels = [r for r in frame.relations if _IDENT.match(r)] or [""]
        out = []
        a0 = frame.anchors[0]
        other = frame.anchors[1] if len(frame.anchors) > 1 else None
        for r in rels[:3]:
            rel = f":{r}" if r else ""
            if other is not None:
                cy = (
                    f"MATCH (a0:Entity {{id: $a0}})-[f{rel}]-(a1:Entity {{id: $a1}})\n"
                    "WHERE f.valid_from IS NOT NULL\n"
                    "RETURN f.valid_from AS valid_from ORDER BY valid_from DESC LIMIT 1"
                )
                params = {"a0": a0.key, "a1": other.key}
                desc = f"since when {a0.name} {r.lower()} {other.name}"
            elif r:
                cy = (
                    f"MATCH (a0:Entity {{id: $a0}})-[f{rel}]-()\n"
                    "WHERE f.valid_from IS NOT NULL AND f.valid_to IS NULL\n"
                    "RETURN f.valid_from AS valid_from ORDER BY valid_from DESC LIMIT 1"
                )
                params = {"a0": a0.key}
                desc = f"since when {a0.name} {r.lower()}"
            else:
                continue
            out.append(Candidate(cy, params, desc, 6.0, "when", list(params.values())))
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
        return out

    def _series(self, frame: Frame, now: datetime) -> list[Candidate]:
        u = frame.units
        wants_values = (
            u.value_word
            or u.time is not None
            or frame.agg in ("max", "min", "avg", "change", "first", "latest")
            or (frame.agg == "count" and bool(u.comparisons))
            or frame.spread
        )
        inds = self._indicator_anchors(frame)
        if not inds or not wants_values:
            return []
        if frame.spread and len(inds) >= 2 and frame.agg not in ("count",):
            return [self._spread(frame, inds[:2])]
        out = []
        for pattern, aid, how in inds:
            prior = 3.0 if how == "indicator" else 2.0
            if how == "tracks" and (u.time is not None or frame.agg in _VALUE_AGGS):
                prior += 2.5  # "the highest yield of the 10-year bond on <day>"
            if how == "tracks" and any(a.label == "Indicator" for a in frame.anchors):
                continue
            out.append(self._series_one(frame, pattern, aid, prior))
        return out

    def _window_where(self, win: TimeWindow | None, params: dict[str, Any]) -> tuple[str, str]:
        """WHERE parts for instant points (o) and daily rows (d)."""
        o, d = ["o.observed_at IS NOT NULL"], ["d.last_at IS NOT NULL"]
        if win and win.start_ms is not None:
            params["from"] = win.start_ms
            o.append("o.observed_at >= $from")
            d.append("d.last_at >= $from")
        if win and win.end_ms is not None:
            params["to"] = win.end_ms
            o.append("o.observed_at < $to")
            d.append("d.first_at < $to")
        return " AND ".join(o), " AND ".join(d)

    def _points(self, pattern: str, frame: Frame, params: dict[str, Any]) -> str:
        """Cypher binding ``p`` to every point of the indicator's series in the window:
        instant observations and rolled-up days (open at first_at, close at last_at;
        high/low/sum/n carry the day's extremes and mean)."""
        ow, dw = self._window_where(frame.units.time, params)
        return f"""
MATCH {pattern}
OPTIONAL MATCH (i)-[:HAS_OBSERVATION]->(o:Observation) WHERE {ow}
WITH i, collect({{t: o.observed_at, v: o.value, hi: o.value, lo: o.value, s: o.value, n: 1}}) AS a
OPTIONAL MATCH (i)-[:HAS_DAILY]->(d:DailyObservation) WHERE {dw}
WITH i, a, collect({{t: d.first_at, v: d.open, hi: d.high, lo: d.low, s: d.sum, n: d.n}})
     + collect({{t: d.last_at, v: d.close, hi: null, lo: null, s: null, n: 0}}) AS b
UNWIND a + b AS p
WITH i, p WHERE p.t IS NOT NULL"""

    def _value_filter(self, frame: Frame, params: dict[str, Any]) -> str:
        parts = []
        for k, c in enumerate(frame.units.comparisons):
            params[f"c{k}"] = c.value
            parts.append(f"p.v {c.op} $c{k}")
        return (" AND " + " AND ".join(parts)) if parts else ""

    def _series_one(self, frame: Frame, pattern: str, aid: str, prior: float) -> Candidate:
        params: dict[str, Any] = {"a": aid}
        agg = frame.agg
        win = frame.units.time
        name = self.lex.entities.get(aid, {}).get("name", aid)
        if agg is None and win is None and not frame.units.comparisons:
            agg = "latest"  # "what is the US 10Y yield?": its current value
        if agg == "latest" and win is None and not frame.units.comparisons:
            cy = (
                f"MATCH {pattern}\nRETURN i.last_value AS value, i.unit AS unit, "
                f"i.last_observed_at AS observed_at\nLIMIT 1"
            )
            return Candidate(cy, params, f"latest value of {name}", prior + 1, "series", [aid])
        body = self._points(pattern, frame, params)
        vf = self._value_filter(frame, params)
        if vf:
            body += vf
        if agg == "count":
            ret = "RETURN toInteger(sum(p.n)) AS count"
            desc = f"number of observations of {name}"
        elif agg == "max":
            ret = "RETURN max(p.hi) AS value"
            desc = f"highest value of {name}"
        elif agg == "min":
            ret = "RETURN min(p.lo) AS value"
            desc = f"lowest value of {name}"
        elif agg == "avg":
            ret = "WITH sum(p.s) AS s, sum(p.n) AS n WHERE n > 0\nRETURN s / n AS value"
            desc = f"average value of {name}"
        elif agg == "change":
            ret = (
                "WITH p ORDER BY p.t\nWITH collect(p.v) AS vs WHERE size(vs) > 0\n"
                "RETURN vs[size(vs) - 1] - vs[0] AS value"
            )
            desc = f"change of {name} over the period"
        elif agg == "first":
            ret = "WITH p ORDER BY p.t ASC LIMIT 1\nRETURN p.v AS value, p.t AS observed_at"
            desc = f"first value of {name}"
        elif agg == "latest" or (win is not None and win.point):
            ret = "WITH p ORDER BY p.t DESC LIMIT 1\nRETURN p.v AS value, p.t AS observed_at"
            desc = f"latest value of {name} in the period"
        else:
            ret = "WITH p ORDER BY p.t\nRETURN p.t AS observed_at, p.v AS value"
            desc = f"values of {name}"
        if win is not None:
            desc += f" {win.text}"
        return Candidate(f"{body}\n{ret}\nLIMIT {ROW_LIMIT}", params, desc, prior, "series", [aid])

    def _spread(self, frame: Frame, inds: list[tuple[str, str, str]]) -> Candidate:
        (p1, a1, _), (p2, a2, _) = inds
        params = {"a": a1, "b": a2}
        cy = f"""
MATCH {p1}
MATCH {p2.replace("(i:", "(j:").replace("$a", "$b")}
RETURN i.last_value - j.last_value AS value
LIMIT 1"""
        n1 = self.lex.entities.get(a1, {}).get("name", a1)
        n2 = self.lex.entities.get(a2, {}).get("name", a2)
        return Candidate(cy, params, f"spread between {n1} and {n2}", 3.5, "series", [a1, a2])

    # -- properties of one entity (attribute lookup) ------------------------------------
    def _attributes(self, frame: Frame) -> list[Candidate]:
        if not frame.properties or not frame.anchors or frame.agg == "count":
            return []
        out = []
        for a in frame.anchors[:2]:
            have = set(self.lex.entities.get(a.key, {})) | self._props_of(a.label)
            for prop in frame.properties:
                if prop not in have or not _IDENT.match(prop):
                    continue
                cy = f"MATCH (e:Entity {{id: $a}})\nRETURN e.{prop} AS {prop}\nLIMIT 1"
                desc = f"the {prop.replace('_', ' ')} of {a.name}"
                prior = 3.0 if not frame.concepts else 2.5
                if frame.target is not None and self.is_a(a.label, frame.target):
                    prior += 1.0  # "the stock code of BYD": the concept is the anchor's
                out.append(Candidate(cy, {"a": a.key}, desc, prior, "attribute", [a.key]))
        return out

    # -- sets of entities: filters, relations, counts --------------------------------------
    def _relation_ends(self, frame: Frame) -> list[str]:
        """Labels at the other end of a relation the question names, seen from an
        anchor (from the graph's edges; the ontology's concrete labels without them)."""
        out: list[str] = []
        for a in frame.anchors:
            for r in frame.relations:
                for (h, rel, t), n in sorted(self.lex.edge_stats.items(), key=lambda x: -x[1]):
                    if rel != r or n <= 0:
                        continue
                    if self.is_a(t, a.label) and h not in out:
                        out.append(h)
                    if self.is_a(h, a.label) and t not in out:
                        out.append(t)
        return out

    def _fits(self, label: str, relations: list[str]) -> bool:
        """Whether ``label`` can be an end of one of ``relations``."""
        for r in self.onto.relations:
            if r.type in relations:
                ends = [e for e in (*r.domain, *r.range) if e != "Entity"]
                if any(self.is_a(label, e) or self.is_a(e, label) for e in ends):
                    return True
        return False

    def _targets(self, frame: Frame) -> list[str]:
        anchor_labels = {a.label for a in frame.anchors}
        named = [c for c in frame.concepts if c in self._concrete_labels()]
        ends = self._relation_ends(frame)
        if ends and not any(self._fits(c, frame.relations) for c in named):
            # "who supplies Apple", "how many suppliers": the named relation decides
            return ends[:3]
        if frame.target in named:
            return [frame.target, *[c for c in named if c != frame.target]][:2]
        if named:
            # the first concept named that is not only the anchors' own type
            first = [c for c in named if c not in anchor_labels] or named
            return first[:2]
        labels: list[str] = []
        for a in frame.anchors:
            for other in self._neighbour_labels(a.label, frame.relations):
                if other not in labels:
                    labels.append(other)
        for v in frame.values:
            for lb in sorted(self.lex.value_props.get(v.key, ())):
                if lb not in labels:
                    labels.append(lb)
        return labels[:4]

    def _neighbour_labels(self, label: str, hinted: list[str]) -> list[str]:
        """Labels linked to ``label`` in the graph's edges (most edges first, hinted
        relations before others); the ontology's when the graph has no statistics."""
        counts: dict[str, tuple[int, int]] = {}
        for (h, r, t), n in self.lex.edge_stats.items():
            for mine, other in ((h, t), (t, h)):
                if self.is_a(mine, label) and other != label:
                    hint, total = counts.get(other, (0, 0))
                    counts[other] = (hint + (n if r in hinted else 0), total + n)
        if counts:
            return sorted(counts, key=lambda lb: (-counts[lb][0], -counts[lb][1], lb))
        return [o for _r, _d, o in self._relations_for(label, hinted)]

    def _concrete_labels(self) -> set[str]:
        return {c.label for c in self.onto.concepts if not c.abstract}

    def _relations_for(self, label: str, hinted: list[str]) -> list[tuple[str, str, str]]:
        """(relation, direction, other label): out = (label)-[r]->(other)."""
        opts: list[tuple[str, str, str]] = []
        for r in self.onto.relations:
            if r.internal:
                continue
            if any(self.is_a(label, d) for d in r.domain):
                for rg in r.range:
                    if rg != "Entity":
                        opts.append((r.type, "out", rg))
            if any(self.is_a(label, rg) for rg in r.range):
                for d in r.domain:
                    if d != "Entity":
                        opts.append((r.type, "in", d))
        hinted_opts = [o for o in opts if o[0] in hinted]
        return hinted_opts or [o for o in opts if o[0] in _DEFAULT_RELS]

    def _data(self, head: str, rel: str, tail: str) -> bool | None:
        """Whether the graph has (head)-[rel]->(tail) edges; None when not known."""
        stats = self.lex.edge_stats
        if not stats:
            return None
        return any(
            n > 0 and r == rel and self.is_a(h, head) and self.is_a(t, tail)
            for (h, r, t), n in stats.items()
        )

    def _pairs(self, a: str, b: str, hinted: list[str]) -> list[tuple[str, str, float]]:
        """(relation, direction, prior bonus) linking label ``a`` to label ``b``;
        direction ``out`` is (a)-[r]->(b). Relations with edges in the graph first."""
        out: list[tuple[str, str, float]] = []
        for r in self.onto.relations:
            if r.internal:
                continue
            bonus = 1.0 if r.type in hinted else (0.0 if r.type in _DEFAULT_RELS else -1.0)
            for direction, head, tail in (("out", a, b), ("in", b, a)):
                if not (
                    any(self.is_a(head, d) for d in r.domain)
                    and any(self.is_a(tail, g) for g in r.range)
                ):
                    continue
                seen = self._data(head, r.type, tail)
                if seen is False:
                    bonus_d = bonus - 2.0
                else:
                    bonus_d = bonus + (0.5 if seen else 0.0)
                out.append((r.type, direction, bonus_d))
        out.sort(key=lambda x: -x[2])
        return out

    def _links(self, target: str, anchor: Sense, frame: Frame) -> list[tuple[str, float]]:
        """Path patterns from ``t`` to the anchor variable ``{A}``, with a prior bonus."""
        hinted = frame.relations
        direct = [
            (f"(t)-[{{F}}:{r}]->({{A}})" if d == "out" else f"({{A}})-[{{F}}:{r}]->(t)", b)
            for r, d, b in self._pairs(target, anchor.label, hinted)
        ]
        good = [x for x in direct if x[1] >= 0]
        hinted_direct = any(any(f":{r}]" in p for r in hinted) for p, _ in good)
        if good and (hinted_direct or not hinted):
            return good[:3]
        # two hops through a concept, the concepts the question names first (also when
        # the relation the question names fits no direct link: "indicators that track
        # US Treasuries" = indicators tracking bonds the Treasury issues)
        mids = [c for c in frame.concepts if c not in (target, anchor.label)]
        mids += [m for m in _MIDS if m not in mids]
        two: list[tuple[str, float]] = []
        for mid in mids:
            named = 0.5 if mid in frame.concepts else 0.0
            for r1, d1, b1 in self._pairs(target, mid, hinted)[:2]:
                for r2, d2, b2 in self._pairs(mid, anchor.label, hinted)[:2]:
                    if b1 < -0.5 or b2 < -0.5:
                        continue
                    h1 = (
                        f"(t)-[{{F}}:{r1}]->(x:{mid})"
                        if d1 == "out"
                        else f"(t)<-[{{F}}:{r1}]-(x:{mid})"
                    )
                    h2 = (
                        f"(x)-[{{F}}b:{r2}]->({{A}})"
                        if d2 == "out"
                        else f"(x)<-[{{F}}b:{r2}]-({{A}})"
                    )
                    two.append((f"{h1}, {h2}", b1 + b2 + named - 1.0))
        two.sort(key=lambda x: -x[1])
        if good:
            return good[:2] + [t for t in two if any(f":{r}]" in t[0] for r in hinted)][:2]
        return two[:3] or direct[:2]

    def _entity_sets(self, frame: Frame, now: datetime) -> list[Candidate]:
        if frame.agg in ("change", "first") or (
            frame.anchors and not frame.wh and frame.agg is None and not frame.values
        ):
            if not (frame.concepts and frame.anchors):
                return []
        out: list[Candidate] = []
        if frame.same_as and frame.anchors:
            out.extend(self._same_group(frame))
        for target in self._targets(frame):
            out.extend(self._entity_set(frame, target, now))
        return out

    def _same_group(self, frame: Frame) -> list[Candidate]:
        """Other members of the anchor's group: (t)-[r]->(x:Group)<-[r]-(anchor)."""
        a = frame.anchors[0]
        target = frame.target if frame.target and frame.target not in _GROUPS else a.label
        groups = [c for c in frame.concepts if c != target] or list(_GROUPS)
        out = []
        for g in groups[:3]:
            for r1, d1, b1 in self._pairs(target, g, frame.relations)[:1]:
                for r2, d2, b2 in self._pairs(a.label, g, frame.relations)[:1]:
                    if b1 < -0.5 or b2 < -0.5 or d1 != "out" or d2 != "out":
                        continue
                    cy = (
                        f"MATCH (a0:Entity {{id: $a0}})-[f0:{r2}]->(x:{g})"
                        f"<-[f1:{r1}]-(t:{target})\n"
                        "WHERE t.id <> $a0 AND f0.valid_to IS NULL AND f1.valid_to IS NULL\n"
                    )
                    ret, _ = self._entity_return(frame, target, [])
                    desc = f"{target.lower()} in the same {g.lower()} as {a.name}"
                    prior = 4.0 + b1 + b2 + (0.5 if g in frame.concepts else 0)
                    out.append(Candidate(cy + ret, {"a0": a.key}, desc, prior, "entities", [a.key]))
        return out

    def _entity_set(self, frame: Frame, target: str, now: datetime) -> list[Candidate]:
        anchors = [a for a in frame.anchors if not self._is_filter_region(a, target, frame)]
        same = [a for a in anchors if a.label == target]
        # patterns per anchor (cartesian product, capped)
        combos: list[tuple[list[str], float]] = [([], 0.0)]
        for k, a in enumerate(anchors):
            links = self._links(target, a, frame)
            if a in same and not links:
                continue
            if not links:
                return []
            nxt = []
            for pats, score in combos:
                for pat, bonus in links:
                    p = pat.replace("{A}", f"a{k}:Entity {{id: $a{k}}}").replace("{F}", f"f{k}")
                    nxt.append(([*pats, p], score + bonus))
            combos = sorted(nxt, key=lambda x: -x[1])[:4]
        params_base: dict[str, Any] = {f"a{k}": a.key for k, a in enumerate(anchors)}
        where, wparams, used = self._target_filters(frame, target)
        time_where = []
        win = frame.units.time
        out = []
        for pats, score in combos:
            params = {**params_base, **wparams}
            rels = sorted(set(re.findall(r"\[(f\w+):", " ".join(pats))))
            tw = list(time_where)
            for f in rels:
                if win is not None and win.end_ms is not None:
                    params["at"] = win.end_ms - 1
                    tw.append(
                        f"coalesce({f}.valid_from, 0) <= $at AND "
                        f"({f}.valid_to IS NULL OR {f}.valid_to > $at)"
                    )
                else:
                    tw.append(f"{f}.valid_to IS NULL")
            if same:
                tw.append("NOT t.id IN [" + ", ".join(f"$a{anchors.index(a)}" for a in same) + "]")
            match = f"MATCH (t:{target})" + "".join(f"\nMATCH {p}" for p in pats)
            conds = where + tw
            cy = match + (("\nWHERE " + " AND ".join(conds)) if conds else "")
            ret, desc_ret = self._entity_return(frame, target, used)
            cy += "\n" + ret
            desc = (
                f"{desc_ret} {target.lower()}"
                + "".join(f" {_rel_words(p)} {a.name}" for p, a in zip(pats, anchors, strict=False))
                + "".join(f" with {c}" for c in used)
            )
            prior = 1.0 + score + 0.5 * len(used) + (0.5 if target in frame.concepts else 0)
            if not anchors and not used and target not in frame.concepts:
                prior -= 2
            if target == frame.target:
                prior += 1.5
            if same and not frame.same_as:
                prior -= 2.0  # companies "related" to a company without asking for peers
            if frame.agg in ("latest", "change", "first") or (
                frame.units.time is not None and frame.units.time.kind != "as_of"
            ):
                prior -= 2.0  # values over time are series questions
            out.append(Candidate(cy, params, desc, prior, "entities", [a.key for a in anchors]))
        return out

    def _is_filter_region(self, a: Sense, target: str, frame: Frame) -> bool:
        return False

    def _target_filters(
        self, frame: Frame, target: str
    ) -> tuple[list[str], dict[str, Any], list[str]]:
        where: list[str] = []
        params: dict[str, Any] = {}
        used: list[str] = []
        seen: set[str] = set()
        for k, v in enumerate(frame.values):
            labels = self.lex.value_props.get(v.key, set())
            if not any(self.is_a(target, lb) or self.is_a(lb, target) for lb in labels):
                continue
            if v.key in seen or not _IDENT.match(v.key):
                continue
            seen.add(v.key)
            params[f"v{k}"] = v.label
            where.append(f"t.{v.key} = $v{k}")
            used.append(f"{v.key} {v.label}")
        numeric = self._numeric_props(target)
        prop = next((p for p in frame.properties if p in numeric), None)
        if prop is None and target == "Indicator":
            prop = "last_value"
        for k, c in enumerate(frame.units.comparisons):
            if prop is None:
                break
            params[f"c{k}"] = c.value
            where.append(f"t.{prop} {c.op} $c{k}")
            used.append(f"{prop} {c.op} {c.value:g}")
        return where, params, used

    def _entity_return(self, frame: Frame, target: str, used: list[str]) -> tuple[str, str]:
        numeric = self._numeric_props(target)
        prop = next((p for p in frame.properties if p in numeric), None)
        if prop is None and target == "Indicator" and frame.agg in ("max", "min", "avg"):
            prop = "last_value"
        if frame.agg == "count":
            return "RETURN count(DISTINCT t) AS count", "number of"
        if frame.agg in ("max", "min") and prop:
            order = "DESC" if frame.agg == "max" else "ASC"
            if frame.wh:
                return (
                    f"WITH DISTINCT t WHERE t.{prop} IS NOT NULL\n"
                    f"RETURN t.id AS id, t.name AS name, t.{prop} AS {prop}\n"
                    f"ORDER BY {prop} {order}, id\nLIMIT 1",
                    f"the {frame.agg} {prop}",
                )
            fn = frame.agg
            return f"RETURN {fn}(t.{prop}) AS value", f"{fn} {prop} of"
        if frame.agg == "avg" and prop:
            return f"RETURN avg(t.{prop}) AS value", f"average {prop} of"
        return (
            f"RETURN DISTINCT t.id AS id, t.name AS name\nORDER BY id\nLIMIT {ROW_LIMIT}",
            "which",
        )

    def _describe(self, frame: Frame) -> Candidate:
        a = frame.anchors[0]
        cy = (
            "MATCH (e:Entity {id: $a})\nRETURN e.id AS id, e.name AS name, "
            "e.name_zh AS name_zh\nLIMIT 1"
        )
        return Candidate(cy, {"a": a.key}, f"what {a.name} is", 0.0, "describe", [a.key])


_VALUE_AGGS = ("max", "min", "avg", "change", "first", "latest")
_GROUPS = ("Industry", "Theme", "Region")
_MIDS = (
    "Company",
    "Fund",
    "Industry",
    "Theme",
    "Indicator",
    "Bond",
    "Institution",
    "Product",
    "Event",
)

# relations tried when the question names none (the universe's structure)
_DEFAULT_RELS = frozenset(
    {
        "BELONGS_TO",
        "LISTED_IN",
        "ISSUED_BY",
        "HAS_CEO",
        "HAS_CHAIRMAN",
        "HAS_STAKE_IN",
        "MANAGES",
        "TRACKS",
        "SETS_POLICY",
        "EXECUTIVE_OF",
        "OPERATES_IN",
    }
)


def _rel_words(pattern: str) -> str:
    m = re.search(r":([A-Z_]+)\]", pattern)
    return m.group(1).lower().replace("_", " ") if m else "related to"
