"""Score extracted triples against a gold file (``livekg eval extract --gold FILE``).

Gold file: JSONL, one document a line, ``{"id", "text", "gold": [{"head", "relation",
"tail", "attributes"?, "symmetric"?, "tail_also"?}]}`` (the format of
``ie_dev/fire/fire_dev.jsonl``; see docs/extraction.md). Names are compared loosely, as
ie_dev's README defines it: casefold, parenthesised defined terms, punctuation,
possessive 's, a leading "the" and trailing corporate suffixes removed; then equal, one
containing the other as a token sequence, or token Jaccard >= 0.5. ``tail_also`` names
count as the tail; ``symmetric`` gold matches either direction.

Only relations the gold file uses are scored (a gold file that never labels, say,
IMPACTED_BY cannot tell whether one is right); the others are counted as ``unscored``.
Matching is one-to-one per document: a second prediction of an already matched gold
triple is a false positive.

The FIRE dev file is split once, before any rule was written, by ``split_of(id)``:
``sha1(id) % 10 < 7`` -> ``tune`` (rules are written looking at these only), else
``heldout`` (only scored).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

_PAREN = re.compile(r"\([^)]*\)")
_POSS = re.compile(r"(?:'s|’s|\bs)\b(?=\s|$)")
_PUNCT = re.compile(r"[^\w\s]|_")
_SUFFIX = re.compile(
    r"(?:\s+(?:inc|incorporated|corp|corporation|co|company|companies|ltd|limited|llc|lp|l\s*p|"
    r"plc|sa|ag|nv|n\s*v|group|holdings?))+$"
)
_LEAD = re.compile(r"^(?:the)\s+")


class GoldTriple(BaseModel):
    head: str
    relation: str
    tail: str
    head_type: str = ""
    tail_type: str = ""
    attributes: dict[str, Any] = Field(default_factory=dict)
    symmetric: bool = False
    tail_also: list[str] = Field(default_factory=list)


class GoldDoc(BaseModel):
    """A gold document; other document fields (company, lang, kind, title ...) are kept
    and passed to the extractor as they are."""

    model_config = ConfigDict(extra="allow")
    id: str
    text: str
    gold: list[GoldTriple] = Field(default_factory=list)


def split_of(doc_id: str) -> str:
    """The fixed tune / held-out split of a gold file (70 / 30 by a hash of the id)."""
    return "tune" if int(hashlib.sha1(doc_id.encode()).hexdigest(), 16) % 10 < 7 else "heldout"


def normalise(name: str) -> str:
    s = name.casefold().replace("’", "'")
    s = _PAREN.sub(" ", s)
    s = re.sub(r"'s\b", " ", s)
    s = _PUNCT.sub(" ", s)
    s = " ".join(s.split())
    s = _LEAD.sub("", s)
    for _ in range(3):
        s2 = _SUFFIX.sub("", s).strip()
        if s2 == s or not s2:
            break
        s = s2
    return s


def _contains(big: list[str], small: list[str]) -> bool:
    n = len(small)
    return n > 0 and any(big[i : i + n] == small for i in range(len(big) - n + 1))


def names_match(pred: str, gold: str) -> bool:
    a, b = normalise(pred).split(), normalise(gold).split()
    if not a or not b:
        return False
    if a == b or _contains(a, b) or _contains(b, a):
        return True
    sa, sb = set(a), set(b)
    return len(sa & sb) / len(sa | sb) >= 0.5


def triple_matches(head: str, relation: str, tail: str, g: GoldTriple) -> bool:
    if relation != g.relation:
        return False
    tails = [g.tail, *g.tail_also]
    if names_match(head, g.head) and any(names_match(tail, t) for t in tails):
        return True
    return g.symmetric and names_match(tail, g.head) and names_match(head, g.tail)


def read_gold(path: Path, split: str = "all") -> list[GoldDoc]:
    docs: list[GoldDoc] = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            doc = GoldDoc.model_validate(json.loads(line))
            if split in ("all", "") or split_of(doc.id) == split:
                docs.append(doc)
    return docs


@dataclass
class Counts:
    tp: int = 0
    fp: int = 0
    fn: int = 0

    def as_dict(self) -> dict[str, float | int]:
        p = self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0
        r = self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0
        f = 2 * p * r / (p + r) if p + r else 0.0
        return {
            "tp": self.tp, "fp": self.fp, "fn": self.fn,
            "precision": round(p, 4), "recall": round(r, 4), "f1": round(f, 4),
        }  # fmt: skip


@dataclass
class Scores:
    overall: Counts = field(default_factory=Counts)
    by_relation: dict[str, Counts] = field(default_factory=lambda: defaultdict(Counts))
    unscored: Counter[str] = field(default_factory=Counter)
    errors: list[dict[str, str]] = field(default_factory=list)  # false positives / negatives

    def as_dict(self, *, errors: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            **self.overall.as_dict(),
            "by_relation": {k: v.as_dict() for k, v in sorted(self.by_relation.items())},
            "unscored": dict(self.unscored),
        }
        if errors:
            out["errors"] = self.errors
        return out


def score(
    docs: Sequence[GoldDoc],
    predicted: dict[str, Iterable[tuple[str, str, str]]],
    relations: set[str] | None = None,
) -> Scores:
    """P/R/F1 of ``predicted`` (doc id -> (head, relation, tail)) against ``docs``."""
    scored = relations or {g.relation for d in docs for g in d.gold}
    out = Scores()
    for doc in docs:
        preds, keys = [], set()
        for h, r, t in predicted.get(doc.id, ()):
            if r not in scored:
                out.unscored[r] += 1
                continue
            k = (normalise(h), r, normalise(t))
            if k not in keys:
                keys.add(k)
                preds.append((h, r, t))
        used: set[int] = set()
        for h, r, t in preds:
            hit = next(
                (i for i, g in enumerate(doc.gold) if i not in used and triple_matches(h, r, t, g)),
                None,
            )
            if hit is None:
                out.overall.fp += 1
                out.by_relation[r].fp += 1
                out.errors.append({"doc": doc.id, "kind": "fp", "triple": f"{h} | {r} | {t}"})
            else:
                used.add(hit)
                out.overall.tp += 1
                out.by_relation[r].tp += 1
        for i, g in enumerate(doc.gold):
            if i not in used and g.relation in scored:
                out.overall.fn += 1
                out.by_relation[g.relation].fn += 1
                out.errors.append(
                    {"doc": doc.id, "kind": "fn", "triple": f"{g.head} | {g.relation} | {g.tail}"}
                )
    return out


def doc_fields(doc: GoldDoc) -> dict[str, Any]:
    """The document as the extractor reads it (without the gold)."""
    return {k: v for k, v in doc.model_dump().items() if k != "gold"}
