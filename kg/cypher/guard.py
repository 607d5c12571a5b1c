"""Read-only guard for Cypher, the first of two layers (the store's read-only mode is
the second: FalkorDB ``GRAPH.RO_QUERY``, Neo4j sessions with read access).

The check works on tokens, not on the raw text: string literals, comments and
backtick-quoted names are lexed away first, so ``MATCH (n {name: 'DELETE'})`` passes
and ``/* */ DETACH DELETE`` does not hide a write. Rejected: write clauses, schema
changes, ``LOAD CSV``, ``FOREACH``, subqueries that write, procedure calls outside
``ALLOWED_PROCEDURES`` and more than one statement.
"""

from __future__ import annotations

import re

from core.errors import ReadOnlyViolation

WRITE_KEYWORDS = frozenset(
    {
        "CREATE",
        "MERGE",
        "SET",
        "DELETE",
        "DETACH",
        "REMOVE",
        "DROP",
        "FOREACH",
        "LOAD",
        "ALTER",
        "GRANT",
        "DENY",
        "REVOKE",
        "RENAME",
        "TERMINATE",
        "START",
        "STOP",
        "USE",
    }
)
ALLOWED_PROCEDURES = frozenset(
    {"db.labels", "db.relationshiptypes", "db.propertykeys", "db.indexes"}
)

_TOKEN = re.compile(
    r"""(?P<ws>\s+)
      |(?P<comment>//[^\n]*|/\*.*?\*/)
      |(?P<string>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")
      |(?P<quoted>`(?:[^`]|``)*`)
      |(?P<param>\$[A-Za-z_][A-Za-z0-9_]*)
      |(?P<word>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)
      |(?P<number>\d+(?:\.\d+)?)
      |(?P<punct>[^\sA-Za-z0-9_])""",
    re.VERBOSE | re.DOTALL,
)


def tokens(cypher: str) -> list[tuple[str, str]]:
    """(kind, text) tokens; unterminated strings or comments raise ReadOnlyViolation."""
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(cypher):
        m = _TOKEN.match(cypher, pos)
        if m is None:
            raise ReadOnlyViolation(f"cannot lex the query at offset {pos}")
        kind = m.lastgroup or "punct"
        if kind == "punct" and m.group() in "'\"`":
            raise ReadOnlyViolation("unterminated string or quoted name")
        if kind == "punct" and cypher.startswith("/*", pos):
            raise ReadOnlyViolation("unterminated comment")
        if kind not in ("ws", "comment"):
            out.append((kind, m.group()))
        pos = m.end()
    return out


def check_read_only(cypher: str) -> None:
    """Raise ReadOnlyViolation unless ``cypher`` is one read-only statement."""
    toks = tokens(cypher)
    if not toks:
        raise ReadOnlyViolation("empty query")
    words = [(i, t.upper()) for i, (k, t) in enumerate(toks) if k == "word"]
    for i, (kind, text) in enumerate(toks):
        if kind == "punct" and text == ";" and any(k != "punct" for k, _ in toks[i + 1 :]):
            raise ReadOnlyViolation("more than one statement")
    for i, word in words:
        prev = toks[i - 1][1] if i else ""
        if prev in (".", ":") or prev.upper() == "AS":  # n.set, :Set, ... AS set
            continue
        if i + 1 < len(toks) and toks[i + 1][1] == ":" and prev in ("{", ","):
            continue  # a map key: {delete: 1}
        if word in WRITE_KEYWORDS:
            raise ReadOnlyViolation(f"read-only query contains {word!r}")
        if word == "CALL":
            nxt = toks[i + 1] if i + 1 < len(toks) else ("", "")
            if nxt[1] == "{":
                continue  # a subquery: its clauses are checked like the rest
            if nxt[0] != "word" or nxt[1].lower() not in ALLOWED_PROCEDURES:
                raise ReadOnlyViolation(f"procedure {nxt[1]!r} is not on the allow-list")


def is_read_only(cypher: str) -> bool:
    try:
        check_read_only(cypher)
    except ReadOnlyViolation:
        return False
    return True


_LIMIT_AT_END = re.compile(r"\bLIMIT\s+(\d+|\$[A-Za-z_]\w*)\s*;?\s*$", re.IGNORECASE)


def with_limit(cypher: str, limit: int) -> str:
    """``cypher`` capped at ``limit`` rows: a trailing LIMIT is lowered, else one added."""
    text = cypher.strip().rstrip(";").rstrip()
    m = _LIMIT_AT_END.search(text)
    if m and m.group(1).isdigit():
        n = min(int(m.group(1)), limit)
        return text[: m.start()] + f"LIMIT {n}"
    if m:  # a parameter: the caller's value is capped by the row cut in the executor
        return text
    return f"{text}\nLIMIT {limit}"
