"""Sentiment classes, their fixed order in probability vectors, and the LLM output rule.

Every classifier in this package returns probabilities in ``LABELS`` order
(negative, neutral, positive) so heads, ensembles and metrics agree on columns.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from core.records import SentimentLabel

LABELS: tuple[SentimentLabel, ...] = (
    SentimentLabel.NEGATIVE,
    SentimentLabel.NEUTRAL,
    SentimentLabel.POSITIVE,
)
INDEX: dict[SentimentLabel, int] = {label: i for i, label in enumerate(LABELS)}

# Zhang et al., section 3.2.3: check the generated text for these words in this order;
# the first one found wins, and text that contains none of them counts as neutral.
_MAPPING_ORDER: tuple[SentimentLabel, ...] = (
    SentimentLabel.NEGATIVE,
    SentimentLabel.NEUTRAL,
    SentimentLabel.POSITIVE,
)


def map_generated_output(text: str) -> SentimentLabel:
    """Free LLM output -> class (Zhang et al., 3.2.3): negative, neutral, positive, else neutral."""
    lowered = text.lower()
    for label in _MAPPING_ORDER:
        if label.value in lowered:
            return label
    return SentimentLabel.NEUTRAL


def label_of(probs: Sequence[float] | np.ndarray) -> SentimentLabel:
    return LABELS[int(np.argmax(np.asarray(probs)))]


def polarity(probs: Sequence[float] | np.ndarray) -> float:
    """p(positive) - p(negative), clipped to [-1, 1]: the scalar the rolling state tracks."""
    p = np.asarray(probs, dtype=np.float64)
    return float(
        np.clip(p[INDEX[SentimentLabel.POSITIVE]] - p[INDEX[SentimentLabel.NEGATIVE]], -1, 1)
    )


def one_hot(label: SentimentLabel, confidence: float = 1.0) -> np.ndarray:
    """A probability vector for a hard label (LLM answers carry no probabilities)."""
    rest = (1.0 - confidence) / (len(LABELS) - 1)
    out = np.full(len(LABELS), rest, dtype=np.float32)
    out[INDEX[label]] = confidence
    return out
