"""The question lexicon over the bundled universe, with the edge statistics the query
service would read from a graph holding it: one builder for the tests of question parsing
that need no graph."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from functools import cache
from typing import Any

from kg.cypher.lexicon import Lexicon
from kg.cypher.synth import Frame, ReadingCandidate, Synthesizer, read_frame
from kg.cypher.units import parse
from kg.graph.static import bundled_universe_path

NOW = datetime(2026, 11, 21, tzinfo=UTC)  # the blind sets' "now", a Saturday


@cache
def universe_lexicon() -> Lexicon:
    data = json.loads(bundled_universe_path().read_text(encoding="utf-8"))
    types = {e["id"]: e["type"] for e in data["entities"]}
    rows: list[dict[str, Any]] = []
    for e in data["entities"]:
        row = {k: v for k, v in e.items() if k not in ("type", "properties")}
        row.update(e.get("properties") or {})
        row["labels"] = ["Entity", e["type"]]
        rows.append(row)
    lex = Lexicon.build(rows)
    for r in data["relations"]:  # edge statistics as the graph would report them
        key = (types[r["head"]], r["relation"], types[r["tail"]])
        lex.edge_stats[key] = lex.edge_stats.get(key, 0) + 1
    return lex


def frame(question: str) -> Frame:
    """The question read into slots over the bundled universe, at ``NOW``."""
    toks, mentions = universe_lexicon().match(question)
    return read_frame(question, toks, mentions, parse(question, NOW))


def best(question: str) -> ReadingCandidate:
    """The candidate query with the highest prior for ``question``."""
    cands = Synthesizer(universe_lexicon()).candidates(frame(question), NOW)
    return max(cands, key=lambda c: c.prior)
