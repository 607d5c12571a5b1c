"""Perturbed copies of training texts for distillation (TinyBERT-style augmentation).

A student distilled on the teacher's own training texts learns little beyond the hard
labels: the teacher is nearly certain on what it was trained on. On perturbed copies the
teacher's probabilities carry its graded judgement, which is what the student should
copy. The copies need not keep their label: the teacher labels them.

Perturbations are cheap and keep a headline readable: cashtags swapped for other
tickers of the corpus, digits redrawn (``6.6%`` becomes ``3.1%``), and a few words
dropped. Everything is a pure function of the text and a seeded generator.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from kg.sentiment.clean import CASHTAG_RE

DIGIT_RE = re.compile(r"\d")
WORD_DROP = 0.12


def cashtag_pool(texts: Sequence[str]) -> list[str]:
    """Distinct cashtags of a corpus (with ``$``), sorted so a seed gives the same copies."""
    return sorted({m.group(0) for t in texts for m in CASHTAG_RE.finditer(t)})


def swap_cashtags(text: str, pool: Sequence[str], rng: np.random.Generator) -> str:
    if not pool:
        return text
    return CASHTAG_RE.sub(lambda _: pool[int(rng.integers(len(pool)))], text)


def redraw_digits(text: str, rng: np.random.Generator) -> str:
    """Every digit redrawn; a number's first digit stays non-zero so ``10`` never reads ``07``."""

    def draw(m: re.Match[str]) -> str:
        first = m.start() == 0 or not text[m.start() - 1].isdigit()
        return str(int(rng.integers(1 if first else 0, 10)))

    return DIGIT_RE.sub(draw, text)


def drop_words(text: str, rng: np.random.Generator, p: float = WORD_DROP) -> str:
    """Each word dropped with probability ``p``; at least half of the words are kept."""
    words = text.split()
    if len(words) < 4:
        return text
    keep = rng.random(len(words)) >= p
    if keep.sum() < len(words) / 2:
        return text
    return " ".join(w for w, k in zip(words, keep, strict=True) if k)


def perturb(text: str, pool: Sequence[str], rng: np.random.Generator) -> str:
    return drop_words(redraw_digits(swap_cashtags(text, pool, rng), rng), rng)


def augment(texts: Sequence[str], copies: int, seed: int) -> list[str]:
    """``copies`` perturbed versions of every text, in order (text 0's copies first).

    A copy identical to its source (a short text with nothing to perturb) is kept: it
    costs one more teacher call and keeps the output aligned with the input.
    """
    rng = np.random.default_rng(seed)
    pool = cashtag_pool(texts)
    return [perturb(t, pool, rng) for t in texts for _ in range(copies)]
