"""Entity canonicalization: every mention resolves to one canonical id or a marked new one.

The alias dictionary is built from the static partition (names, short names, Chinese
names, tickers, codes, listed aliases). Resolution is a normalized-key exact match
first, then a fuzzy match over character trigrams (both restricted to type-compatible
entities), and only then a new id, ``new:<label>:<key>``, which is deterministic so the
same unknown name always lands on the same node. Matching one exact raw property, or
only by similarity, is what STYLE.md warns against.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from difflib import SequenceMatcher
from enum import StrEnum
from itertools import chain
from pathlib import Path
from typing import Any

from core.records import stable_id
from kg.graph.ontology import ENTITY_LABEL, Ontology, default_ontology

NEW_PREFIX = "new:"
FUZZY_THRESHOLD = 0.88  # SequenceMatcher ratio on normalized keys
FUZZY_MARGIN = 0.04  # the best candidate must beat the runner-up (another id) by this
MIN_FUZZY_KEY = 4  # shorter keys only match exactly (tickers, acronyms)
# A candidate scoring below this can neither win (needs FUZZY_THRESHOLD) nor make the
# winner ambiguous (needs to be within FUZZY_MARGIN of it): it is not scored in full.
_RELEVANT_SCORE = FUZZY_THRESHOLD - FUZZY_MARGIN - 1e-9
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


class MatchMethod(StrEnum):
    ID = "id"  # the mention is a canonical id
    EXACT = "exact"  # normalized-key match on an alias
    FUZZY = "fuzzy"
    NEW = "new"


@dataclass(frozen=True, slots=True)
class Resolution:
    id: str
    label: str  # the node's concept label
    name: str
    method: MatchMethod
    score: float = 1.0

    @property
    def canonical(self) -> bool:
        return self.method != MatchMethod.NEW


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


def clear_best(scored: list[tuple[float, AliasEntry]]) -> tuple[float, AliasEntry] | None:
    """The best of the scored entries (ties: the smaller id) when its score reaches
    ``FUZZY_THRESHOLD`` and beats the best other entity's by ``FUZZY_MARGIN``; else None
    (two entities look alike: no guess)."""
    if not scored:
        return None
    ranked = sorted(scored, key=lambda t: (-t[0], t[1].id))
    best_score, best = ranked[0]
    if best_score < FUZZY_THRESHOLD:
        return None
    runner = next((s for s, e in ranked[1:] if e.id != best.id), 0.0)
    if best_score - runner < FUZZY_MARGIN:
        return None
    return best_score, best


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
        self._compat: dict[tuple[str, str], bool] = {}

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
        self._register(entry, [name, *aliases], [entity_id, *codes], with_id=True)

    def add_aliases(
        self, entity_id: str, aliases: Iterable[str] = (), codes: Iterable[str] = ()
    ) -> bool:
        """More names and codes (former names, CIK, LEI) for a known entity; False if unknown."""
        entry = self._by_id.get(entity_id)
        if entry is None:
            return False
        self._register(entry, list(aliases), list(codes))
        return True

    def _register(
        self, entry: AliasEntry, names: list[str], codes: list[str], *, with_id: bool = False
    ) -> None:
        keys = {normalize_key(entry.id)} if with_id else set()
        keys.update(normalize_key(a) for a in names if a)
        for code in codes:
            if code:
                keys.update(code_keys(code))
        entity_id = entry.id
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
        label = row.get("label") or self.ontology.most_specific(row.get("labels") or [])
        self.add(row["id"], label, row.get("name") or row["id"], aliases, codes)

    def get(self, entity_id: str) -> AliasEntry | None:
        return self._by_id.get(entity_id)

    # -- resolution --------------------------------------------------------------------
    def resolve(self, mention: str, label: str) -> Resolution:
        """One canonical entity for ``mention`` of concept ``label``, or a new id.

        Cached under the mention as given and as stripped (the answer depends only on
        the stripped one), so a repeated mention costs one dictionary lookup."""
        hit = self._cache.get((mention, label))
        if hit is not None:
            return hit
        stripped = mention.strip()
        res = self._cache.get((stripped, label)) or self._resolve(stripped, label)
        if len(self._cache) >= CACHE_LIMIT:
            self._cache.clear()
        self._cache[(stripped, label)] = self._cache[(mention, label)] = res
        return res

    def _compatible(self, entry: AliasEntry, label: str) -> bool:
        """Same concept family (a common ancestor below Entity): an 'ORG' mention may
        name an Institution, an Executive is a Person, but a Product never resolves to
        the Company of the same name."""
        if entry.label == label:
            return True
        pair = (entry.label, label)
        ok = self._compat.get(pair)
        if ok is None:
            ancestors = self.ontology.ancestors
            shared = set(ancestors(entry.label)) & set(ancestors(label))
            ok = self._compat[pair] = bool(shared - {ENTITY_LABEL})
        return ok

    def _resolve(self, mention: str, label: str) -> Resolution:
        entry = self._by_id.get(mention)
        if entry is not None and self._compatible(entry, label):
            return Resolution(entry.id, entry.label, entry.name, MatchMethod.ID)
        key = normalize_key(mention)
        candidates = [e for e in self._by_key.get(key, ()) if self._compatible(e, label)]
        if not candidates and _CN_CODE.match(mention.casefold().strip()):
            for k in code_keys(mention):
                candidates += [e for e in self._by_key.get(k, ()) if self._compatible(e, label)]
        if candidates:
            best = min(candidates, key=lambda e: (e.label != label, e.id))
            return Resolution(best.id, best.label, best.name, MatchMethod.EXACT)
        fuzzy = self._fuzzy(key, label)
        if fuzzy is not None:
            return fuzzy
        return Resolution(new_id(label, key or stable_id(mention)), label, mention, MatchMethod.NEW)

    def _fuzzy(self, key: str, label: str) -> Resolution | None:
        if len(key) < MIN_FUZZY_KEY:
            return None
        grams = _trigrams(key)
        index_grams = self._grams
        counts = Counter(chain.from_iterable(index_grams.get(g, ()) for g in grams))
        # Dice on trigrams prunes; SequenceMatcher decides.
        n_grams, gram_count = len(grams), self._gram_count
        shortlist = sorted(
            (k for k, c in counts.items() if 2 * c / (n_grams + gram_count[k]) >= 0.5),
            key=lambda k: -counts[k],
        )[:20]
        scored: list[tuple[float, AliasEntry]] = []
        for k in shortlist:
            matcher = SequenceMatcher(None, key, k, autojunk=False)
            # upper bounds first: most shortlisted keys are not close enough to matter
            if matcher.real_quick_ratio() < _RELEVANT_SCORE:
                continue
            if matcher.quick_ratio() < _RELEVANT_SCORE:
                continue
            ratio = matcher.ratio()
            for e in self._by_key[k]:
                if self._compatible(e, label):
                    scored.append((ratio, e))
        picked = clear_best(scored)
        if picked is None:
            return None
        score, best = picked
        return Resolution(best.id, best.label, best.name, MatchMethod.FUZZY, round(score, 3))


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
    add_sec_companies(index, bundled_sec_tickers())
    return index


# -- filers: SEC ticker/CIK list, LEIs, former names, self-references (issue 28) ------------
SEC_TICKERS_PATH = Path(__file__).resolve().parents[1] / "data" / "sec_company_tickers.json"
_SEC_STATE = re.compile(r"\s*/[A-Z]{2,3}/\s*$")  # 'BANK OF AMERICA CORP /DE/'
SELF_REFERENCE = re.compile(
    r"^(?:the\s+)?(?:company|corporation|registrant|firm|group|bank|issuer|partnership)$"
    r"|^(?:we|us|our|ours|ourselves)$"
    r"|^(?:本行|本公司|公司|本集团|本银行|我行|我司|本企业|该公司|该行)$",
    re.I,
)


def cik_code(cik: int | str) -> str:
    """The canonical CIK code: 789019 -> 'CIK0000789019'."""
    return f"CIK{int(str(cik).upper().removeprefix('CIK')):010d}"


def is_self_reference(mention: str) -> bool:
    """'the Company', 'we', '本行': the filer or subject of the document, not a new entity."""
    return bool(SELF_REFERENCE.match(unicodedata.normalize("NFKC", mention).strip(" .,")))


def parse_sec_tickers(data: Any) -> dict[str, tuple[int, str]]:
    """SEC's company_tickers.json ({"0": {cik_str, ticker, title}}) -> ticker -> (CIK, title)."""
    out: dict[str, tuple[int, str]] = {}
    rows = data.values() if isinstance(data, dict) else ()
    for v in rows:
        try:
            out[str(v["ticker"]).upper()] = (int(v["cik_str"]), str(v.get("title") or ""))
        except (KeyError, TypeError, ValueError, AttributeError):
            continue
    return out


