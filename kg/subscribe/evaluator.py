"""One batch of graph changes -> the alerts of the subscriptions they affect.

Shared by the subscription worker (``streams/processors/subscriptions.py``) and the
benchmark. The evaluator keeps every subscription and the index in memory, reloads
them when the stored set changes, wakes only the subscriptions a change may affect,
runs each woken query once per batch (read-only guard, row cap, timeout) and applies
its condition to the state kept by the caller (a faust table in the worker).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.errors import GraphError, ReadOnlyViolation, TransientGraphError
from core.records import Alert, GraphChange
from kg.cypher import QueryTimeout, run_read_only
from kg.graph.store.base import GraphStore
from kg.subscribe import storage
from kg.subscribe.alert import build_alert
from kg.subscribe.conditions import evaluate
from kg.subscribe.index import SubscriptionIndex
from kg.subscribe.model import Subscription
from kg.subscribe.reads import query_reads

log = logging.getLogger(__name__)

State = dict[str, Any]


@dataclass
class BatchResult:
    alerts: list[Alert] = field(default_factory=list)
    states: dict[str, State] = field(default_factory=dict)  # changed states, to stage
    fired: list[dict[str, Any]] = field(default_factory=list)  # rows for storage.mark_fired
    woken: int = 0
    queries: int = 0  # distinct (query, parameters) run: woken ones that share one run it once
    failed: dict[str, str] = field(default_factory=dict)  # subscription id -> why


class Evaluator:
    def __init__(
        self, *, timeout_s: float = 2.0, row_limit: int = 200, concurrency: int = 8
    ) -> None:
        self.timeout_s = timeout_s
        self.row_limit = row_limit
        self.concurrency = concurrency
        self.subs: dict[str, Subscription] = {}
        self.index = SubscriptionIndex()
        self._version: tuple[int, int] | None = None
        # threshold values last seen, for the alert's diff only (not state: not durable)
        self.values: dict[str, float | None] = {}

    def set_subscriptions(self, subs: Sequence[Subscription]) -> None:
        self.subs = {s.id: s for s in subs}
        self.index = SubscriptionIndex()
        for s in subs:
            self.index.add(s.id, query_reads(s.cypher or "", s.params))

    async def refresh(self, store: GraphStore) -> bool:
        """Reload the subscriptions when the stored set changed; True when it did."""
        version = await storage.version(store)
        if version == self._version:
            return False
        self.set_subscriptions(await storage.load_all(store))
        self._version = version
        return True

    @staticmethod
    def _query_key(sub: Subscription) -> str:
        return (sub.cypher or "") + "\x1f" + json.dumps(sub.params, sort_keys=True, default=str)

    async def run_query(self, store: GraphStore, sub: Subscription) -> list[dict[str, Any]]:
        return await run_read_only(
            store,
            sub.cypher or "",
            sub.params,
            timeout_s=self.timeout_s,
            row_limit=self.row_limit,
        )

    async def evaluate_batch(
        self,
        store: GraphStore,
        changes: Sequence[GraphChange],
        state_of: Callable[[str], State | None],
    ) -> BatchResult:
        """Alerts and new states for ``changes`` (in order); ``state_of(sub_id)`` gives
        the state left by the previous evaluation (None: use the registration baseline)."""
        by_id = {c.id: c for c in changes}
        woken = self.index.wake_all(changes)
        out = BatchResult(woken=len(woken))
        sem = asyncio.Semaphore(self.concurrency)

        # subscriptions asking the same query with the same parameters (many users
        # watching one indicator) share one run
        groups: dict[str, list[str]] = {}
        for sid in sorted(woken):
            if sid in self.subs:
                groups.setdefault(self._query_key(self.subs[sid]), []).append(sid)
        out.queries = len(groups)

        async def one(sids: list[str]) -> tuple[list[str], list[dict[str, Any]] | None]:
            async with sem:
                try:
                    return sids, await self.run_query(store, self.subs[sids[0]])
                except TransientGraphError:
                    raise  # the graph is down: the shell retries the whole batch
                except (QueryTimeout, ReadOnlyViolation, GraphError) as exc:
                    for sid in sids:
                        out.failed[sid] = f"{type(exc).__name__}: {exc}"
                    log.warning("subscriptions %s not evaluated: %s", sids[:5], exc)
                    return sids, None

        results = await asyncio.gather(*(one(sids) for sids in groups.values()))
        now_ms = int(time.time() * 1000)
        for sid, rows in ((sid, rows) for sids, rows in results for sid in sids):
            if rows is None:
                continue
            sub = self.subs[sid]
            previous = state_of(sid)
            if previous is None:
                previous = sub.baseline
            outcome = evaluate(sub.condition, previous, rows, previous_value=self.values.get(sid))
            if outcome.value is not None:
                self.values[sid] = outcome.value
            if outcome.state != previous:
                out.states[sid] = outcome.state
            if outcome.fired:
                alert = build_alert(sub, by_id[woken[sid]], rows, outcome)
                out.alerts.append(alert)
                out.fired.append({"id": sid, "at": now_ms, "alert_id": alert.id})
        return out
