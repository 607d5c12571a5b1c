"""Entity canonicalization: every mention resolves to one canonical id or a marked new one.

The alias dictionary is built from the static partition (names, short names, Chinese
names, tickers, codes, listed aliases). Resolution is a normalized-key exact match
first, then a fuzzy match over character trigrams (both restricted to type-compatible
entities), and only then a new id, ``new:<label>:<key>``, which is deterministic so the
same unknown name always lands on the same node. Matching one exact raw property, or
only by similarity, is what STYLE.md warns against.
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from enum import StrEnum
from typing import Any

from core.records import stable_id
from kg.ontology import ENTITY_LABEL, Ontology, default_ontology

NEW_PREFIX = "new:"
FUZZY_THRESHOLD = 0.88  # SequenceMatcher ratio on normalized keys
FUZZY_MARGIN = 0.04  # the best candidate must beat the runner-up (another id) by this
MIN_FUZZY_KEY = 4  # shorter keys only match exactly (tickers, acronyms)
CACHE_LIMIT = 200_000

# Legal-form words that do not distinguish one company from another.
_SUFFIXES = (
    "incorporated", "corporation", "company", "limited", "holdings", "holding", "group",
    "inc", "corp", "co", "ltd", "llc", "plc", "sa", "ag", "nv", "the", "class a", "class b",
)  # fmt: skip
_ZH_SUFFIXES = ("股份有限公司", "有限责任公司", "有限公司", "集团", "公司", "股份")
_SUFFIX_RE = re.compile(r"\b(?:" + "|".join(re.escape(s) for s in _SUFFIXES) + r")\b\.?")
_CN_CODE = re.compile(r"^(\d{6})(?:\.(sh|sz|bj|ss))?$")
_NON_KEY = re.compile(r"[^0-9a-z\u3400-\u9fff]+")


def normalize_key(name: str) -> str:
    """Case-, width-, punctuation- and legal-form-insensitive key of a name.

    'Apple Inc.' -> 'apple'; '$AAPL' -> 'aapl'; '贵州茅台酒股份有限公司' -> '贵州茅台酒';
    '600519.SH' -> '600519sh'.
    """
    s = unicodedata.normalize("NFKC", name).casefold().strip()
    if s.startswith("$"):
        s = s[1:]
    stripped = _SUFFIX_RE.sub(" ", s)
    for suffix in _ZH_SUFFIXES:
        if stripped.endswith(suffix) and len(stripped) > len(suffix) + 1:
            stripped = stripped[: -len(suffix)]
            break
    key = _NON_KEY.sub("", stripped)
    return key or _NON_KEY.sub("", s)


def code_keys(code: str) -> list[str]:
    """Keys an exchange code answers to: '600519.SH' -> ['600519sh', '600519']."""
    s = unicodedata.normalize("NFKC", code).casefold().strip()
    m = _CN_CODE.match(s)
    if m:
        return [m.group(1) + (m.group(2) or ""), m.group(1)] if m.group(2) else [m.group(1)]
    return [normalize_key(s)]


class Method(StrEnum):
    ID = "id"  # the mention is a canonical id
    EXACT = "exact"  # normalized-key match on an alias
    FUZZY = "fuzzy"
    NEW = "new"


@dataclass(frozen=True, slots=True)
class Resolution:
    id: str
    label: str  # the node's concept label
    name: str
    method: Method
    score: float = 1.0

    @property
    def canonical(self) -> bool:
        return self.method != Method.NEW


@dataclass(frozen=True, slots=True)
class AliasEntry:
    id: str
    label: str
    name: str


def new_id(label: str, key: str) -> str:
    """Deterministic id of an entity not in the static partition (clearly marked)."""
    if len(key) > 60:
        key = f"{key[:40]}~{stable_id(key)[:10]}"
    return f"{NEW_PREFIX}{label.lower()}:{key}"


def is_new_id(entity_id: str) -> bool:
    return entity_id.startswith(NEW_PREFIX)


def _trigrams(key: str) -> set[str]:
    padded = f"^{key}$"
    return {padded[i : i + 3] for i in range(len(padded) - 2)} if len(key) > 1 else {key}


class AliasIndex:
    """Normalized alias -> entries, with a trigram index for fuzzy candidates."""

    def __init__(self, ontology: Ontology | None = None) -> None:
        self.ontology = ontology or default_ontology()
        self._by_id: dict[str, AliasEntry] = {}
        self._by_key: dict[str, list[AliasEntry]] = defaultdict(list)
        self._grams: dict[str, set[str]] = defaultdict(set)
        self._gram_count: dict[str, int] = {}
        self._cache: dict[tuple[str, str], Resolution] = {}

    def __len__(self) -> int:
        return len(self._by_id)

    def add(
        self,
        entity_id: str,
        label: str,
        name: str,
        aliases: Iterable[str] = (),
        codes: Iterable[str] = (),
    ) -> None:
        """Register an entity under its id, name, aliases and codes (tickers)."""
        entry = AliasEntry(entity_id, label, name)
        self._by_id[entity_id] = entry
        keys = {normalize_key(entity_id), normalize_key(name)}
        keys.update(normalize_key(a) for a in aliases if a)
        for code in (entity_id, *codes):
            if code:
                keys.update(code_keys(code))
        for key in keys - {""}:
            bucket = self._by_key[key]
            if all(e.id != entity_id for e in bucket):
                bucket.append(entry)
            if len(key) >= MIN_FUZZY_KEY and key not in self._gram_count:
                grams = _trigrams(key)
                self._gram_count[key] = len(grams)
                for g in grams:
                    self._grams[g].add(key)
        self._cache.clear()

    def add_row(self, row: Mapping[str, Any]) -> None:
        """Add one static node as returned by ``ALIAS_CYPHER`` or a static-file entity."""
        aliases = [
            *(row.get("aliases") or []),
            row.get("name_zh") or "",
            row.get("short_name") or "",
        ]
        codes = [row.get("ticker") or "", row.get("code") or ""]
        label = row.get("label") or _concrete(row.get("labels") or [], self.ontology)
        self.add(row["id"], label, row.get("name") or row["id"], aliases, codes)

    def get(self, entity_id: str) -> AliasEntry | None:
        return self._by_id.get(entity_id)

    # -- resolution --------------------------------------------------------------------
    def resolve(self, mention: str, label: str) -> Resolution:
        """One canonical entity for ``mention`` of concept ``label``, or a new id."""
        mention = mention.strip()
        cache_key = (mention, label)
        hit = self._cache.get(cache_key)
        if hit is not None:
            return hit
        res = self._resolve(mention, label)
        if len(self._cache) >= CACHE_LIMIT:
            self._cache.clear()
        self._cache[cache_key] = res
        return res

    def _compatible(self, entry: AliasEntry, label: str) -> bool:
        """Same concept family (a common ancestor below Entity): an 'ORG' mention may
        name an Institution, an Executive is a Person, but a Product never resolves to
        the Company of the same name."""
        if entry.label == label:
            return True
        shared = set(self.ontology.ancestors(entry.label)) & set(self.ontology.ancestors(label))
        return bool(shared - {ENTITY_LABEL})

    def _resolve(self, mention: str, label: str) -> Resolution:
        entry = self._by_id.get(mention)
        if entry is not None and self._compatible(entry, label):
            return Resolution(entry.id, entry.label, entry.name, Method.ID)
        key = normalize_key(mention)
        candidates = [e for e in self._by_key.get(key, ()) if self._compatible(e, label)]
        if not candidates and _CN_CODE.match(mention.casefold().strip()):
            for k in code_keys(mention):
                candidates += [e for e in self._by_key.get(k, ()) if self._compatible(e, label)]
        if candidates:
            best = min(candidates, key=lambda e: (e.label != label, e.id))
            return Resolution(best.id, best.label, best.name, Method.EXACT)
        fuzzy = self._fuzzy(key, label)
        if fuzzy is not None:
            return fuzzy
        return Resolution(new_id(label, key or stable_id(mention)), label, mention, Method.NEW)

    def _fuzzy(self, key: str, label: str) -> Resolution | None:
        if len(key) < MIN_FUZZY_KEY:
            return None
        grams = _trigrams(key)
        counts: dict[str, int] = defaultdict(int)
        for g in grams:
            for k in self._grams.get(g, ()):
                counts[k] += 1
        # Dice on trigrams prunes; SequenceMatcher decides.
        shortlist = sorted(
            (k for k, c in counts.items() if 2 * c / (len(grams) + self._gram_count[k]) >= 0.5),
            key=lambda k: -counts[k],
        )[:20]
        scored: list[tuple[float, AliasEntry]] = []
        for k in shortlist:
            ratio = SequenceMatcher(None, key, k, autojunk=False).ratio()
            for e in self._by_key[k]:
                if self._compatible(e, label):
                    scored.append((ratio, e))
        if not scored:
            return None
        scored.sort(key=lambda t: (-t[0], t[1].id))
        best_score, best = scored[0]
        if best_score < FUZZY_THRESHOLD:
            return None
        runner = next((s for s, e in scored[1:] if e.id != best.id), 0.0)
        if best_score - runner < FUZZY_MARGIN:
            return None  # ambiguous: two entities look alike; do not guess
        return Resolution(best.id, best.label, best.name, Method.FUZZY, round(best_score, 3))


def _concrete(labels: Sequence[str], ontology: Ontology) -> str:
    """The most specific ontology label of a node (its concept)."""
    known = [lb for lb in labels if ontology.concept(lb) and lb != ENTITY_LABEL]
    if not known:
        return ENTITY_LABEL
    return max(known, key=lambda lb: len(ontology.ancestors(lb)))


ALIAS_CYPHER = """
MATCH (e:Entity)
WHERE e.canonical = true
RETURN e.id AS id, labels(e) AS labels, e.name AS name, e.name_zh AS name_zh,
       e.short_name AS short_name, e.aliases AS aliases, e.ticker AS ticker, e.code AS code
"""


async def load_alias_index(store: Any, ontology: Ontology | None = None) -> AliasIndex:
    """Build the alias dictionary from the graph's static partition."""
    index = AliasIndex(ontology)
    for row in await store.query(ALIAS_CYPHER):
        index.add_row(row)
    return index
