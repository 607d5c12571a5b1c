"""Text helpers shared by the indexes: tokens for BM25, chunks, entity mention keys."""

from __future__ import annotations

import re
import unicodedata

_LATIN = re.compile(r"[0-9a-z]+(?:[.'][0-9a-z]+)*")
_CJK = re.compile(r"[\u3400-\u9fff]+")
_WORDISH = re.compile(r"[0-9a-z]+|[\u3400-\u9fff]")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\[(\"'])|(?<=[。！？；])|\n+")
STOPWORDS = frozenset(
    "a an and are as at be by for from has have in is it its of on or that the this to was "
    "were will with what how does did do which who why when".split()
)


def norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def tokens(text: str) -> list[str]:
    """Latin words (stopwords dropped) plus CJK unigrams and bigrams.

    Character n-grams need no segmentation model and retrieve Chinese well enough for
    BM25; they keep the index language-agnostic.
    """
    t = norm(text)
    out = [w for w in _LATIN.findall(t) if w not in STOPWORDS]
    for run in _CJK.findall(t):
        out.extend(run)
        out.extend(run[i : i + 2] for i in range(len(run) - 1))
    return out


def chunks(text: str, size: int = 800, overlap: int = 100) -> list[str]:
    """Character windows with overlap, cut at whitespace where one is near."""
    text = text.strip()
    if len(text) <= size:
        return [text] if text else []
    out, start = [], 0
    while start < len(text):
        end = min(start + size, len(text))
        if end < len(text):
            cut = text.rfind(" ", start + size // 2, end)
            end = cut if cut > 0 else end
        out.append(text[start:end].strip())
        if end >= len(text):
            break
        start = max(end - overlap, start + 1)
    return [c for c in out if c]


def mention_key(name: str) -> str:
    """Key under which an entity name is looked up in a query: word units joined by
    single spaces ('US 10Y Treasury yield' -> 'us 10y treasury yield')."""
    return " ".join(_WORDISH.findall(norm(name)))


def query_spans(query: str, max_units: int = 8) -> set[str]:
    """Every run of up to ``max_units`` consecutive word units of the query, as keys.

    An entity is named in the query when one of its name keys is among these spans
    (word boundaries respected for Latin text; CJK characters are single units).
    """
    units = _WORDISH.findall(norm(query))
    spans = set()
    for i in range(len(units)):
        for j in range(i + 1, min(i + max_units, len(units)) + 1):
            spans.add(" ".join(units[i:j]))
    return spans


def sentences(text: str) -> list[str]:
    """Sentences of English or Chinese text (the number checker and the RAG metrics
    judge statement by statement)."""
    return [s.strip() for s in _SENTENCE.split(text) if s and s.strip()]
