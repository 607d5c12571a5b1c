"""What a drill reports, and the accounting that turns topic and graph contents into it.

Guarantee under test (docs/reliability.md): delivery is at-least-once, so a topic may
hold a record more than once after a crash (``redelivered``); every record has a stable
id, the graph merges on it and readers de-duplicate by it, so each *effect* exists
exactly once. ``lost`` counts expected ids that never appeared, ``duplicated`` effects
that exist twice (graph elements sharing an id) or outputs that should not exist at all.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from pydantic import BaseModel, Field


class Output(BaseModel):
    """One derived output, checked by id against what the sent records must produce."""

    expected: int
    distinct: int  # distinct ids found
    copies: int  # records found (>= distinct: at-least-once redelivery)
    missing: int
    unexpected: int


class DrillResult(BaseModel):
    name: str
    sent: int
    in_graph: int
    outputs: dict[str, Output] = Field(default_factory=dict)
    lost: int
    duplicated: int
    redelivered: int = 0  # extra copies on topics, removed by id (allowed by the guarantee)
    recovery_s: float
    ok: bool
    notes: list[str] = Field(default_factory=list)


def check_output(expected: Iterable[str], found: Iterable[str]) -> Output:
    want = set(expected)
    counts = Counter(found)
    return Output(
        expected=len(want),
        distinct=len(counts),
        copies=sum(counts.values()),
        missing=len(want - counts.keys()),
        unexpected=len(counts.keys() - want),
    )


def summarize(
    name: str,
    *,
    sent: int,
    in_graph: int,
    graph_missing: int,
    graph_duplicates: int,
    outputs: dict[str, Output],
    recovery_s: float,
    notes: list[str] | None = None,
) -> DrillResult:
    lost = graph_missing + sum(o.missing for o in outputs.values())
    duplicated = graph_duplicates + sum(o.unexpected for o in outputs.values())
    return DrillResult(
        name=name,
        sent=sent,
        in_graph=in_graph,
        outputs=outputs,
        lost=lost,
        duplicated=duplicated,
        redelivered=sum(o.copies - o.distinct for o in outputs.values()),
        recovery_s=round(recovery_s, 2),
        ok=lost == 0 and duplicated == 0,
        notes=notes or [],
    )
