"""Time in the graph: fact validity chains, point-in-time reads, instant-data rollups.

Every fact edge has ``valid_from`` / ``valid_to`` (valid time, epoch ms, ``valid_to``
null while open) and ``ingested_at`` (when livekg learned it). For a relation with
cardinality ONE, the facts of one head form a chain ordered by ``valid_from``: each
fact is closed at the next one's start and points at it with ``superseded_by``; it is
never deleted. The chain is recomputed from all of the head's facts, so the result is
the same whatever order the facts arrive in, and replays change nothing.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from kg.graph.ontology import Ontology, default_ontology
from kg.graph.queries import cypher
from kg.graph.store.base import GraphStore

DAY_MS = 86_400_000


@dataclass(frozen=True, slots=True)
class FactVersion:
    id: str
    valid_from: int
    stated_valid_to: int | None
    valid_to: int | None = None
    superseded_by: str | None = None


@dataclass(frozen=True, slots=True)
class ChainUpdate:
    id: str
    valid_to: int | None
    superseded_by: str | None


def resolve_chain(versions: Iterable[FactVersion]) -> list[ChainUpdate]:
    """Validity of each fact of one (head, functional relation) chain; changed ones only.

    A fact ends at the earlier of its stated end and the next fact's start. Ties on
    ``valid_from`` are broken by id so the outcome is deterministic.
    """
    ordered = sorted(versions, key=lambda v: (v.valid_from, v.id))
    out: list[ChainUpdate] = []
    for i, v in enumerate(ordered):
        nxt = ordered[i + 1] if i + 1 < len(ordered) else None
        valid_to, by = v.stated_valid_to, None
        if nxt is not None and (valid_to is None or nxt.valid_from < valid_to):
            valid_to, by = nxt.valid_from, nxt.id
        if (valid_to, by) != (v.valid_to, v.superseded_by):
            out.append(ChainUpdate(v.id, valid_to, by))
    return out


def chain_read_cypher(rel_type: str) -> str:
    """Every fact of ``rel_type`` for a batch of heads (the type comes from the ontology).

    One row per head, each fact packed into one ``id,valid_from,stated_valid_to,
    valid_to,superseded_by`` string (empty for null; ids are hex, times integers):
    five typed values per fact cost the Python Redis client more than the query.
    """
    return cypher("chain_read", rel_type=rel_type)


def _int(text: str) -> int:
    return int(text) if text.lstrip("-").isdigit() else int(float(text))


def _opt_int(text: str) -> int | None:
    return _int(text) if text else None


def unpack_versions(packed: Iterable[str]) -> list[FactVersion]:
    """``chain_read_cypher``'s packed facts -> versions."""
    out = []
    for item in packed:
        fid, valid_from, stated, valid_to, by = item.split(",")
        out.append(
            FactVersion(fid, _int(valid_from), _opt_int(stated), _opt_int(valid_to), by or None)
        )
    return out


def chain_write_cypher(rel_type: str) -> str:
    return cypher("chain_write", rel_type=rel_type)


async def apply_chains(store: GraphStore, rel_type: str, heads: Sequence[str]) -> int:
    """Recompute the validity chains of ``heads`` for one functional relation."""
    if not heads:
        return 0
    rows = await store.query(chain_read_cypher(rel_type), {"heads": sorted(set(heads))})
    by_head = {r["head"]: unpack_versions(r["facts"]) for r in rows}
    updates = [
        {"head": head, "id": u.id, "valid_to": u.valid_to, "superseded_by": u.superseded_by}
        for head, versions in by_head.items()
        for u in resolve_chain(versions)
    ]
    if updates:
        await store.execute_batches(chain_write_cypher(rel_type), updates)
    return len(updates)


# -- point-in-time reads --------------------------------------------------------------


