"""Whether rows answer the question that was asked: the check a revised (LLM-written)
query must pass besides the guard and ``EXPLAIN``. The question's frame says which kind
of answer it wants (a count, a number, entities of a concept, a property); rows of
another kind are refused, so a model cannot "answer" with whatever happened to run."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from kg.cypher.lexicon import Lexicon
from kg.cypher.synth import Frame
from kg.graph.ontology import Ontology, default_ontology

AnswerKind = Literal["count", "number", "entities", "property", "any"]
_VALUE_AGGS = ("max", "min", "avg", "change", "first", "latest")


def answer_kind(frame: Frame) -> tuple[AnswerKind, str | None]:
    """(kind, concept or property) the question asks for."""
    if frame.agg == "count" and frame.most is None:
        return "count", None
    indicator_anchor = any(a.label == "Indicator" for a in frame.anchors)
    if frame.agg in _VALUE_AGGS and (indicator_anchor or frame.units.time is not None):
        if not (frame.wh and frame.target not in (None, "Indicator")):
            return "number", None
    if frame.wh and frame.target is not None:
        return "entities", frame.target
    if frame.properties and frame.anchors:
        return "property", frame.properties[0]
    return "any", None


def _numbers(row: dict[str, Any]) -> list[Any]:
    return [v for v in row.values() if isinstance(v, int | float) and not isinstance(v, bool)]


def rows_fit(
    kind: AnswerKind,
    what: str | None,
    rows: Sequence[dict[str, Any]],
    lexicon: Lexicon,
    ontology: Ontology | None = None,
) -> bool:
    """True when ``rows`` are non-empty and of the asked kind."""
    rows = [r for r in rows if any(v is not None for v in r.values())]
    if not rows:
        return False
    if kind == "count":
        return len(rows) == 1 and len(_numbers(rows[0])) >= 1
    if kind == "number":
        return all(_numbers(r) for r in rows)
    if kind == "entities":
        onto = ontology or default_ontology()
        for r in rows:
            ids = [v for v in r.values() if isinstance(v, str) and v in lexicon.entities]
            if not ids:
                return False
            labels = [str(lexicon.entities[i].get("label") or "") for i in ids]
            if what and not any(onto.is_a(lb, what) or onto.is_a(what, lb) for lb in labels):
                return False
        return True
    if kind == "property":
        return all(what in r and r[what] is not None for r in rows)
    return True
