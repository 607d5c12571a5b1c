"""Groups and ranking over them: the same group as a member, the group with the
most (fewest) members, which of the named groups has more, groups by member count.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from kg.cypher.frame import _GROUPS, _IDENT, Frame, ReadingCandidate, _any
from kg.cypher.lexicon import Lexicon, Sense, triggers
from kg.cypher.shapes import ShapeName as S
from kg.cypher.shapes import render, shape
from kg.graph.ontology import Ontology


class GroupsBuilder:
    lex: Lexicon
    onto: Ontology

    def _same_group(self, frame: Frame) -> list[ReadingCandidate]:
        """Other members of the anchor's group ("same industry as Intel"), with the
        question's other constraints (listed in China, on the SSE, in a theme...)."""
        members = [a for a in frame.anchors if a.label not in _GROUPS and a.label != "Region"]
        if not members:
            return []
        a = members[0]
        rest = [x for x in frame.anchors if x.key != a.key]
        target = frame.target if frame.target and frame.target not in _GROUPS else a.label
        if target in ("Person", "Executive"):
            target = a.label
        said = [g for g, pats in triggers()["same_as_group"].items() if _any(pats, frame.question)]
        groups = [c for c in frame.concepts if c in _GROUPS and c != target]
        groups = said or groups or list(_GROUPS)
        out = []
        for g in groups[:3]:
            # the group's own relation, not one the other constraints name ("listed in")
            for r1, d1, b1 in self._pairs(target, g, [])[:1]:
                for r2, d2, b2 in self._pairs(a.label, g, [])[:1]:
                    if b1 < -0.5 or b2 < -0.5 or d1 != "out" or d2 != "out":
                        continue
                    base = f"(g0:Entity {{id: $g0}})-[fg0:{r2}]->(x:{g})<-[fg1:{r1}]-(t:{target})"
                    combos = self._constraints(frame, target, rest) or []
                    for pats, negs, score in combos:
                        params: dict[str, Any] = {"g0": a.key}
                        params.update({f"a{k}": x.key for k, x in enumerate(rest)})
                        where, wparams, used = self._target_filters(frame, target)
                        params.update(wparams)
                        extra = [] if frame.include_anchor else ["t.id <> $g0"]
                        slots = self._finish(frame, pats, negs, where, params, [base], extra)
                        ret, _ = self._entity_return(frame, target, used)
                        cy = render(
                            S.SAME_GROUP,
                            rel_anchor=r2,
                            group=g,
                            rel_target=r1,
                            target=target,
                            ret=ret,
                            **slots,
                        )
                        desc = shape(S.SAME_GROUP).describe.format(
                            target=target.lower(), group=g.lower(), name=a.name
                        ) + "".join(f" with {c}" for c in used)
                        prior = 5.0 + b1 + b2 + score + 0.5 * (len(pats) + len(used) + len(negs))
                        prior += 0.5 if g in frame.concepts else 0
                        out.append(ReadingCandidate(cy, params, desc, prior, "entities", [a.key]))
        return out

    def _group_most(self, frame: Frame) -> list[ReadingCandidate]:
        """The group (or property value) with the most members matching the question's
        other constraints ("which industry has the most companies listed in the US")."""
        named = [c for c in frame.concepts if c in self._concrete_labels()]
        prop = next((p for p in frame.properties if not self._numeric_props_has(p)), None)
        order = "max" if frame.most == "max" else "min"
        group, member, rels = self._group_and_member(frame, named)
        out: list[ReadingCandidate] = []
        if group is None and prop is not None and _IDENT.match(prop):
            member = member or (named[0] if named else "Company")
            for pats, negs, score in (self._constraints(frame, member, frame.anchors) or [])[:2]:
                params: dict[str, Any] = {f"a{k}": x.key for k, x in enumerate(frame.anchors)}
                where, wparams, _used = self._target_filters(frame, member)
                params.update(wparams)
                slots = self._finish(frame, pats, negs, where, params)
                cy = render(S.VALUE_ARGMAX, member=member, prop=prop, order=order, **slots)
                desc = shape(S.VALUE_ARGMAX).describe.format(prop=prop, member=member.lower())
                out.append(ReadingCandidate(cy, params, desc, 6.0 + score, "entities", []))
        if group is None or member is None:
            return out
        combos = self._constraints(frame, member, list(frame.anchors)) or []
        for rel in rels[:2]:
            for pats, negs, score in combos[:2]:
                params = {f"a{k}": x.key for k, x in enumerate(frame.anchors)}
                where, wparams, _used = self._target_filters(frame, member)
                params.update(wparams)
                base = f"(t)-[fr:{rel}]->(g)"
                slots = self._finish(frame, pats, negs, where, params, [base])
                cy = render(
                    S.GROUP_ARGMAX, member=member, rel=rel, group=group, order=order, **slots
                )
                if frame.rank is not None:  # "tied for the second most"
                    params["rank"] = frame.rank
                    way = "DESC" if order == "max" else "ASC"
                    cy = render(
                        S.GROUP_RANK, member=member, rel=rel, group=group, order=way, **slots
                    )
                desc = shape(S.GROUP_ARGMAX).describe.format(
                    group=group.lower(), member=member.lower()
                )
                prior = 5.5 + score + (1.0 if rel in frame.relations else 0.0)
                out.append(ReadingCandidate(cy, params, desc, prior, "entities", []))
        return out

    def _named_most(self, frame: Frame) -> list[ReadingCandidate]:
        """Which of two or more named groups has more members ("who issues more bonds,
        MOF or CDB", "财政部和国开行谁发的债多", "which industry has more companies, banks or
        semis"): the member count of each named one, the highest (lowest) answers."""
        order = frame.compare or frame.most
        if order is None:
            return []
        by_label: dict[str, list[str]] = {}
        for a in frame.anchors:
            if a.key not in frame.negated:
                for x in frame.either.get(a.key, [a.key]):
                    ids = by_label.setdefault(a.label, [])
                    if x not in ids:
                        ids.append(x)
        named = [c for c in frame.concepts if c in self._concrete_labels()]
        out: list[ReadingCandidate] = []
        for group, ids in by_label.items():
            if len(ids) < 2 or group in ("Indicator",) or not _IDENT.match(group):
                continue
            by_rel = [
                (o, r, d)
                for (h, r, t) in self.lex.edge_stats
                if r in frame.relations and group in (h, t)
                for o, d in ((h, "in"), (t, "out"))
                if o != group
            ]
            members = sorted({c for c in named if c != group}, key=lambda c: c == "Person")
            links = [*by_rel]
            for member in [*members, "Company"]:
                links += [
                    (member, r, "in")
                    for r, d, _b in self._pairs(member, group, [])
                    if d == "out" and self._data(member, r, group)
                ]
            for member, rel, d in links:
                if not (_IDENT.match(member) and _IDENT.match(rel)):
                    continue
                path = (
                    f"(t:{member})-[fr:{rel}]->(g)"
                    if d == "in"
                    else f"(g)-[fr:{rel}]->(t:{member})"
                )
                fn = "max" if order == "max" else "min"
                cy = render(S.NAMED_ARGMAX, group=group, path=path, order=fn)
                desc = shape(S.NAMED_ARGMAX).describe.format(
                    group=group.lower(), member=member.lower()
                )
                prior = 7.0 + (1.0 if member in named or rel in frame.relations else 0.0)
                out.append(ReadingCandidate(cy, {"gids": ids}, desc, prior, "entities", ids))
                break
        return out

    def _group_having(self, frame: Frame) -> list[ReadingCandidate]:
        """How many groups have a number of members ("industries with only one company",
        "公司数超过两家的行业")."""
        named = [c for c in frame.concepts if c in self._concrete_labels()]
        group, member, rels = self._group_and_member(frame, named)
        if group is None or member is None or group == "Entity" or group != frame.target:
            return []
        c = frame.units.comparisons[0]
        if c.op not in (">", ">=", "<", "<=", "="):
            return []
        params: dict[str, Any] = {"members": c.value}
        matches, conds = "", ""
        if frame.anchors:  # the members' own constraints ("... companies listed in China")
            combos = self._constraints(frame, member, list(frame.anchors))
            if not combos:
                return []
            pats, _negs, _score = combos[0]
            params.update({f"a{k}": a.key for k, a in enumerate(frame.anchors)})
            vc, _opts = self._validity(frame, pats, params, successors=False)
            matches = "".join(f"\nMATCH {p}" for p in pats)
            conds = "".join(f" AND {x}" for x in vc)
        ret = (
            "RETURN count(g) AS count"
            if frame.agg == "count"
            else "RETURN g.id AS id, g.name AS name\nORDER BY id"
        )
        out = []
        for rel in rels[:1]:
            cy = render(
                S.GROUP_HAVING,
                group=group,
                rel=rel,
                member=member,
                op=c.op,
                matches=matches,
                conds=conds,
                ret=ret,
            )
            desc = shape(S.GROUP_HAVING).describe.format(
                group=group.lower(), op=f"{c.op} {c.value:g}"
            )
            out.append(ReadingCandidate(cy, params, desc, 6.0, "entities", []))
        return out

    def _group_and_member(
        self, frame: Frame, named: list[str]
    ) -> tuple[str | None, str | None, list[str]]:
        """(group label, member label, relations member -> group) of a "which X has the
        most Y" question: a named concept that the graph links another named concept (or
        companies) to; else a named relation's far end ("issuers with the most bonds")."""
        order = [frame.target] if frame.target in named else []
        order += [c for c in named if c not in order]
        for g in order:
            for m in [*[c for c in named if c != g], "Company"]:
                if m == g:
                    continue
                rels = [
                    r for r, d, _b in self._pairs(m, g, []) if d == "out" and self._data(m, r, g)
                ]
                if rels:
                    hinted = [r for r in rels if r in frame.relations]
                    return g, m, hinted or rels
        for r in frame.relations:
            rel = self.onto.relation(r)
            if rel is None:
                continue
            for m in [*named, "Company"]:
                if any(self.is_a(m, d) for d in rel.domain) and self._data(m, r, "Entity"):
                    return "Entity", m, [r]
        return None, (named[0] if named else None), []

    def _numeric_props_has(self, prop: str) -> bool:
        return any(prop in self._numeric_props(c.label) for c in self.onto.concepts)

    def _regions_as_values(self, frame: Frame, target: str) -> Frame:
        """A region named for entities that have no edge to a region but record a country
        ("美国的指标", "chinese monthly indicators"): their ``country`` property instead."""
        members = [e for e in self.lex.entities.values() if e.get("label") == target]
        countries = {e.get("country") for e in members}
        if not any(a.label == "Region" and a.key in countries for a in frame.anchors):
            return frame
        if any(
            self._data(target, r.type, "Region") or self._data("Region", r.type, target)
            for r in self.onto.relations
        ):
            return frame  # the graph links them to regions: the edge decides
        keep = [a for a in frame.anchors if not (a.label == "Region" and a.key in countries)]
        moved = [a for a in frame.anchors if a not in keep]
        values = [*frame.values, *(Sense("value", "country", a.key) for a in moved)]
        negated = frame.negated | {f"country={a.key}" for a in moved if a.key in frame.negated}
        return replace(frame, anchors=keep, values=values, negated=frozenset(negated))
