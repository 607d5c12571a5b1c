"""Timed rounds of a bench's two paths (livekg's and its same-work reference): the order
alternates from round to round, the figures are medians of named fields over the rounds,
and every round is kept for the JSON.

On the shared 2-core machine one pass of either path is not a measurement (a 5,000-event
pipeline burst swung 0.35-1.78 against its reference within ten minutes; a JVM graph
paid more CPU for the later pass of a round, whichever path it was), so both benches
(``kg``, ``pipeline``) run rounds; this is the one copy of how.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Literal

import numpy as np

# one timed pass of a path: gets the round's index (0-based), returns its figures
Pass = Callable[[int], Awaitable[dict[str, Any]]]


def first_of_round(i: int, rounds: int, anchor: Literal["start", "end"] = "start") -> bool:
    """True when the first-named path runs first in round ``i`` of ``rounds``: the order
    alternates; ``anchor`` says which round certainly has the first-named path first (the
    first round, or the last), so with an even count each order runs equally often."""
    k = i if anchor == "start" else rounds - 1 - i
    return k % 2 == 0


async def alternate(
    passes: Mapping[str, Pass], rounds: int, *, anchor: Literal["start", "end"] = "start"
) -> list[dict[str, Any]]:
    """Run two named passes ``rounds`` times, the order alternating (``first_of_round``).
    One dict per round: each pass's figures under its name, and ``first``: the name of
    the pass that ran first."""
    if len(passes) != 2:
        raise ValueError(f"two passes alternate, not {len(passes)}")
    (a, run_a), (b, run_b) = passes.items()
    out: list[dict[str, Any]] = []
    for i in range(rounds):
        order = [(a, run_a), (b, run_b)]
        if not first_of_round(i, rounds, anchor):
            order.reverse()
        row: dict[str, Any] = {"first": order[0][0]}
        for name, run in order:
            row[name] = await run(i)
        out.append(row)
    return out


def medians(
    rows: Sequence[Mapping[str, Any]], fields: Sequence[str], *, digits: int = 4
) -> dict[str, float | None]:
    """Per field, the median over the rows that have a number for it (a round whose
    reference failed carries None and is left out); None where no row has one."""
    out: dict[str, float | None] = {}
    for f in fields:
        values = [float(r[f]) for r in rows if isinstance(r.get(f), int | float)]
        out[f] = round(float(np.median(values)), digits) if values else None
    return out
