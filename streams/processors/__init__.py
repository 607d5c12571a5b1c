"""Every processor module exposes ``register(app, ctx)``; the worker registers the ones
enabled in settings (``streams.processors``; empty: all of them)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from streams.processors import (
    extract,
    graph_sink,
    indicator_alerts,
    kg_upkeep,
    normalize,
    report,
    sentiment,
    subscriptions,
)

Register = Callable[[Any, Any], None]

PROCESSORS: dict[str, Register] = {
    "normalize": normalize.register,
    "graph_sink": graph_sink.register,
    "kg_upkeep": kg_upkeep.register,
    "sentiment": sentiment.register,
    "indicator_alerts": indicator_alerts.register,
    "bond_report": report.register,
    "extract": extract.register,
    "subscriptions": subscriptions.register,
}


def enabled(names: list[str]) -> list[Register]:
    """The registrations to run; unknown names are a configuration error, not ignored."""
    if not names:
        return list(PROCESSORS.values())
    unknown = sorted(set(names) - set(PROCESSORS))
    if unknown:
        raise ValueError(f"unknown processors {unknown}; known: {sorted(PROCESSORS)}")
    return [PROCESSORS[n] for n in names]
