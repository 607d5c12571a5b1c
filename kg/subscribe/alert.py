"""The alert a subscription publishes to ``alerts.events``.

Its id derives from the subscription id and the id of the change that woke it, so a
change re-evaluated after a crash or replay republishes the same alert id, never a
second alert.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from core.records import Alert, AlertKind, Evidence, GraphChange, stable_id
from kg.subscribe.conditions import ConditionOutcome
from kg.subscribe.model import Subscription

SOURCE = "livekg.subscriptions"
MAX_ANSWER_ROWS = 50
EVIDENCE_LIMIT = 50


def alert_id(subscription_id: str, change_id: str) -> str:
    return stable_id("subscription-alert", subscription_id, change_id)


def _evidence(rows: Sequence[dict[str, Any]], change: GraphChange | None) -> Evidence:
    facts: list[str] = []
    docs: list[str] = []
    if change is not None:
        if change.kind == "triple":
            facts.append(change.record_id)
        docs += change.doc_ids
    for r in rows:
        if isinstance(r.get("fact_id"), str):
            facts.append(r["fact_id"])
        for key in ("doc_ids", "docs"):
            v = r.get(key)
            if isinstance(v, list):
                docs += [str(d) for d in v]
        if isinstance(r.get("doc_id"), str):
            docs.append(r["doc_id"])
    values = {
        k: float(v)
        for r in rows[:1]
        for k, v in r.items()
        if isinstance(v, int | float) and not isinstance(v, bool)
    }
    return Evidence(
        source_ids=list(dict.fromkeys(docs))[:EVIDENCE_LIMIT],
        triples=list(dict.fromkeys(facts))[:EVIDENCE_LIMIT],
        values=values,
    )


def message(sub: Subscription, outcome: ConditionOutcome) -> str:
    d = outcome.diff
    if "value" in d:
        return f"{sub.name}: {d.get('value')} is {d.get('direction')} {d.get('threshold')}"
    if "keys" in d:
        return f"{sub.name}: over {d.get('over')} for {', '.join(d['keys'])}"
    n = len(d.get("added") or [])
    return f"{sub.name}: {n} new row(s), {d.get('removed', 0)} gone"


def build_alert(
    sub: Subscription,
    change: GraphChange,
    rows: Sequence[dict[str, Any]],
    outcome: ConditionOutcome,
    *,
    now: datetime | None = None,
) -> Alert:
    entity = change.entity_ids[0] if change.entity_ids else sub.id
    kwargs: dict[str, Any] = {"ingest_time": now} if now is not None else {}
    return Alert(
        id=alert_id(sub.id, change.id),
        source=SOURCE,
        event_time=change.event_time,
        kind=AlertKind.SUBSCRIPTION,
        entity_id=entity,
        severity=sub.severity,
        message=message(sub, outcome)[:1000],
        evidence=_evidence(rows, change),
        subscription_id=sub.id,
        change_id=change.id,
        answer=[dict(r) for r in rows[:MAX_ANSWER_ROWS]],
        diff=outcome.diff,
        **kwargs,
    )
