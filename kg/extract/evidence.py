"""The verifier's text primitives, shared by the gate (verify.py) and its party checks
(parties.py): one normal form to compare names with text, the whole sentence around a
span, and the critic's finding."""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from dataclasses import dataclass
from functools import lru_cache

from kg.extract.fastpath import sentence_spans


@lru_cache(maxsize=65_536)
def norm(text: str) -> str:
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text)).strip().casefold()


@lru_cache(maxsize=16)
def _spans(text: str) -> tuple[tuple[int, int], ...]:
    return tuple(sentence_spans(text))


def sentence_of(text: str, start: int, end: int) -> str:
    """The whole sentence around a span (a pattern's span can start mid-sentence), by the
    pattern splitter's sentences (``fastpath.sentence_spans``): from the sentence holding
    ``start`` to the one holding ``end``."""
    spans = _spans(text)
    if not spans:
        return text
    starts = [a for a, _ in spans]
    first = max(bisect_right(starts, max(start, 0)) - 1, 0)
    last = max(bisect_right(starts, max(end - 1, start, 0)) - 1, first)
    return text[spans[first][0] : spans[last][1]]


@dataclass(frozen=True, slots=True)
class Issue:
    """One finding of the critic: candidate ``index`` breaks ``rule``."""

    index: int
    rule: str
    detail: str = ""