def as_of_cypher(rel_type: str | None = None, *, known: bool = False) -> str:
    """Facts of one head valid at ``$at`` (optionally only those ingested by ``$known_at``).

    Read-only, portable: a typed or untyped relationship pattern, epoch-ms comparisons.
    """
    valid = cypher("fact_valid_known_at" if known else "fact_valid_at")
    if rel_type:
        return cypher("facts_of_type_as_of", rel_type=rel_type, valid=valid)
    return cypher("facts_as_of", valid=valid)


def to_ms(at: datetime | int) -> int:
    if isinstance(at, int):
        return at
    if at.tzinfo is None:
        at = at.replace(tzinfo=UTC)
    return int(at.timestamp() * 1000)


async def facts_as_of(
    store: GraphStore,
    head: str,
    at: datetime | int,
    *,
    relation: str | None = None,
    known_at: datetime | int | None = None,
    ontology: Ontology | None = None,
) -> list[dict[str, Any]]:
    """What the graph says about ``head`` at valid time ``at``."""
    rel_type = None
    if relation:
        rel = (ontology or default_ontology()).relation(relation)
        if rel is None:
            raise ValueError(f"unknown relation {relation!r}")
        rel_type = rel.type
    params: dict[str, Any] = {"head": head, "at": to_ms(at)}
    if known_at is not None:
        params["known_at"] = to_ms(known_at)
    return await store.query(as_of_cypher(rel_type, known=known_at is not None), params)


# -- dynamic partition upkeep: instant observations -> daily history ----------------


@dataclass(frozen=True, slots=True)
class InstantObs:
    id: str
    indicator_id: str
    value: float
    observed_at: int


def day_of(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d")


def rollup(observations: Iterable[InstantObs], cutoff_ms: int) -> list[dict[str, Any]]:
    """Daily rows (OHLC, mean, count) from instant observations older than ``cutoff_ms``.

    Pure. Each row lists the observation ids it consumed; the write merges the row into
    the day's node and deletes exactly those observations in one query, so a row is
    applied once even if two upkeep runs overlap (see the catalogue's ``roll_up_daily``).
    """
    groups: dict[tuple[str, int], list[InstantObs]] = defaultdict(list)
    for o in observations:
        if o.observed_at < cutoff_ms:
            groups[(o.indicator_id, o.observed_at // DAY_MS)].append(o)
    rows = []
    for (indicator, day), obs in sorted(groups.items()):
        obs.sort(key=lambda o: (o.observed_at, o.id))
        values = [o.value for o in obs]
        rows.append(
            {
                "id": f"{indicator}@{day_of(day * DAY_MS)}",
                "indicator_id": indicator,
                "day": day_of(day * DAY_MS),
                "day_start": day * DAY_MS,
                "open": obs[0].value,
                "close": obs[-1].value,
                "high": max(values),
                "low": min(values),
                "sum": float(sum(values)),
                "n": len(obs),
                "first_at": obs[0].observed_at,
                "last_at": obs[-1].observed_at,
                "obs_ids": [o.id for o in obs],
            }
        )
    return rows


# All-or-nothing per row: only when every listed observation still exists is the day
# updated and are they deleted (a concurrent or repeated run finds some gone and skips).
# New values are computed in a WITH before one SET, so no SET item reads another's
# result (the backends differ on that).


async def roll_up_instant(
    store: GraphStore, *, now_ms: int, window_ms: int, limit: int = 50_000, batch: int = 200
) -> dict[str, int]:
    """Move instant observations older than the window into daily history."""
    cutoff = now_ms - window_ms
    rows = await store.execute(
        cypher("observations_to_roll_up"), {"cutoff": cutoff, "limit": limit}
    )
    obs = [
        InstantObs(r["id"], r["indicator_id"], float(r["value"]), int(r["observed_at"]))
        for r in rows
    ]
    daily = rollup(obs, cutoff)
    await store.execute_batches(cypher("roll_up_daily"), daily, batch=batch)
    return {"observations": len(obs), "days": len(daily)}
