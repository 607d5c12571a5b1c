"""Which subscriptions a graph change can affect, without looking at the others.

Each subscription is filed under the most selective thing its query reads: its entity
ids when it is pinned to some, else its relationship types, else its labels, else it
is woken by every change. A change (``core.records.GraphChange``) wakes the union of
the subscriptions filed under its entity ids, relationship types and labels.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from core.records import GraphChange
from kg.subscribe.reads import Reads

# A query that reads only the generic label wakes on any entity: as good as unfiled.
GENERIC_LABELS = frozenset({"Entity"})


class SubscriptionIndex:
    def __init__(self) -> None:
        self.by_entity: dict[str, set[str]] = defaultdict(set)
        self.by_relation: dict[str, set[str]] = defaultdict(set)
        self.by_label: dict[str, set[str]] = defaultdict(set)
        self.everything: set[str] = set()
        self._filed: dict[str, tuple[str, tuple[str, ...]]] = {}
        self._reads: dict[str, Reads] = {}

    def __len__(self) -> int:
        return len(self._filed)

    def __contains__(self, sub_id: object) -> bool:
        return sub_id in self._filed

    def add(self, sub_id: str, reads: Reads) -> str:
        """File ``sub_id``; returns under what (``entity``, ``relation``, ``label``, ``all``)."""
        self.remove(sub_id)
        self._reads[sub_id] = reads
        labels = reads.labels - GENERIC_LABELS
        if reads.entity_ids:
            where, keys, table = "entity", reads.entity_ids, self.by_entity
        elif reads.relation_types:
            where, keys, table = "relation", reads.relation_types, self.by_relation
        elif labels:
            where, keys, table = "label", labels, self.by_label
        else:
            self.everything.add(sub_id)
            self._filed[sub_id] = ("all", ())
            return "all"
        for k in keys:
            table[k].add(sub_id)
        self._filed[sub_id] = (where, tuple(sorted(keys)))
        return where

    def remove(self, sub_id: str) -> None:
        filed = self._filed.pop(sub_id, None)
        self._reads.pop(sub_id, None)
        if filed is None:
            return
        where, keys = filed
        if where == "all":
            self.everything.discard(sub_id)
            return
        table = {"entity": self.by_entity, "relation": self.by_relation, "label": self.by_label}
        for k in keys:
            bucket = table[where].get(k)
            if bucket is not None:
                bucket.discard(sub_id)
                if not bucket:
                    del table[where][k]

    def wake(self, change: GraphChange) -> set[str]:
        """Subscriptions whose answer ``change`` may have changed."""
        out = set(self.everything)
        for table, keys in (
            (self.by_entity, change.entity_ids),
            (self.by_relation, change.relation_types),
            (self.by_label, change.labels),
        ):
            for k in keys:
                bucket = table.get(k)
                if bucket:
                    out |= bucket
        return out

    def fit(self, sub_id: str, change: GraphChange) -> int:
        """How much of what the subscription reads ``change`` touches (entity ids,
        relationship types, labels: one point each)."""
        reads = self._reads.get(sub_id)
        if reads is None:
            return 0
        return (
            bool(reads.entity_ids.intersection(change.entity_ids))
            + bool(reads.relation_types.intersection(change.relation_types))
            + bool((reads.labels - GENERIC_LABELS).intersection(change.labels))
        )

    def wake_all(self, changes: Iterable[GraphChange]) -> dict[str, str]:
        """Subscription id -> the change its alert is attributed to: of the changes (in
        order) that woke it, the first of those that touch most of what it reads (a
        bank's IMPACTED_BY fact, not its INVOLVED_IN fact, for a query on IMPACTED_BY)."""
        best: dict[str, tuple[int, str]] = {}
        for ch in changes:
            for sid in self.wake(ch):
                score = self.fit(sid, ch)
                if sid not in best or score > best[sid][0]:
                    best[sid] = (score, ch.id)
        return {sid: cid for sid, (_, cid) in best.items()}
