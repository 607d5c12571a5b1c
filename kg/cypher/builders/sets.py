"""Entity sets: targets joined to the named anchors by the relations the ontology
allows and the graph has, negated relations and edges that must (not) exist, property
values and numeric filters, validity clauses, attributes, "which of the named ones".
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime
from typing import Any

from kg.cypher.frame import (
    _DEFAULT_RELS,
    _IDENT,
    _MEMBERSHIP,
    _MIDS,
    _WHAT_NOUN,
    _WHICH,
    _WHICH_NAMED,
    Frame,
    ReadingCandidate,
    _any,
    _fact_vars,
    _rel_words,
)
from kg.cypher.lexicon import Lexicon, Sense, triggers
from kg.cypher.shapes import ShapeName as S
from kg.cypher.shapes import render, shape
from kg.graph.ontology import Ontology

# "other", "else": the anchor of the asked kind is not among the answers ("the other stocks the
# fund holding Moutai owns")
_OTHER = re.compile(r"\b(other|others|else|besides|another)\b|其他|其它|别的|另外|之外|以外", re.I)


def _through_named(frame: Frame, target: str, pats: list[str], k: int) -> bool:
    """Whether anchor ``k`` (of the asked kind) is reached through a node whose kind the
    question names ("持有茅台的那个基金，一共持有几只票": the fund's holdings, Moutai among
    them): the set is that node's, the anchor one of its members, unless the question says
    "other" or "same" (then the anchor is excluded, as for "the same industry as X")."""
    if frame.same_as or _OTHER.search(frame.question):
        return False
    m = re.search(rf"\(x{k}:(\w+)\)", " ".join(pats))
    return m is not None and m.group(1) != target and m.group(1) in frame.concepts


class SetsBuilder:
    lex: Lexicon
    onto: Ontology

    # -- properties of one entity (attribute lookup) ------------------------------------
    def _attributes(self, frame: Frame) -> list[ReadingCandidate]:
        if not frame.properties or not frame.anchors or frame.agg == "count":
            return []
        out = []
        for a in frame.anchors[:2]:
            own = self.lex.entities.get(a.key, {})
            have = set(own) | self._props_of(a.label)
            for prop in frame.properties:
                if own.get(prop) is None:  # "股票代码" of a US stock: its ticker
                    alt = triggers()["property_fallback"].get(prop)
                    prop = alt if alt and own.get(alt) is not None else prop
                if prop not in have or not _IDENT.match(prop):
                    continue
                other = triggers()["property_companion"].get(prop)
                if other and own.get(other) is not None and _IDENT.match(other):
                    cy = render(S.ATTRIBUTE_PAIR, prop=prop, other=other)
                else:
                    cy = render(S.ATTRIBUTE, prop=prop)
                desc = f"the {prop.replace('_', ' ')} of {a.name}"
                prior = 3.0 if not frame.concepts else 2.5
                if frame.target is not None and self.is_a(a.label, frame.target):
                    prior += 1.0  # "the stock code of BYD": the concept is the anchor's
                out.append(ReadingCandidate(cy, {"a": a.key}, desc, prior, "attribute", [a.key]))
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
                if not ends:  # a relation between any entities: the graph's edges decide
                    ends = [
                        e for (h, rel, t) in self.lex.edge_stats if rel == r.type for e in (h, t)
                    ]
                if any(self.is_a(label, e) or self.is_a(e, label) for e in ends):
                    return True
        return False

    def _targets(self, frame: Frame) -> list[str]:
        anchor_labels = {a.label for a in frame.anchors}
        if (
            frame.target == "Person"
            and frame.relations
            and not self._fits("Person", frame.relations)
        ):
            # "who issues the bond ...": "who" is whoever the named relation's end is
            ends = [
                lb
                for r in frame.relations
                if (rel := self.onto.relation(r)) is not None
                for lb in (*rel.range, *rel.domain)
                if lb in self._concrete_labels()
                and lb not in anchor_labels
                and lb not in frame.concepts
            ]
            if ends:
                frame.target = ends[0]
                return list(dict.fromkeys(ends))[:3]
        named = [c for c in frame.concepts if c in self._concrete_labels()]
        ends = self._relation_ends(frame)
        if ends and not any(self._fits(c, frame.relations) for c in named):
            # "who supplies Apple", "how many suppliers": the named relation decides
            return ends[:3]
        if frame.target in named:
            return [frame.target, *[c for c in named if c != frame.target]][:2]
        if frame.target in self._concrete_labels():
            return [frame.target, *named][:2]  # a role noun ("which CEOs ...")
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
                        f"(t)-[{{F}}:{r1}]->({{X}}:{mid})"
                        if d1 == "out"
                        else f"(t)<-[{{F}}:{r1}]-({{X}}:{mid})"
                    )
                    h2 = (
                        f"({{X}})-[{{F}}b:{r2}]->({{A}})"
                        if d2 == "out"
                        else f"({{X}})<-[{{F}}b:{r2}]-({{A}})"
                    )
                    two.append((f"{h1}, {h2}", b1 + b2 + named - 1.0))
        two.sort(key=lambda x: -x[1])
        if good:
            return good[:2] + [t for t in two if any(f":{r}]" in t[0] for r in hinted)][:2]
        return two[:3] or direct[:2]

    def _entity_sets(self, frame: Frame, now: datetime) -> list[ReadingCandidate]:
        if frame.agg in ("change", "first") or (
            frame.anchors and not frame.wh and frame.agg is None and not frame.values
        ):
            if not (frame.anchors and (frame.concepts or frame.target or frame.relations)):
                return []
        out: list[ReadingCandidate] = []
        if frame.most is not None:
            out.extend(self._group_most(frame))
        if frame.units.comparisons and (frame.agg == "count" or frame.wh):
            out.extend(self._group_having(frame))
        if frame.same_as and frame.anchors:
            out.extend(self._same_group(frame))
        for target in self._targets(frame):
            out.extend(self._entity_set(frame, target, now))
        return out

    # -- validity of the facts a query reads -----------------------------------------
    def _validity(
        self, frame: Frame, pats: list[str], params: dict[str, Any], *, successors: bool = True
    ) -> tuple[list[str], list[str]]:
        """Conditions (and OPTIONAL MATCHes) on every fact variable of ``pats``: currently
        valid; or valid in the question's window; and, with a knowledge time, recorded by
        then (a fact closed by a successor recorded later was still open as far as we
        knew then)."""
        win = frame.units.time
        known = frame.known_at
        timed = win is not None and (win.end_ms is not None or win.start_ms is not None)
        if timed or known is not None:
            end = win.end_ms if win is not None and win.end_ms is not None else None
            start = win.start_ms if win is not None and win.start_ms is not None else None
            if end is None and start is None:
                start, end = known, (known or 0) + 1
            elif end is None:
                end = (known + 1) if known is not None else 2**62
            if start is None:
                start = end - 1
            params["from_v"], params["to_v"] = start, end
        conds: list[str] = []
        opts: list[str] = []
        for f, head, rel in _fact_vars(" ".join(pats)):
            if known is not None:
                params["known_at"] = known
                conds.append(render(S.KNOWN_AT, f=f))
                if successors:
                    opts.append(render(S.SUCCESSOR_KNOWN, f=f, head=head, rel=rel))
                    conds.append(render(S.VALID_DURING_KNOWN, f=f))
                else:
                    conds.append(render(S.VALID_DURING, f=f))
            elif timed:
                conds.append(render(S.VALID_DURING, f=f))
            else:
                conds.append(render(S.VALID_NOW, f=f))
        return conds, opts

    def _finish(
        self,
        frame: Frame,
        pats: list[str],
        negs: list[tuple[str, str, dict[str, Any]]],
        where: list[str],
        params: dict[str, Any],
        base: list[str] | None = None,
        extra: list[str] | None = None,
    ) -> dict[str, str]:
        """The matches / optionals / where slots of an entity-set shape: the question's
        filters, the negated constraints and the validity of every fact read."""
        conds, opts = self._validity(frame, [*(base or []), *pats], params)
        for _opt, _cond, vp in negs:
            params.update(vp)
        opts = [o for o, _c, _p in negs if o] + opts
        conds = where + [c for _o, c, _p in negs] + conds + (extra or [])
        return self._clauses(pats, opts, conds)

    @staticmethod
    def _clauses(pats: list[str], opts: list[str], conds: list[str]) -> dict[str, str]:
        """The matches / optionals / where slots of an entity-set shape."""
        where = ""
        if conds:
            where = ("\nWITH * WHERE " if opts else "\nWHERE ") + " AND ".join(conds)
        return {
            "matches": "".join(f"\nMATCH {p}" for p in pats),
            "optionals": "".join(f"\n{o}" for o in opts),
            "where": where,
        }

    def _constraints(
        self, frame: Frame, target: str, anchors: list[Sense], start: int = 0
    ) -> list[tuple[list[str], list[str], float]] | None:
        """Patterns joining ``t`` to each positive anchor and conditions excluding each
        negated one, best combinations first (None when an anchor cannot be joined)."""
        combos: list[tuple[list[str], list[str], float]] = [([], [], 0.0)]
        same = [a for a in anchors if a.label == target]
        for k, a in enumerate(anchors, start):
            if a in same and a.key in frame.negated:  # "banks other than JPM": not JPM itself
                combos = [(p, [*n, ("", f"t.id <> $a{k}", {})], sc + 0.5) for p, n, sc in combos]
                continue
            links = self._links(target, a, frame)
            if a in same and not links:
                continue
            if not links:
                return None
            negated = a.key in frame.negated
            nxt = []
            for pats, negs, score in combos:
                for pat, bonus in links[: (1 if negated else 3)]:
                    p = (
                        pat.replace("{A}", f"a{k}:Entity {{id: $a{k}}}")
                        .replace("{F}", f"f{k}")
                        .replace("{X}", f"x{k}")
                    )
                    if negated:
                        # bind the anchor; the path is an OPTIONAL MATCH that must find nothing
                        q = p.replace(f"a{k}:Entity {{id: $a{k}}}", f"a{k}")
                        bind = f"(a{k}:Entity {{id: $a{k}}})"
                        first = _fact_vars(q)[0][0]
                        vp: dict[str, Any] = {}
                        vc, _ = self._validity(frame, [q], vp, successors=False)
                        where = (" WHERE " + " AND ".join(vc)) if vc else ""
                        opt = render(S.ABSENT, path=q, where=where)
                        neg = (opt, f"{first} IS NULL", vp)
                        nxt.append(([*pats, bind], [*negs, neg], score + bonus))
                    else:
                        nxt.append(([*pats, p], negs, score + bonus))
            combos = sorted(nxt, key=lambda x: -x[2])[:4]
        return combos

    def _which_of_named(self, frame: Frame, now: datetime) -> list[ReadingCandidate]:
        """Which of the named entities meets the rest of the question ("BYD or CATL - which
        one has a chairman on file", "ICBC和招行哪个在深交所上市"): the entity set of their
        kind restricted to them (possibly none)."""
        if not _WHICH_NAMED.search(frame.question):
            return []
        named = [a for a in frame.anchors if a.label not in ("Indicator",)]
        by_label: dict[str, list[str]] = {}
        for a in named:
            by_label.setdefault(a.label, []).append(a.key)
        label, ids = max(by_label.items(), key=lambda kv: len(kv[1]), default=("", []))
        if len(ids) < 2 or not _IDENT.match(label):
            return []
        sub = replace(
            frame,
            anchors=[a for a in frame.anchors if a.key not in ids],
            target=label,
            concepts=[label, *(c for c in frame.concepts if c != label)],
            either={},
        )
        out = self._entity_set(sub, label, now, restrict=ids)
        for c in out:
            c.prior += 3.0
            c.description = f"which of {', '.join(ids)}: {c.description}"
            c.conclusive = True
        return out

    def _entity_set(
        self, frame: Frame, target: str, now: datetime, restrict: list[str] | None = None
    ) -> list[ReadingCandidate]:
        frame = self._regions_as_values(frame, target)
        others = {x for ids in frame.either.values() for x in ids[1:]}
        anchors = [a for a in frame.anchors if a.key not in others]  # one per "A or B"
        same = [a for a in anchors if a.label == target]
        combos = self._constraints(frame, target, anchors)
        if combos is None:
            return []
        params_base: dict[str, Any] = {f"a{k}": a.key for k, a in enumerate(anchors)}
        where, wparams, used = self._target_filters(frame, target)
        vpats = self._value_hops(frame, target, where, wparams, used)
        combos = [([*vpats, *p], n, sc + 0.5 * len(vpats)) for p, n, sc in combos]
        out = []
        for pats, negs, score in combos:
            params = {**params_base, **wparams}
            extra = []
            if restrict:  # "which of A and B ...": only the named ones
                params["ids"] = restrict
                extra.append("t.id IN $ids")
            for k, a in enumerate(anchors):  # "A or B": the anchor node is any of them
                if a.key in frame.either and a.key not in frame.negated:
                    node = f"(a{k}:Entity {{id: $a{k}}})"
                    pats = [p.replace(node, f"(a{k}:Entity)") for p in pats]
                    params[f"a{k}"] = frame.either[a.key]
                    extra.append(f"a{k}.id IN $a{k}")
            kept = [a for a in same if not _through_named(frame, target, pats, anchors.index(a))]
            if kept and not frame.include_anchor:
                extra.append(
                    "NOT t.id IN [" + ", ".join(f"$a{anchors.index(a)}" for a in kept) + "]"
                )
            edges = self._edge_exists(frame, target, pats) + self._has_data(frame, target, params)
            slots = self._finish(frame, pats, [*negs, *edges], where, params, None, extra)
            ret, desc_ret = self._entity_return(frame, target, used)
            cy = render(S.ENTITY_SET, target=target, ret=ret, **slots)
            pos = [a for a in anchors if a.key not in frame.negated]
            desc = (
                f"{desc_ret} {target.lower()}"
                + "".join(f" {_rel_words(p)} {a.name}" for p, a in zip(pats, pos, strict=False))
                + "".join(f" not {a.name}" for a in anchors if a.key in frame.negated)
                + "".join(f" with {c}" for c in used)
            )
            prior = 1.0 + score + 0.5 * (len(used) + len(negs))
            prior += 0.5 if target in frame.concepts else 0
            if not anchors and not used and target not in frame.concepts:
                prior -= 2
            if target == frame.target:
                prior += 1.5
            if same and not frame.same_as:
                prior -= 2.0  # companies "related" to a company without asking for peers
            if (
                frame.agg in ("latest", "change", "first")
                or (
                    frame.units.time is not None
                    and frame.units.time.kind not in ("as_of", "year", "month")
                )
                or (  # "the average daily close in August 2024 of the yield that tracks X",
                    # "days in 2024 the rate the Fed sets stood at 5.5": its points, not now
                    target == "Indicator"
                    and (frame.agg in ("max", "min", "avg") or bool(frame.units.comparisons))
                    and (frame.daily is not None or frame.units.time is not None)
                )
            ):
                prior -= 2.0  # values over time are series questions
            hinted = any(f":{r}]" in " ".join(pats) for r in frame.relations) or bool(edges)
            prior += 0.5 * len(edges)
            c = ReadingCandidate(cy, params, desc, prior, "entities", [a.key for a in anchors])
            c.supported = bool(used or negs or hinted or extra) or (
                not anchors and target in frame.concepts and frame.agg == "count"
            )
            out.append(c)
        return out

    def _has_data(
        self, frame: Frame, target: str, params: dict[str, Any]
    ) -> list[tuple[str, str, dict[str, Any]]]:
        """Indicators with (without) points, in the question's window when it names one
        ("月度指标里有数据的有几个", "how many monthly indicators have no observations")."""
        trig = triggers()["has_data"]
        if target != "Indicator" or not _any(trig["patterns"], frame.question):
            return []
        neg = _any(trig["negated"], frame.question)
        win = frame.units.time
        conds = ["ob IS NOT NULL"]
        if win is not None and win.start_ms is not None:
            params["from_d"] = win.start_ms
            conds.append("coalesce(ob.observed_at, ob.last_at) >= $from_d")
        if win is not None and win.end_ms is not None:
            params["to_d"] = win.end_ms
            conds.append("coalesce(ob.observed_at, ob.first_at) < $to_d")
        where = " WHERE " + " AND ".join(conds[1:]) if len(conds) > 1 else ""
        opt = render(S.ABSENT, path="(t)-[:HAS_OBSERVATION|HAS_DAILY]->(ob)", where=where)
        return [(opt, f"ob IS {'NULL' if neg else 'NOT NULL'}", {})]

    def _edge_exists(
        self, frame: Frame, target: str, pats: list[str]
    ) -> list[tuple[str, str, dict[str, Any]]]:
        """Edges that must (not) exist from the target, for relations named with nothing
        after them ("firms with a CEO recorded", "没有CEO记录的公司"): an OPTIONAL MATCH of
        the current edge that must find something (nothing); a concept named for the
        other end is its label ("don't belong to any theme")."""
        out: list[tuple[str, str, dict[str, Any]]] = []
        used = " ".join(pats)
        for k, (rel, neg) in enumerate(frame.bare_relations):
            kind = rel[1:] if rel.startswith("*") else None  # any relation to that concept
            if kind is None and f":{rel}]" in used:
                continue
            links = {
                (d, r, other)
                for (h, r, t), _n in self.lex.edge_stats.items()
                if (r == rel if kind is None else r in _MEMBERSHIP)
                for d, mine, other in (("out", h, t), ("in", t, h))
                if mine == target or self.is_a(target, mine)
            }
            if kind is not None:
                links = {x for x in links if x[2] == kind}
                if not links or any(f"(:{kind})" in u for u in used.split("MATCH")):
                    continue
                rel = sorted(links)[0][1]
            ends = {(d, o) for d, _r, o in links}
            if not ends or not _IDENT.match(rel):
                continue
            named = [kind] if kind else []
            named = named or [
                c for c in frame.concepts if c != target and any(o == c for _d, o in ends)
            ]
            d = next((d for d, o in sorted(ends) if not named or o == named[0]), None)
            if d is None:
                continue
            node = f"(:{named[0]})" if named else "()"
            e = f"e{k}"
            path = f"(t)-[{e}:{rel}]->{node}" if d == "out" else f"(t)<-[{e}:{rel}]-{node}"
            opt = render(S.ABSENT, path=path, where=f" WHERE {e}.valid_to IS NULL")
            out.append((opt, f"{e} IS {'NULL' if neg else 'NOT NULL'}", {}))
        return out

    def _value_hops(
        self,
        frame: Frame,
        target: str,
        where: list[str],
        params: dict[str, Any],
        used: list[str],
    ) -> list[str]:
        """Values of a named concept one relation away from the target ("CEOs of
        Nasdaq-listed companies": the exchange is the company's)."""
        pats = []
        for k, v in enumerate(frame.values):
            labels = self.lex.value_props.get(v.key, set())
            if any(self.is_a(target, lb) or self.is_a(lb, target) for lb in labels):
                continue
            mid = next(
                (
                    c
                    for c in frame.concepts
                    if c != target and any(self.is_a(c, lb) for lb in labels)
                ),
                None,
            )
            if mid is None or not _IDENT.match(v.key):
                continue
            pairs = [x for x in self._pairs(target, mid, frame.relations) if x[2] >= 0]
            if not pairs:
                continue
            r, d, _b = pairs[0]
            pats.append(
                f"(t)-[fv{k}:{r}]->(xv{k}:{mid})"
                if d == "out"
                else f"(t)<-[fv{k}:{r}]-(xv{k}:{mid})"
            )
            params[f"vv{k}"] = v.label
            where.append(f"xv{k}.{v.key} = $vv{k}")
            used.append(f"{mid.lower()} {v.key} {v.label}")
        return pats

    def _target_filters(
        self, frame: Frame, target: str
    ) -> tuple[list[str], dict[str, Any], list[str]]:
        where: list[str] = []
        params: dict[str, Any] = {}
        used: list[str] = []
        seen: dict[str, int] = {}  # property -> index of its positive values' clause
        for k, v in enumerate(frame.values):
            labels = self.lex.value_props.get(v.key, set())
            if not any(self.is_a(target, lb) or self.is_a(lb, target) for lb in labels):
                continue
            negated = f"{v.key}={v.label}" in frame.negated
            if not _IDENT.match(v.key):
                continue
            if not negated and v.key in seen:  # "NASDAQ or NYSE companies": one property
                at = seen[v.key]  # holds one value, so two named values mean either one
                name = f"v{at}"
                if v.label not in params[name]:
                    params[name] = [*params[name], v.label]
                    where[where.index(f"t.{v.key} = ${name}")] = f"t.{v.key} IN ${name}"
                    used.append(f"or {v.label}")
                continue
            if negated:  # every excluded value counts
                params[f"v{k}"] = v.label
                where.append(f"(t.{v.key} IS NULL OR t.{v.key} <> $v{k})")
                used.append(f"{v.key} not {v.label}")
            else:
                seen[v.key] = k
                params[f"v{k}"] = [v.label]
                where.append(f"t.{v.key} = $v{k}")
                used.append(f"{v.key} {v.label}")
        for k in seen.values():  # a single value stays a plain equality
            if len(params[f"v{k}"]) == 1:
                params[f"v{k}"] = params[f"v{k}"][0]
        plain = [w for w in where if w.startswith("t.") and "$v" in w]
        if frame.values_either and len(plain) >= 2:  # "unit = index or category = policy_rate"
            where = [w for w in where if w not in plain] + [f"({' OR '.join(plain)})"]
            used.append("either")
        if frame.prefix is not None:  # "whose code starts with 60"
            pprop, pval = frame.prefix
            has = any(e.get("label") == target and pprop in e for e in self.lex.entities.values())
            if has and _IDENT.match(pprop):
                params["pfx"] = pval
                where.append(f"toUpper(t.{pprop}) STARTS WITH $pfx")
                used.append(f"{pprop} starting with {pval}")
        numeric = self._numeric_props(target)
        prop = next((p for p in frame.properties if p in numeric), None)
        if prop is None and target == "Indicator":
            prop = "last_value"
        if frame.prefix is not None:
            prop = None  # the prefix's digits are no threshold
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
        latest = frame.units.time is None and frame.daily is None  # not "in August", "closes"
        if prop is None and target == "Indicator" and frame.agg in ("max", "min", "avg") and latest:
            prop = "last_value"
        if frame.agg == "count":
            return render(S.RET_COUNT), shape(S.RET_COUNT).describe
        if frame.agg in ("max", "min") and prop:
            q = frame.question
            if _WHICH.search(q) or _WHAT_NOUN.search(q) or "哪" in q:
                ret = render(S.RET_TOP_BY_PROP, prop=prop, fn=frame.agg)
                return ret, f"the {frame.agg} {prop}"
            return render(S.RET_AGG_PROP, fn=frame.agg, prop=prop), f"{frame.agg} {prop} of"
        if frame.agg == "avg" and prop:
            return render(S.RET_AGG_PROP, fn="avg", prop=prop), f"average {prop} of"
        asked = self._asked_property(frame, target)
        if asked is not None:  # "the currency of the bond tracked by CN10Y"
            return render(S.RET_ENTITIES_PROP, prop=asked), f"the {asked.replace('_', ' ')} of"
        return render(S.RET_ENTITIES), shape(S.RET_ENTITIES).describe

    def _asked_property(self, frame: Frame, target: str) -> str | None:
        """A property of the set's members the question asks for and does not filter on
        (no value of it, no comparison), returned beside each member."""
        if frame.agg is not None or frame.units.comparisons:
            return None
        filtered = {v.key for v in frame.values} | {"id", "name"}  # both returned anyway
        have = self._props_of(target)
        return next(
            (p for p in frame.properties if p in have and p not in filtered and _IDENT.match(p)),
            None,
        )
