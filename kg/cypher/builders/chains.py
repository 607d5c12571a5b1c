"""Chains: three or more hops through the concepts named in order, and relation
words walked out from the one named entity.
"""

from __future__ import annotations

from typing import Any

from kg.cypher.frame import _IDENT, Frame, ReadingCandidate
from kg.cypher.lexicon import Lexicon
from kg.cypher.shapes import ShapeName as S
from kg.cypher.shapes import render
from kg.graph.ontology import Ontology


class ChainsBuilder:
    lex: Lexicon
    onto: Ontology

    def _chain_path(self, labels: list[str], rels: list[str | None]) -> str | None:
        """The pattern from the named entity ``a0`` through ``labels`` (the last bound to
        ``t``, those between to ``x1``, ``x2``...), each hop by its relation word or the
        graph's commonest join; None when a hop has no join or a label is not plain."""
        parts = ["(a0:Entity {id: $a0})"]
        for k, (lab, rel) in enumerate(zip(labels[1:], rels, strict=True), 1):
            hop = self._hop(labels[k - 1], lab, rel)
            if hop is None or not _IDENT.match(lab):
                return None
            r, d = hop
            node = f"(t:{lab})" if k == len(labels) - 1 else f"(x{k}:{lab})"
            parts.append(f"-[f{k}:{r}]->{node}" if d == "out" else f"<-[f{k}:{r}]-{node}")
        return "".join(parts)

    def _hop(self, a: str, b: str, rel: str | None) -> tuple[str, str] | None:
        """(relationship type, direction) joining label ``a`` to ``b`` in the graph: the
        named relation if it joins them, else the one with the most edges."""
        best: tuple[int, str, str] | None = None
        for (h, r, t), n in self.lex.edge_stats.items():
            for d, x, y in (("out", h, t), ("in", t, h)):
                if (x == a or self.is_a(a, x)) and (y == b or self.is_a(b, y)):
                    score = n + (10**9 if r == rel else 0)
                    if best is None or score > best[0]:
                        best = (score, r, d)
        return None if best is None or not _IDENT.match(best[1]) else (best[1], best[2])

    def _chain(self, frame: Frame) -> list[ReadingCandidate]:
        """Three or more hops from the one named entity through the concepts named after
        it, in order ("张坤的基金持有的股票属于哪个行业", "the industry of the stocks E Fund
        Blue Chip holds"); a relation word after the last concept names one more hop
        ("what does Zhang Kun's fund hold"). Each hop's relation: the word between, else
        the graph's most common edge between the two kinds."""
        seq = list(frame.sequence)
        ents = [x for x in seq if x[0] == "E"]
        if len(ents) == 1 and seq and seq[0][0] == "C" and seq[0][2] == "wh":
            # "which industries are the stocks held by Zhang Kun's fund in": read backwards,
            # the possessive's concept staying after its owner ("Zhang Kun's fund")
            seq = seq[::-1]
            if len(seq) > 1 and seq[0][0] == "C" and seq[1][0] == "E":
                seq[0], seq[1] = seq[1], seq[0]
        elif len(seq) == 3 and [x[0] for x in seq] == ["R", "E", "C"]:
            # "the holdings of Zhang Kun's fund": a relation noun before the entity's concept
            # names the hop after it, as "what does Zhang Kun's fund hold" does
            seq = [*seq[1:], seq[0]]
        elif len(seq) == 4 and [x[0] for x in seq[:2]] == ["R", "C"]:
            # "the holdings of the fund Zhang Kun manages / managed by Zhang Kun": the
            # clause's relation joins the entity to the concept, the first one goes on
            e = next((x for x in seq[2:] if x[0] == "E"), None)
            r = next((x for x in seq[2:] if x[0] == "R"), None)
            if e is not None and r is not None:
                seq = [e, r, seq[1], seq[0]]
        if (
            len(ents) != 1
            or seq[0][0] != "E"
            or frame.units.time is not None
            or frame.units.comparisons
            or any(x[0] == "V" for x in seq)  # values constrain: the entity-set shapes
            or frame.bare_relations
            or frame.negated
            or frame.properties  # "在哪个交易所上市": an attribute
        ):
            return []
        labels: list[str] = [ents[0][2]]
        rels: list[str | None] = []
        pending: str | None = None
        for item in seq[1:]:
            if item[0] == "R":
                pending = item[1]
            elif item[0] == "C" and item[1] != labels[-1]:
                labels.append(item[1])
                rels.append(pending)
                pending = None
        asked = any(x[0] == "C" and x[2] == "wh" and x[1] == labels[-1] for x in seq)
        extended = False
        if pending is not None and not asked:  # "what does Zhang Kun's fund hold"
            ends = {
                (t if h == labels[-1] else h)
                for (h, r, t) in self.lex.edge_stats
                if r == pending and labels[-1] in (h, t)
            }
            if len(ends) == 1:
                labels.append(ends.pop())
                rels.append(pending)
                extended = True
        if len(labels) < (2 if extended else 3):
            return []  # one hop: the entity-set shapes' job
        if len(labels) == 3 and rels[-1] is None and not asked and not extended:
            return []  # two hops with nothing asked of the last: the other shapes' job
        path = self._chain_path(labels, rels)
        if path is None:
            return []
        params: dict[str, Any] = {"a0": ents[0][1]}
        conds, _opts = self._validity(frame, [path], params, successors=False)
        where = ("\nWHERE " + " AND ".join(conds)) if conds else ""
        target = labels[-1]
        ret, desc_ret = self._entity_return(frame, target, [])
        cy = render(S.ENTITY_CHAIN, path=path, where=where, ret=ret)
        desc = f"{desc_ret} {target.lower()} reached from {ents[0][1]} via {' '.join(labels[1:-1])}"
        prior = 5.0 + (1.0 if target == frame.target else 0.0)
        return [ReadingCandidate(cy, params, desc, prior, "entities", [ents[0][1]])]

    def _relation_walk(self, frame: Frame) -> list[ReadingCandidate]:
        """Two or more relation words walked out from the one named entity, nearest first
        ("who issued the bond that US2Y tracks", "中国10年国债收益率跟踪的那只债是谁发的":
        indicator -TRACKS-> bond -ISSUED_BY-> issuer), each hop to the one kind the graph
        joins by that relation; for an entity whose words name no concept on the way."""
        seq = list(frame.sequence)
        ents = [i for i, x in enumerate(seq) if x[0] == "E"]
        rels = [i for i, x in enumerate(seq) if x[0] == "R"]
        if (
            len(ents) != 1
            or len(rels) < 2
            or any(x[0] == "V" for x in seq)
            or frame.units.time is not None
            or frame.units.comparisons
            or frame.negated
            or frame.properties
        ):
            return []
        e = ents[0]
        if len({seq[i][1] for i in rels}) != len(rels):
            return []  # "who runs Tesla as CEO": one relation named twice, not a walk
        order = sorted(rels, key=lambda i: (abs(i - e), i))
        labels = [seq[e][2]]
        hops: list[str] = []
        for i in order:
            r = seq[i][1]
            ends = {
                (t if self.is_a(labels[-1], h) else h)
                for (h, rr, t) in self.lex.edge_stats
                if rr == r and (self.is_a(labels[-1], h) or self.is_a(labels[-1], t))
            } - set(labels)
            if len(ends) != 1:
                return []  # no single kind, or back to one already passed
            labels.append(ends.pop())
            hops.append(r)
        target = labels[-1]
        if frame.target not in (None, "Person", target) or not _IDENT.match(target):
            return []
        path = self._chain_path(labels, hops)
        if path is None:
            return []
        params: dict[str, Any] = {"a0": seq[e][1]}
        conds, _opts = self._validity(frame, [path], params, successors=False)
        where = ("\nWHERE " + " AND ".join(conds)) if conds else ""
        ret, desc_ret = self._entity_return(frame, target, [])
        cy = render(S.ENTITY_CHAIN, path=path, where=where, ret=ret)
        desc = f"{desc_ret} {target.lower()} reached from {seq[e][1]} via {' '.join(hops)}"
        return [ReadingCandidate(cy, params, desc, 5.5, "entities", [seq[e][1]])]
