"""Per-entity rolling sentiment and the alert rules, as pure functions.

The stream processor keeps one ``EntityState`` per entity in a faust table; these
functions decide the new state and any alerts, so the rules are testable without a
broker. Polarity is p(positive) - p(negative) in [-1, 1]. Two EWMAs track it: a fast
one (recent tone) and a slow one (baseline); a shift is their difference.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import datetime

from pydantic import BaseModel, Field

from core.records import (
    Alert,
    AlertKind,
    Evidence,
    SentimentLabel,
    SentimentScore,
    stable_id,
    to_epoch_ms,
)
from core.settings import SentimentAlertRules

RECENT_KEPT = 10
SEEN_KEPT = 256  # copies further apart than this many scores of one entity fold twice


class RecentItem(BaseModel):
    score_id: str
    doc_id: str
    polarity: float
    at_ms: int


class EntityState(BaseModel):
    entity_id: str
    n: int = 0
    short: float = 0.0
    long: float = 0.0
    last_at_ms: int = 0
    last_shift_alert_ms: int = 0
    recent: list[RecentItem] = Field(default_factory=list)
    # 48-bit hashes of the last SEEN_KEPT score ids folded: a copy of a score (the topic
    # is at-least-once: a crash re-sends a batch) is skipped instead of folded twice
    seen: list[int] = Field(default_factory=list)


# The rules are defined once, beside the ``sentiment.*`` settings that carry them.
AlertRules = SentimentAlertRules


def score_mark(score_id: str) -> int:
    """A 48-bit hash of a score id: what ``EntityState.seen`` keeps (small in changelogs)."""
    return int.from_bytes(hashlib.blake2b(score_id.encode(), digest_size=6).digest(), "big")


def update(
    state: EntityState, score: SentimentScore, rules: AlertRules
) -> tuple[EntityState, list[Alert]]:
    """Fold one score into ``state``; return the new state and the alerts it triggers.
    A copy of a score folded already changes nothing and fires nothing."""
    entity = state.entity_id
    mark = score_mark(score.id)
    if mark in state.seen:
        return state, []
    at_ms = to_epoch_ms(score.event_time)
    s = state.model_copy(deep=True)
    s.seen = [*s.seen, mark][-SEEN_KEPT:]
    if s.n == 0:
        s.short = s.long = score.score
    else:
        s.short += rules.short_alpha * (score.score - s.short)
        s.long += rules.long_alpha * (score.score - s.long)
    s.n += 1
    s.last_at_ms = max(s.last_at_ms, at_ms)
    s.recent = [
        *s.recent,
        RecentItem(score_id=score.id, doc_id=score.doc_id, polarity=score.score, at_ms=at_ms),
    ][-RECENT_KEPT:]

    alerts: list[Alert] = []
    shift = s.short - s.long
    cooled = at_ms - s.last_shift_alert_ms >= rules.alert_cooldown_s * 1000
    if s.n >= rules.min_docs and abs(shift) >= rules.shift_threshold and cooled:
        s.last_shift_alert_ms = at_ms
        direction = "up" if shift > 0 else "down"
        alerts.append(
            _alert(
                AlertKind.SENTIMENT_SHIFT,
                entity,
                score.event_time,
                severity="critical" if abs(shift) >= 2 * rules.shift_threshold else "warning",
                message=f"sentiment on {entity} shifted {direction} by {shift:+.2f} "
                f"(recent {s.short:+.2f} vs baseline {s.long:+.2f}, {s.n} items)",
                evidence=Evidence(
                    source_ids=_evidence_ids(s.recent),
                    values={
                        "shift": shift,
                        "short": s.short,
                        "long": s.long,
                        "n": float(s.n),
                        "threshold": rules.shift_threshold,
                    },
                ),
                trigger=score.id,
            )
        )
    p_neg = float(score.probabilities.get(SentimentLabel.NEGATIVE, 0.0))
    if (
        entity in rules.watchlist
        and score.label == SentimentLabel.NEGATIVE
        and p_neg >= rules.strong_negative_p
    ):
        alerts.append(
            _alert(
                AlertKind.NEGATIVE_HIT,
                entity,
                score.event_time,
                severity="critical",
                message=f"strongly negative item on watch-listed {entity} (p_negative {p_neg:.2f})",
                evidence=Evidence(
                    source_ids=[score.doc_id, score.id, *score.context_ids],
                    values={"p_negative": p_neg, "score": score.score},
                ),
                trigger=score.id,
            )
        )
    return s, alerts


def _evidence_ids(recent: Sequence[RecentItem]) -> list[str]:
    out: list[str] = []
    for item in reversed(recent):
        out += [item.doc_id, item.score_id]
    return list(dict.fromkeys(out))


def _alert(
    kind: AlertKind,
    entity: str,
    at: datetime,
    *,
    severity: str,
    message: str,
    evidence: Evidence,
    trigger: str,
) -> Alert:
    return Alert(
        id=stable_id("alert", kind.value, entity, trigger),
        source="sentiment",
        event_time=at,
        kind=kind,
        entity_id=entity,
        severity=severity,  # type: ignore[arg-type]
        message=message,
        evidence=evidence,
    )
