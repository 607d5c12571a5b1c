"""Candidate ranking (FinQA: cosine similarity between the question and each
candidate, encoded by a sentence encoder). Here the candidate side is its plain-language
description (an e5 model reads sentences better than Cypher), and the similarity is
added to the synthesizer's prior, which counts how much of the question a candidate uses.
"""

from __future__ import annotations

from kg.cypher.frame import ReadingCandidate
from kg.models.embed import Embedder

SIMILARITY_WEIGHT = 0.5


async def rank(
    question: str, cands: list[ReadingCandidate], embedder: Embedder | None
) -> list[ReadingCandidate]:
    """Sort best first; ties keep the synthesizer's order."""
    for c in cands:
        c.score = c.prior
    if embedder is not None and len(cands) > 1:
        q = await embedder.embed([question], kind="query")
        p = await embedder.embed([c.description for c in cands], kind="passage")
        sims = (p @ q[0]).tolist()
        for c, s in zip(cands, sims, strict=True):
            c.score = c.prior + SIMILARITY_WEIGHT * float(s)
    order = sorted(range(len(cands)), key=lambda i: (-cands[i].score, i))
    return [cands[i] for i in order]
