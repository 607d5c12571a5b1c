"""Prometheus counts of what extraction produced and dropped (facts per document kind,
table cells dropped by reason), so the stream's output quality can be watched."""

from __future__ import annotations

from collections.abc import Mapping

from core.metrics import EXTRACT_FACTS_BY_KIND, TABLE_CELLS_DROPPED

TABLE_DROP_PREFIX = "table_"


def observe(kind: str, facts: int, dropped: Mapping[str, int]) -> None:
    """Count one document's facts under its kind and its table drops under their reason."""
    if facts:
        EXTRACT_FACTS_BY_KIND.labels(kind=kind or "unknown").inc(facts)
    for reason, n in dropped.items():
        if reason.startswith(TABLE_DROP_PREFIX) and n:
            TABLE_CELLS_DROPPED.labels(reason=reason.removeprefix(TABLE_DROP_PREFIX)).inc(n)
