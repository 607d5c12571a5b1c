"""Subscriptions stored durably in the graph as ``:Subscription`` nodes (one JSON body
per node, the owner and id as properties to filter on). The label is outside the
ontology's entity tree, so questions about the market never see these nodes.

The worker reloads them when ``version`` changes (count and newest update time); the
last firing is written separately so it does not count as an update.
"""

from __future__ import annotations

from typing import Any

from kg.graph.queries import cypher
from kg.graph.store.base import GraphStore, IndexSpec
from kg.subscribe.model import Subscription

INDEX = IndexSpec("Subscription")


def _parse(row: dict[str, Any]) -> Subscription:
    sub = Subscription.model_validate_json(row["body"])
    if row.get("last_fired_at") is not None:
        sub.last_fired_at = int(row["last_fired_at"])
        sub.last_alert_id = row.get("last_alert_id")
    return sub


async def save(store: GraphStore, sub: Subscription) -> None:
    body = sub.model_dump_json(exclude={"last_fired_at", "last_alert_id"})
    await store.execute(
        cypher("subscription_save"), {"id": sub.id, "owner": sub.owner, "body": body}
    )


async def save_many(store: GraphStore, subs: list[Subscription], batch: int = 1000) -> None:
    """Many at once (bulk registration, the benchmark)."""
    rows = [
        {"id": s.id, "owner": s.owner,
         "body": s.model_dump_json(exclude={"last_fired_at", "last_alert_id"})}
        for s in subs
    ]  # fmt: skip
    await store.execute_batches(cypher("subscription_save_many"), rows, batch=batch)


async def owned(store: GraphStore, owner: str) -> list[Subscription]:
    return [_parse(r) for r in await store.query(cypher("subscriptions_owned"), {"owner": owner})]


async def get(store: GraphStore, owner: str, sub_id: str) -> Subscription | None:
    rows = await store.query(cypher("subscription_one"), {"owner": owner, "id": sub_id})
    return _parse(rows[0]) if rows else None


async def remove(store: GraphStore, owner: str, sub_id: str) -> bool:
    """Delete ``sub_id`` if ``owner`` owns it; False when there is no such subscription
    of theirs (another key's subscription is indistinguishable from a missing one)."""
    if await get(store, owner, sub_id) is None:
        return False
    await store.execute(cypher("subscription_delete"), {"owner": owner, "id": sub_id})
    return True


async def load_all(store: GraphStore) -> list[Subscription]:
    out = []
    for r in await store.query(cypher("subscriptions_all")):
        try:
            out.append(_parse(r))
        except ValueError:
            continue  # a body written by a newer version: skipped, not fatal
    return out


async def version(store: GraphStore) -> tuple[int, int]:
    rows = await store.query(cypher("subscriptions_version"))
    if not rows:
        return (0, 0)
    return (int(rows[0].get("n") or 0), int(rows[0].get("t") or 0))


async def mark_fired(store: GraphStore, fired: list[dict[str, Any]]) -> None:
    """``fired``: rows of {id, at (epoch ms), alert_id}."""
    if fired:
        await store.execute(cypher("subscriptions_fired"), {"rows": fired})
