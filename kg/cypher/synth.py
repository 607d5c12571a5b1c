"""Cypher synthesis (FinQA, "Cypher Synthesis"): variable alignment and clause
combination of the parsing units into candidate queries.

A question's mentions (``lexicon``) and units (``units``) are read into a ``Frame``
(``kg/cypher/frame.py``). Every reading the schema allows becomes a ``ReadingCandidate``
(Cypher + parameters + a plain-language description for ranking + a prior from how
much of the question it uses), made by one builder per part of the query algebra
(``kg/cypher/builders/``: series, entity sets, groups, chains); ``Synthesizer`` composes
them. Every query ends in a LIMIT, and none writes.
"""

from __future__ import annotations

from datetime import datetime

from kg.cypher.builders.chains import ChainsBuilder
from kg.cypher.builders.derived import DerivedBuilder
from kg.cypher.builders.groups import GroupsBuilder
from kg.cypher.builders.series import SeriesBuilder
from kg.cypher.builders.sets import SetsBuilder
from kg.cypher.frame import (  # noqa: F401 - re-exported
    _MEMBERSHIP,
    Frame,
    ReadingCandidate,
    _ever,
    is_negation,
    pair_anchors,
    read_frame,
    spread_anchors,
)
from kg.cypher.lexicon import Lexicon
from kg.cypher.shapes import ShapeName as S
from kg.cypher.shapes import render
from kg.graph.ontology import Ontology, default_ontology


class Synthesizer(SeriesBuilder, DerivedBuilder, SetsBuilder, GroupsBuilder, ChainsBuilder):
    """Every candidate query for a frame, from the builders of each part."""

    def __init__(self, lexicon: Lexicon, ontology: Ontology | None = None) -> None:
        self.lex = lexicon
        self.onto = ontology or default_ontology()

    # -- entry point -------------------------------------------------------------------
    def candidates(self, frame: Frame, now: datetime) -> list[ReadingCandidate]:
        self._members_target(frame)
        out: list[ReadingCandidate] = self._relation_walk(frame)  # before any reads the target
        out += self._when(frame)
        out += self._series(frame, now)
        out += self._attributes(frame)
        out += self._entity_sets(frame, now)
        out += self._which_of_named(frame, now)
        out += self._named_most(frame)
        out += self._chain(frame)
        if not out and frame.anchors:
            out.append(self._describe(frame))
        for c in out:
            c.cypher = c.cypher.strip()
        return out

    def _members_target(self, frame: Frame) -> None:
        """A group named with no concept asked for ("banks listed in china", "high dividend
        theme constituents", "AI names that are not semis"): the question is about its
        members, the label with the most membership edges into that group in the graph."""
        if frame.prefix is not None and frame.target is None and not frame.concepts:
            having: dict[str, int] = {}  # "names whose code starts with 00": who has codes
            for e in self.lex.entities.values():
                if frame.prefix[0] in e:
                    having[e["label"]] = having.get(e["label"], 0) + 1
            if having:
                frame.target = max(having, key=lambda k: having[k])
                frame.concepts.append(frame.target)
                return
        if frame.target is not None or frame.concepts or frame.same_as:
            return
        if any(a.label in ("Indicator", "Bond") for a in frame.anchors):
            return
        for a in frame.anchors:
            if a.key in frame.negated:
                continue
            counts: dict[str, int] = {}
            for (h, r, t), n in self.lex.edge_stats.items():
                if t == a.label and r in _MEMBERSHIP:
                    counts[h] = counts.get(h, 0) + n
            if counts and a.label not in counts:
                frame.target = max(counts, key=lambda k: counts[k])
                frame.concepts.append(frame.target)
                return

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

    def _describe(self, frame: Frame) -> ReadingCandidate:
        a = frame.anchors[0]
        cy = render(S.DESCRIBE)
        return ReadingCandidate(cy, {"a": a.key}, f"what {a.name} is", 0.0, "describe", [a.key])
