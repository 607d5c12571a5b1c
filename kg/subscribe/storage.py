"""Subscriptions stored durably in the graph as ``:Subscription`` nodes (one JSON body
per node, the owner and id as properties to filter on). The label is outside the
ontology's entity tree, so questions about the market never see these nodes.

The worker reloads them when ``version`` changes (count and newest update time); the
last firing is written separately so it does not count as an update.
"""

from __future__ import annotations

from typing import Any

from kg.store.base import GraphStore, IndexSpec
from kg.subscribe.model import Subscription

INDEX = IndexSpec("Subscription")

SAVE_CYPHER = """
MERGE (s:Subscription {id: $id})
SET s.owner = $owner, s.body = $body, s.updated_at = timestamp()
RETURN s.id AS id
"""
SAVE_MANY_CYPHER = """
UNWIND $rows AS r
MERGE (s:Subscription {id: r.id})
SET s.owner = r.owner, s.body = r.body, s.updated_at = timestamp()
"""
OWNED_CYPHER = """
MATCH (s:Subscription) WHERE s.owner = $owner
RETURN s.body AS body, s.last_fired_at AS last_fired_at, s.last_alert_id AS last_alert_id
ORDER BY s.id
"""
ALL_CYPHER = """
MATCH (s:Subscription)
RETURN s.body AS body, s.last_fired_at AS last_fired_at, s.last_alert_id AS last_alert_id
"""
ONE_CYPHER = """
MATCH (s:Subscription {id: $id}) WHERE s.owner = $owner
RETURN s.body AS body, s.last_fired_at AS last_fired_at, s.last_alert_id AS last_alert_id
"""
DELETE_CYPHER = "MATCH (s:Subscription {id: $id}) WHERE s.owner = $owner DELETE s"
VERSION_CYPHER = "MATCH (s:Subscription) RETURN count(s) AS n, max(s.updated_at) AS t"
FIRED_CYPHER = """
UNWIND $rows AS r
MATCH (s:Subscription {id: r.id})
SET s.last_fired_at = r.at, s.last_alert_id = r.alert_id
"""


def _parse(row: dict[str, Any]) -> Subscription:
    sub = Subscription.model_validate_json(row["body"])
    if row.get("last_fired_at") is not None:
        sub.last_fired_at = int(row["last_fired_at"])
        sub.last_alert_id = row.get("last_alert_id")
    return sub


async def save(store: GraphStore, sub: Subscription) -> None:
    body = sub.model_dump_json(exclude={"last_fired_at", "last_alert_id"})
    await store.execute(SAVE_CYPHER, {"id": sub.id, "owner": sub.owner, "body": body})


async def save_many(store: GraphStore, subs: list[Subscription], batch: int = 1000) -> None:
    """Many at once (bulk registration, the benchmark)."""
    rows = [
        {"id": s.id, "owner": s.owner,
         "body": s.model_dump_json(exclude={"last_fired_at", "last_alert_id"})}
        for s in subs
    ]  # fmt: skip
    await store.execute_batches(SAVE_MANY_CYPHER, rows, batch=batch)


async def owned(store: GraphStore, owner: str) -> list[Subscription]:
    return [_parse(r) for r in await store.query(OWNED_CYPHER, {"owner": owner})]


async def get(store: GraphStore, owner: str, sub_id: str) -> Subscription | None:
    rows = await store.query(ONE_CYPHER, {"owner": owner, "id": sub_id})
    return _parse(rows[0]) if rows else None


async def remove(store: GraphStore, owner: str, sub_id: str) -> bool:
    """Delete ``sub_id`` if ``owner`` owns it; False when there is no such subscription
    of theirs (another key's subscription is indistinguishable from a missing one)."""
    if await get(store, owner, sub_id) is None:
        return False
    await store.execute(DELETE_CYPHER, {"owner": owner, "id": sub_id})
    return True


async def load_all(store: GraphStore) -> list[Subscription]:
    out = []
    for r in await store.query(ALL_CYPHER):
        try:
            out.append(_parse(r))
        except ValueError:
            continue  # a body written by a newer version: skipped, not fatal
    return out


async def version(store: GraphStore) -> tuple[int, int]:
    rows = await store.query(VERSION_CYPHER)
    if not rows:
        return (0, 0)
    return (int(rows[0].get("n") or 0), int(rows[0].get("t") or 0))


async def mark_fired(store: GraphStore, fired: list[dict[str, Any]]) -> None:
    """``fired``: rows of {id, at (epoch ms), alert_id}."""
    if fired:
        await store.execute(FIRED_CYPHER, {"rows": fired})
