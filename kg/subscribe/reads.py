"""What a read-only query reads: node labels, relationship types and the entity ids it
is pinned to (literals or parameters compared with ``id``).

Parsed from the query text with the lexer of the read-only guard (string literals and
comments are tokens there, never mistaken for labels). Over-approximating is safe (a
subscription woken for nothing re-evaluates and finds no change); under-approximating
would miss alerts, so anything not understood widens what the query is said to read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kg.cypher.guard import tokens
from kg.graph.ontology import Ontology, default_ontology


@dataclass(frozen=True)
class Reads:
    labels: frozenset[str] = field(default_factory=frozenset)
    relation_types: frozenset[str] = field(default_factory=frozenset)
    entity_ids: frozenset[str] = field(default_factory=frozenset)


def _literal(text: str) -> str:
    return text[1:-1].replace("\\'", "'").replace('\\"', '"')


def _values(tok: tuple[str, str], params: Mapping[str, Any]) -> list[str] | None:
    """String values of a literal or parameter token (None: not a string value)."""
    kind, text = tok
    if kind == "string":
        return [_literal(text)]
    if kind == "param":
        v = params.get(text[1:])
        if isinstance(v, str):
            return [v]
        if isinstance(v, list | tuple) and all(isinstance(x, str) for x in v):
            return list(v)
    return None


def query_reads(
    cypher: str, params: Mapping[str, Any] | None = None, ontology: Ontology | None = None
) -> Reads:
    """Labels, relationship types and entity ids ``cypher`` reads (see module doc).

    Entity ids count only when every id comparison in the query resolves to strings;
    one it cannot resolve (``a.id = b.other``) drops the ids, so the query is indexed
    by its labels and types instead.
    """
    onto = ontology or default_ontology()
    params = params or {}
    toks = tokens(cypher)
    rel_types = set(onto.relation_types)
    labels: set[str] = set()
    rels: set[str] = set()
    ids: set[str] = set()
    ids_ok = True
    depth_bracket = 0
    for i, (kind, text) in enumerate(toks):
        if kind == "punct" and text == "[":
            depth_bracket += 1
        elif kind == "punct" and text == "]":
            depth_bracket = max(0, depth_bracket - 1)
        prev = toks[i - 1] if i else ("", "")
        if kind in ("word", "quoted") and prev == ("punct", ":"):
            name = text.strip("`")
            before = toks[i - 2] if i >= 2 else ("", "")
            if before[0] == "punct" and before[1] in ("{", ","):
                continue  # unreachable: a map key precedes its colon
            if depth_bracket or name in rel_types:
                rels.add(name)
            else:
                labels.add(name)
        elif kind == "punct" and text == "|" and depth_bracket:
            nxt = toks[i + 1] if i + 1 < len(toks) else ("", "")
            if nxt[0] == "punct" and nxt[1] == ":" and i + 2 < len(toks):
                nxt = toks[i + 2]
            if nxt[0] == "word":
                rels.add(nxt[1])
        # id comparisons: {id: X}, n.id = X, n.id IN X, X = n.id
        if kind == "word" and (text == "id" or text.endswith(".id")):
            nxt = toks[i + 1] if i + 1 < len(toks) else ("", "")
            val = toks[i + 2] if i + 2 < len(toks) else ("", "")
            if text == "id" and nxt == ("punct", ":") and prev[1] in ("{", ","):
                got = _values(val, params)
            elif text.endswith(".id") and (nxt[1] == "=" or nxt[1].upper() == "IN"):
                got = _values(val, params) if val[1] != "[" else _list_values(toks, i + 2)
            else:
                continue
            if got is None:
                ids_ok = False
            else:
                ids.update(got)
    return Reads(
        labels=frozenset(labels),
        relation_types=frozenset(rels),
        entity_ids=frozenset(ids) if ids_ok else frozenset(),
    )


def _list_values(toks: list[tuple[str, str]], start: int) -> list[str] | None:
    """String literals of a ``[ 'a', 'b' ]`` list starting at ``toks[start]``."""
    out: list[str] = []
    for kind, text in toks[start + 1 :]:
        if kind == "punct" and text == "]":
            return out
        if kind == "punct" and text == ",":
            continue
        if kind != "string":
            return None
        out.append(_literal(text))
    return None
