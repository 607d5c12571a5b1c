"""Registering, listing and removing subscriptions: what the API and the CLI share.

Registration checks the query before storing it: an NL question is translated by the
query service, any Cypher must pass the read-only guard and run within the timeout, and
its answer then is the baseline (a condition already true at registration does not
fire; it fires when it next becomes true).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from kg.cypher import CypherQA, check_read_only, run_read_only
from kg.graph.store.base import GraphStore
from kg.subscribe import storage
from kg.subscribe.conditions import state_of
from kg.subscribe.model import Subscription, SubscriptionSpec, subscription_id
from kg.subscribe.translate import translate

QAFactory = Callable[[], Awaitable[CypherQA]]


async def register(
    store: GraphStore,
    owner: str,
    spec: SubscriptionSpec,
    *,
    qa: QAFactory | None = None,
    timeout_s: float = 5.0,
    row_limit: int = 200,
) -> Subscription:
    """Store ``spec`` for ``owner`` (idempotent: the same request gives the same id).

    Raises ``ReadOnlyViolation`` for Cypher that could write, ``QueryTimeout`` when it
    runs too long, ``TranslationError`` when a question cannot be translated.
    """
    cypher, params, translated = spec.cypher, dict(spec.params), None
    if spec.question:
        if qa is None:
            raise ValueError("natural-language subscriptions need the query service")
        cypher, generated = await translate(await qa(), spec.question)
        params = {**generated, **params}  # the user's parameters (a watchlist) win
        translated = spec.question
    assert cypher is not None
    check_read_only(cypher)
    rows = await run_read_only(store, cypher, params, timeout_s=timeout_s, row_limit=row_limit)
    sub = Subscription(
        **spec.model_dump(exclude={"cypher", "params"}),
        cypher=cypher,
        params=params,
        id=subscription_id(owner, spec),
        owner=owner,
        created_at=int(time.time() * 1000),
        translated_from=translated,
        baseline=state_of(spec.condition, rows),
    )
    await storage.save(store, sub)
    return sub


async def listing(store: GraphStore, owner: str) -> list[Subscription]:
    return await storage.owned(store, owner)


async def remove(store: GraphStore, owner: str, sub_id: str) -> bool:
    return await storage.remove(store, owner, sub_id)