def bundled_sec_tickers() -> dict[str, tuple[int, str]]:
    """The bundled subset of SEC's list (the universe's US companies and the corpus filers)."""
    return parse_sec_tickers(json.loads(SEC_TICKERS_PATH.read_text(encoding="utf-8")))


def sec_filer_ids() -> dict[int, str]:
    """CIK -> company id (the ticker) of the bundled SEC filers, for sources that key
    filings by CIK."""
    return {cik: ticker for ticker, (cik, _title) in bundled_sec_tickers().items()}


def add_sec_companies(
    index: AliasIndex, tickers: Mapping[str, tuple[int, str]], *, add_unknown: bool = True
) -> int:
    """Register SEC filers: a company the index knows by ticker gains its CIK and SEC
    title; an unknown one becomes canonical under its ticker (the universe's id scheme),
    so 'BA', 'CIK0000012927' and 'BOEING CO' are one node. Returns entities added."""
    added = 0
    for ticker, (cik, title) in tickers.items():
        name = _SEC_STATE.sub("", title).strip() or ticker
        code = cik_code(cik)
        known = [e for e in index._by_key.get(normalize_key(ticker), ()) if e.label == "Company"]
        if known:
            index.add_aliases(known[0].id, [name], [code, f"{cik:010d}"])
        elif add_unknown and index.get(ticker) is None:
            index.add(ticker, "Company", name, [], [ticker, code, f"{cik:010d}"])
            added += 1
    return added


