"""Record builders shared by unit tests."""

from __future__ import annotations

from datetime import datetime

from core.records import SentimentScore
from kg.sentiment.labels import LABELS, label_of, polarity


def sentiment_scores(entity: str, tones: list[float], start: datetime) -> list[SentimentScore]:
    """One score per tone (the negative probability), a minute apart from ``start``."""
    out = []
    for i, neg in enumerate(tones):
        probs = (neg, 1.0 - neg - 0.05, 0.05)
        out.append(SentimentScore(
            id=f"s{i}", source="t", event_time=start.replace(minute=i), doc_id=f"d{i}",
            entities=[entity], label=label_of(probs),
            probabilities=dict(zip(LABELS, probs, strict=True)),
            score=polarity(probs), model_id="m",
        ))  # fmt: skip
    return out