def add_former_names(index: AliasIndex, entity_id: str, submissions: Any) -> int:
    """SEC submissions JSON ``formerNames`` ([{name, from, to}]) as aliases of the filer."""
    names = [
        str(f.get("name") or "")
        for f in (submissions.get("formerNames") or [] if isinstance(submissions, dict) else [])
        if isinstance(f, dict)
    ]
    names = [_SEC_STATE.sub("", n).strip() for n in names if n.strip()]
    return len(names) if names and index.add_aliases(entity_id, names) else 0


def resolve_mention(
    index: AliasIndex, mention: str, label: str, subject: Resolution | None = None
) -> Resolution:
    """``resolve`` that reads 'the Company' / 'we' / '本行' as the document's subject."""
    if subject is not None and is_self_reference(mention):
        return subject
    return index.resolve(mention, label)


@dataclass(frozen=True, slots=True)
class DuplicateReport:
    mentions: int
    nodes: int  # distinct node ids the mentions landed on
    entities: int  # distinct real-world entities among them (the reference)
    split: dict[str, int]  # entity -> nodes it was split into (only where > 1)

    @property
    def rate(self) -> float:
        """Share of nodes that duplicate another node of the same entity."""
        return (self.nodes - self.entities) / self.nodes if self.nodes else 0.0


def duplicate_entity_rate(assigned: Iterable[tuple[str, str]]) -> DuplicateReport:
    """(node id given, real entity) per mention -> how many nodes are duplicates."""
    by_entity: dict[str, set[str]] = defaultdict(set)
    node_entities: dict[str, set[str]] = defaultdict(set)
    n = 0
    for node, entity in assigned:
        n += 1
        by_entity[entity].add(node)
        node_entities[node].add(entity)
    split = {e: len(ns) for e, ns in by_entity.items() if len(ns) > 1}
    return DuplicateReport(n, len(node_entities), len(by_entity), split)
