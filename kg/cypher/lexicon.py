"""Keyword extraction by dictionary maximum matching (FinQA, "Keyword Extraction").

The dictionary is built from the graph (entity ids, names, Chinese names, short
names, aliases, tickers, codes and the distinct values of small string properties),
from the ontology (concept labels and relation types with their aliases) and from
``triggers.toml`` (the words people use for concepts, relations, properties and
values). A question is tokenized (jieba for Chinese, with every dictionary word added
so names stay whole; a word tokenizer for English) and matched left to right, longest
span first.
"""

from __future__ import annotations

import re
import threading
import tomllib
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache, lru_cache
from pathlib import Path
from typing import Any, Literal

import jieba

from kg.graph.ontology import Ontology, default_ontology

TRIGGERS_PATH = Path(__file__).with_name("triggers.toml")
MAX_SPAN = 10  # tokens in the longest dictionary entry we try
VALUE_PROPS_MAX_DISTINCT = 60  # a string property with more values is not a category

SenseKind = Literal["entity", "concept", "relation", "property", "value"]


@dataclass(frozen=True, slots=True)
class Sense:
    """One meaning of a dictionary entry."""

    kind: SenseKind
    key: str  # entity id, concept label, relation type, property name or property
    label: str = ""  # entity: its concept label; value: the stored value
    name: str = ""  # entity: display name


@dataclass(frozen=True, slots=True)
class Mention:
    text: str  # the matched span, normalized
    start: int  # token offsets
    end: int
    senses: tuple[Sense, ...]

    def of(self, kind: SenseKind) -> list[Sense]:
        return [s for s in self.senses if s.kind == kind]


@cache
def triggers() -> dict[str, Any]:
    with TRIGGERS_PATH.open("rb") as fh:
        return tomllib.load(fh)


@lru_cache(maxsize=8192)
def trigger_regex(pattern: str) -> re.Pattern[str]:
    """A trigger pattern compiled once (case-insensitive): the triggers outnumber the 512
    patterns ``re`` keeps compiled, and recompiling them cost ~10 ms a question."""
    return re.compile(pattern, re.I)


_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+")
_WORD = re.compile(r"[a-z0-9]+|[\u3400-\u9fff\uf900-\ufaff]+")
_jieba_lock = threading.Lock()
_CODE = re.compile(r"([a-z]{2,5})(\d+[a-z]?)")


@cache
def _t2s() -> Any:
    from opencc_purepy import OpenCC  # optional: 145 ms of tables to load, Chinese text only

    return OpenCC("t2s")


def to_simplified(text: str) -> str:
    """Traditional Chinese characters as simplified ("美國財政部" -> "美国财政部"): the
    dictionary, the triggers and jieba's words are simplified. Other text is unchanged."""
    return _t2s().convert(text) if _CJK.search(text) else text


def _normalize(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def _singular(word: str) -> str:
    """A light stemmer applied to questions and dictionary alike: plurals and -ing."""
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ing") and len(word) > 5:
        return word[:-3]
    if not word.endswith("s") or word.endswith("ss"):
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    return word[:-1]


_TENOR_UNIT = {
    "year": "y",
    "yr": "y",
    "y": "y",
    "年": "y",
    "年期": "y",
    "month": "m",
    "个月": "m",
    "月期": "m",
    "week": "w",
    "day": "d",
    "天": "d",
}
_EN_NUM = {"one": "1", "two": "2", "three": "3", "five": "5", "seven": "7", "ten": "10"}
_EN_NUM |= {"twenty": "20", "thirty": "30"}
_ZH_NUM = {
    "一": "1",
    "二": "2",
    "两": "2",
    "三": "3",
    "五": "5",
    "七": "7",
    "十": "10",
    "二十": "20",
    "三十": "30",
}


def _tenors(tokens: list[str]) -> list[str]:
    """ "10-year", "10 year", "10y", "10年期", "十年期" -> "10y" (names and questions)."""
    out: list[str] = []
    i = 0
    while i < len(tokens):
        t = tokens[i]
        m = re.fullmatch(r"(\d+)(y|m|w|d|yr|yrs)", t)
        if m:
            out.append(t if m.group(2) in "ymwd" else f"{m.group(1)}y")  # "2yr" -> "2y"
            i += 1
            continue
        zh = re.fullmatch(r"(\d+|[一二两三五七十]+)(年期|年|个月|月期|天)", t)
        if zh:
            n = _ZH_NUM.get(zh.group(1), zh.group(1))
            out.append(n + _TENOR_UNIT[zh.group(2)])
            i += 1
            continue
        nxt = tokens[i + 1] if i + 1 < len(tokens) else ""
        num = _ZH_NUM.get(t, t)
        if nxt in ("year", "yr", "month"):  # "ten-year", "two-year"
            num = _EN_NUM.get(num, num)
        if num.isdigit() and nxt in _TENOR_UNIT:
            out.append(num + _TENOR_UNIT[nxt])
            i += 2
            continue
        if num.isdigit() and nxt == "个" and tokens[i + 2 : i + 3] == ["月"]:  # "3个月"
            out.append(num + "m")
            i += 3
            continue
        if t == "期" and out and re.fullmatch(r"\d+[ymwd]", out[-1]):
            i += 1
            continue
        out.append(t)
        i += 1
    return out


STOPWORDS = frozenset(
    "a an the of and or in on at to for by with from is are was were be been what which who "
    "whom how many much does do did has have had its it this that these those there their "
    "s co inc ltd corporation company limited group plc".split()
)


class Tokenizer:
    """English words (singularised) and jieba tokens for Chinese runs."""

    def __init__(self) -> None:
        self._jieba = jieba.Tokenizer()
        self._jieba.initialize()
        self._added: set[str] = set()

    def add_words(self, words: Iterable[str]) -> None:
        with _jieba_lock:
            for w in words:
                if _CJK.fullmatch(w) and w not in self._added and len(w) > 1:
                    self._jieba.add_word(w, freq=200_000)
                    self._added.add(w)

    def word_freq(self, word: str) -> int:
        """jieba's frequency of a Chinese word (dictionary words: 200,000; unknown: 0)."""
        return int(self._jieba.FREQ.get(word) or 0)

    def tokens(self, text: str) -> list[str]:
        out: list[str] = []
        for m in _WORD.finditer(_normalize(text)):
            piece = m.group()
            if _CJK.match(piece):
                with _jieba_lock:
                    out.extend(t for t in self._jieba.cut(piece, HMM=False) if t.strip())
            elif _CODE.fullmatch(piece):  # ids like us10y, cn10y, dr007: letters | digits
                m = _CODE.fullmatch(piece)
                assert m is not None
                out.extend([m.group(1), m.group(2)])
            else:
                out.append(_singular(piece))
        return _tenors(out)


@cache
def shared_tokenizer() -> Tokenizer:
    """One jieba dictionary per process (loading it costs 1-5 s); words only get added."""
    return Tokenizer()


def join(tokens: Iterable[str]) -> str:
    """Tokens back to a key: a space only between two ASCII words."""
    out = ""
    prev_ascii = False
    for t in tokens:
        cur_ascii = t.isascii()
        if out and prev_ascii and cur_ascii:
            out += " "
        out += t
        prev_ascii = cur_ascii
    return out


@dataclass
class Lexicon:
    """The dictionary and the matcher. Build with ``Lexicon.build``."""

    tokenizer: Tokenizer
    entries: dict[str, set[Sense]] = field(default_factory=dict)
    entities: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> properties
    value_props: dict[str, set[str]] = field(default_factory=dict)  # prop -> labels having it
    unordered: dict[str, set[Sense]] = field(default_factory=dict)  # sorted-token keys
    names: list[tuple[frozenset[str], Sense]] = field(default_factory=list)  # for subset links
    edge_stats: dict[tuple[str, str, str], int] = field(default_factory=dict)
    min_ascii_len: int = 2
    known_words: set[str] = field(default_factory=set)  # every ASCII token of every entry
    name_words: set[str] = field(default_factory=set)  # ASCII tokens of entity names
    # a tenor alone that several curves have ("10y": US10Y, CN10Y) -> their ids
    shared_tenors: dict[str, list[str]] = field(default_factory=dict)
    # (country, tenor) -> the series of that curve point ("US", "3m") -> US3M
    curve_index: dict[tuple[str, str], str] = field(default_factory=dict)

    def add_new(self, phrase: str | None, sense: Sense) -> None:
        """Add a derived name only where the dictionary has no entity of that name: a
        derived form must never shadow or share a name that exists ("UST 10Y" is the
        bond; "10年美债" may be the yield)."""
        if not phrase:
            return
        key = join(self.tokenizer.tokens(phrase))
        if any(s.kind == "entity" for s in self.entries.get(key, ())):
            return
        self.add(phrase, sense)

    def add(self, phrase: str | None, sense: Sense) -> None:
        if not phrase or not isinstance(phrase, str):
            return
        toks = self.tokenizer.tokens(phrase)
        key = join(toks)
        if not key or (key.isascii() and len(key) < self.min_ascii_len):
            return
        self.entries.setdefault(key, set()).add(sense)
        for t in toks:
            if t.isascii() and t.isalpha():
                self.known_words.add(t)
                if sense.kind == "entity":
                    self.name_words.add(t)
        if sense.kind == "entity" and len(toks) > 1:
            self.unordered.setdefault(" ".join(sorted(toks)), set()).add(sense)
            content = frozenset(t for t in toks if t.isascii() and t not in STOPWORDS)
            if len(content) >= 2:
                self.names.append((content, sense))

    @classmethod
    def build(
        cls,
        entity_rows: Iterable[Mapping[str, Any]],
        ontology: Ontology | None = None,
        tokenizer: Tokenizer | None = None,
    ) -> Lexicon:
        """``entity_rows``: property maps of Entity nodes plus ``labels`` (a list)."""
        ontology = ontology or default_ontology()
        lex = cls(tokenizer or shared_tokenizer())
        trig = triggers()
        words: list[str] = []
        for table in ("concepts", "relations", "properties", "entity_aliases"):
            for items in trig.get(table, {}).values():
                words.extend(items)
        rows = list(entity_rows)
        for r in rows:
            words.extend(str(r.get(k) or "") for k in ("name", "name_zh", "short_name"))
            words.extend(str(a) for a in r.get("aliases") or [])
        lex.tokenizer.add_words(words)

        for c in ontology.concepts:
            if c.abstract or c.partition.value != "static":
                continue
            sense = Sense("concept", c.label)
            lex.add(c.label, sense)
            lex.add(re.sub(r"(?<=[a-z])(?=[A-Z])", " ", c.label), sense)
            for a in c.aliases:
                if not a.isupper():  # ORG, GPE ... are extractor tags, not words
                    lex.add(a, sense)
        for label, items in trig.get("concepts", {}).items():
            for w in items:
                lex.add(w, Sense("concept", label))
        for r in ontology.relations:
            if r.internal:
                continue
            words = [r.type.replace("_", " "), *trig.get("relations", {}).get(r.type, [])]
            words += [a.replace("_", " ") for a in r.aliases]  # the ontology's own aliases
            for w in words:
                lex.add(w, Sense("relation", r.type))
        for prop, items in trig.get("properties", {}).items():
            lex.add(prop.replace("_", " "), Sense("property", prop))
            for w in items:
                lex.add(w, Sense("property", prop))

        distinct: dict[str, set[str]] = {}
        derived: list[tuple[str, Sense]] = []  # added after every real name is in
        for r in rows:
            eid = str(r.get("id") or "")
            if not eid:
                continue
            labels = [lb for lb in r.get("labels") or [] if lb != "Entity"]
            label = ontology.most_specific(labels)
            props = {k: v for k, v in r.items() if k != "labels"}
            lex.entities[eid] = {**props, "label": label}
            name = str(r.get("name") or eid)
            sense = Sense("entity", eid, label, name)
            for k in ("id", "name", "name_zh", "short_name", "ticker", "code"):
                lex.add(r.get(k), sense)
            for k in ("name", "name_zh", "short_name"):
                derived.extend((w, sense) for w in _derived_names(r.get(k), label, trig, ontology))
            for pre in trig.get("id_prefixes", {}).get("prefixes", []):
                if eid.startswith(pre) and len(eid) > len(pre) + 1:  # IND_SEMIS -> "semis"
                    derived.append((eid[len(pre) :].replace("_", " ").lower(), sense))
            for a in r.get("aliases") or []:
                lex.add(str(a), sense)
            for k, v in props.items():
                if isinstance(v, str) and k not in _NOT_VALUES and len(v) <= 40:
                    distinct.setdefault(k, set()).add(v)
                    lex.value_props.setdefault(k, set()).add(label)
        for spec in trig.get("tenor_names", {}).values():
            # "10年美债", "UST 10Y", "10y treasury": issuer words + a tenor name a series
            words = list(spec["words"])
            lex.tokenizer.add_words(words)
            for n, unit in [(n, u) for n in range(1, 51) for u in ("y", "m")]:
                pattern = spec["entity"] if unit == "y" else spec.get("entity_months")
                e = lex.entities.get(pattern.format(n=n)) if pattern else None
                if e is None or pattern is None:
                    continue
                eid = pattern.format(n=n)
                sense = Sense("entity", eid, e["label"], str(e.get("name") or eid))
                if unit == "m":  # "3m bill", "美债3个月", "美国6个月期国债": the token is "3m"
                    for w in words:
                        derived += [(f"{n}m {w}", sense), (f"{w} {n}m", sense)]
                        derived += [(f"{w}{n}m", sense)] if not w.isascii() else []
                    continue
                for k in (str(n), *_CN_NUMERALS.get(n, ())):  # "10年", "十年"
                    for w in words:
                        for form in (
                            f"{k}y {w}",
                            f"{k}yr {w}",
                            f"{w} {k}y",
                            f"{w} {k}yr",
                            f"{k}年{w}",
                            f"{k}年期{w}",
                            f"{w}{k}年期",
                            f"{w}{k}年",
                        ):
                            derived.append((form, sense))
                    derived.extend((f.format(n=k), sense) for f in spec.get("abbrev", []))
        derived += _other_forms(rows, lex, trig, ontology)
        derived += _bare_tenors(lex)
        derived += _short_forms(rows, lex, trig)
        lex.tokenizer.add_words(p for p, _ in derived if _CJK.fullmatch(p))
        for phrase, sense in derived:
            lex.add_new(phrase, sense)
        for eid, items in trig.get("entity_aliases", {}).items():
            if eid in lex.entities:
                e = lex.entities[eid]
                for w in items:
                    lex.add(w, Sense("entity", eid, e["label"], str(e.get("name") or eid)))
        for prop, values in distinct.items():
            if len(values) > VALUE_PROPS_MAX_DISTINCT:
                lex.value_props.pop(prop, None)
                continue
            for v in values:
                lex.add(v.replace("_", " "), Sense("value", prop, v))
        for prop, table in trig.get("values", {}).items():
            for value, items in table.items():
                if value in distinct.get(prop, ()):
                    for w in items:
                        lex.add(w, Sense("value", prop, value))
        return lex

    def match(self, question: str) -> tuple[list[str], list[Mention]]:
        """Forward maximum matching; returns the tokens and the mentions found.

        At each position the longest exact entry wins, unless a longer span names
        one entity by part of its name ("China 10Y" before "China")."""
        toks = [self._spelled(t) for t in self.tokenizer.tokens(question)]
        out: list[Mention] = []
        i = 0
        while i < len(toks):
            exact: Mention | None = None
            for j in range(min(len(toks), i + MAX_SPAN), i, -1):
                key = join(toks[i:j])
                senses = self.entries.get(key)
                if not senses and j - i > 1:
                    senses = self.unordered.get(" ".join(sorted(toks[i:j])))
                if senses:
                    exact = Mention(key, i, j, tuple(sorted(senses, key=_sense_order)))
                    break
            # a longer partial name beats an exact match only with a code or tenor in it
            # ("China 10Y" over "China"; not "Chinese bank" over "Chinese")
            partial = self._subset_at(
                toks, i, exact.end + 1 if exact else i + 2, need_digit=exact is not None
            )
            hit = partial or exact
            if hit is not None:
                out.append(hit)
                i = hit.end
            else:
                i += 1
        return toks, self._shared_tenors(question, toks, out)

    def _shared_tenors(self, question: str, toks: list[str], out: list[Mention]) -> list[Mention]:
        """A tenor alone that several curves have ("the 2y closing above the 10y", "10y move")
        names the series of the curve the question's other series are on, else of the
        question's language's default curve (``[shared_tenor]`` in triggers.toml)."""
        spec = triggers()["shared_tenor"]
        bare = [m for m in out if re.fullmatch(r"\d+[ym]", m.text) and m.of("entity")]
        if bare and set(spec["not_with"]) & {w for t in toks for w in (t, *_CJK.findall(t))}:
            others = [m for m in out if m.of("entity") and m not in bare]
            if not any(m.of("entity")[0].label == "Indicator" for m in others):
                out = [m for m in out if m not in bare]  # "bonds with tenor 5y or longer"
        covered = {i for m in out for i in range(m.start, m.end)}
        out = self._curve_points(toks, out, covered)  # "ust curve (1m 3m 6m ...)"
        covered = {i for m in out for i in range(m.start, m.end)}
        loose = [i for i, t in enumerate(toks) if t in self.shared_tenors and i not in covered]
        if not loose:
            return out
        named = {
            self.entities.get(s.key, {}).get("country")
            for m in out
            for s in m.of("entity")[:1]
            if s.label == "Indicator"
        } - {None}
        spec = triggers()["shared_tenor"]
        default = spec["zh"] if _CJK.search(question) else spec["en"]
        country = next(iter(named)) if len(named) == 1 else default
        near, anywhere = set(spec["not_near"]), set(spec["not_with"])
        if not named and anywhere & {w for t in toks for w in (t, *_CJK.findall(t))}:
            return out  # "bonds with a tenor of at least 10 years": a bond's tenor
        for i in loose:
            if not named and toks[i].endswith("m"):
                continue  # "3 month" alone names a curve's point only beside that curve's series
            if not named and near & set(toks[max(0, i - 2) : i + 3]):
                continue  # "期限在10年及以上", "10y or more": a tenor, not a series
            ids = [
                e for e in self.shared_tenors[toks[i]] if self.entities[e].get("country") == country
            ]
            if len(ids) == 1:
                e = self.entities[ids[0]]
                sense = Sense("entity", ids[0], "Indicator", str(e.get("name") or ids[0]))
                out.append(Mention(toks[i], i, i + 1, (sense,)))
        return sorted(out, key=lambda m: m.start)

    def _curve_points(
        self, toks: list[str], out: list[Mention], covered: set[int]
    ) -> list[Mention]:
        """Tenors listed after a curve's words ("the ust curve (1m 3m 6m 1y ...)", "美债1个月、
        3个月、6个月、1年"): each is that curve's series (``[shared_tenor] curves``)."""
        spec = triggers()["shared_tenor"]
        curves = spec["curves"]
        text = " ".join(toks)
        if set(spec["curve_not_with"]) & set(toks):
            return out  # "bonds the us treasury issues with tenor 10y or longer": a bond's tenor
        named = [c for c, words in curves.items() if any(w in toks or w in text for w in words)]
        if len(named) != 1:
            return out
        for i, t in enumerate(toks):
            if i in covered or not re.fullmatch(r"\d+[ym]", t):
                continue
            eid = self.curve_index.get((named[0], t))
            if eid is not None:
                e = self.entities[eid]
                out.append(
                    Mention(
                        t, i, i + 1, (Sense("entity", eid, "Indicator", str(e.get("name") or eid)),)
                    )
                )
        return sorted(out, key=lambda m: m.start)

    def _spelled(self, tok: str) -> str:
        """A misspelt name word ("microsfot", "nvidea", "goldmann") -> the one name word
        with the same first letter within edit distance 1 (2 for words of 8+ letters);
        other words unchanged."""
        if (
            len(tok) < FUZZY_MIN_LEN - 1
            or not tok.isascii()
            or not tok.isalpha()
            or tok in self.known_words
            or tok in STOPWORDS
            or tok in COMMON_WORDS
        ):
            return tok
        clipped = {w for w in self.name_words if len(w) >= len(tok) + 3 and w.startswith(tok)}
        if len(tok) >= 4 and len(clipped) == 1:
            return clipped.pop()  # an abbreviation of one name word ("semi", "auto")
        limit = 1 if len(tok) < 8 else 2
        best: list[tuple[int, str]] = []
        for w in self.name_words:
            if abs(len(w) - len(tok)) > limit or len(w) < FUZZY_MIN_LEN or w[0] != tok[0]:
                continue
            if len(tok) < FUZZY_MIN_LEN and len(w) != len(tok) + 1:
                continue  # a short word only by one dropped letter ("exon" -> "exxon")
            d = _edits(tok, w, limit)
            if d <= limit:
                best.append((d, w))
        if not best:
            return tok
        top = min(d for d, _ in best)
        words = {w for d, w in best if d == top}
        if len(words) > 1:  # "googel": "google" (a swap) over "googl" (the ticker)
            words = {w for w in words if len(w) == len(tok)} or words
        return words.pop() if len(words) == 1 else tok

    def _subset_at(
        self, toks: list[str], i: int, min_end: int, *, need_digit: bool = False
    ) -> Mention | None:
        """A span from ``i`` (ending at ``min_end`` or later) whose content words all
        occur in one entity's name, that entity's name being the closest such one
        ("Ministry of Finance" for "Ministry of Finance of the People's Republic of
        China"); None when no span or more than one entity fits."""
        if toks[i] in STOPWORDS or not toks[i].isascii():
            return None
        for j in range(min(len(toks), i + MAX_SPAN), min_end - 1, -1):
            span = toks[i:j]
            if span[-1] in STOPWORDS:
                continue
            content = {t for t in span if t.isascii() and t not in STOPWORDS}
            if len(content) < 2 or any(not t.isascii() for t in span):
                continue
            if need_digit and not any(c.isdigit() for t in span[min_end - 1 - i :] for c in t):
                continue
            fits = [(len(names - content), s) for names, s in self.names if content <= names]
            if not fits:
                continue
            best = min(extra for extra, _ in fits)
            ents = {s for extra, s in fits if extra == best}
            if len({s.key for s in ents}) == 1:
                return Mention(join(span), i, j, (min(ents, key=_sense_order),))
        return None


# Tenors in Chinese numerals ("十年期", "两年", "三十年").
_CN_NUMERALS = {1: ("一",), 2: ("二", "两"), 3: ("三",), 5: ("五",), 7: ("七",), 10: ("十",),
                20: ("二十",), 30: ("三十",)}  # fmt: skip
FUZZY_MIN_LEN = 5
# English words that are near some name and must not be "corrected" into it.
COMMON_WORDS = frozenset(
    "their there where which while whose about above below after before other under "
    "between average highest lowest value yield price rates share stock bonds issue issued "
    "listed today close opening range spread total count times since until month years "
    "weekly daily index level since point print change moved rises falls higher lower "
    "over under more less than with from into onto upon near just only also even much many "
    "most some each such same what when will would could should have were been being this "
    "that they them then here week year days time name names".split()
)


def _edits(a: str, b: str, limit: int) -> int:
    """Damerau-Levenshtein distance (adjacent swaps count 1), cut off above ``limit``."""
    prev2: list[int] | None = None
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb))
            if prev2 is not None and i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        if min(cur) > limit:
            return limit + 1
        prev2, prev = prev, cur
    return prev[-1]


def _other_forms(
    rows: list[dict[str, Any]], lex: Lexicon, trig: dict[str, Any], ontology: Ontology
) -> list[tuple[str, Sense]]:
    """Names people shorten or translate: a person's surname or given name when only one
    person has it ("Powell", "Jensen"), and a series' region word in the other language
    ("US CPI" -> "美国CPI")."""
    out: list[tuple[str, Sense]] = []
    parts: dict[str, set[str]] = {}
    regions = trig.get("region_words", {})
    for r in rows:
        eid = str(r.get("id") or "")
        e = lex.entities.get(eid)
        if not e:
            continue
        label = str(e["label"])
        sense = Sense("entity", eid, label, str(r.get("name") or eid))
        if any(
            lb in trig.get("name_parts_en", {}).get("concepts", [])
            for lb in ontology.ancestors(label)
        ):
            for part in str(r.get("name") or "").split():
                if len(part) >= 4 and part.isalpha():
                    parts.setdefault(part.lower(), set()).add(eid)
        words = regions.get(str(r.get("country") or ""), [])
        if label == "Indicator" and words:
            for n in [r.get("name"), *(r.get("aliases") or [])]:
                low = str(n or "").lower()
                for w in words:
                    if low.startswith(w + " ") or (not w.isascii() and low.startswith(w)):
                        rest = low[len(w) :].strip()
                        out.extend(
                            (f"{o}{'' if not o.isascii() else ' '}{rest}", sense) for o in words
                        )
    for part, ids in parts.items():
        if len(ids) == 1:
            eid = next(iter(ids))
            e = lex.entities[eid]
            out.append((part, Sense("entity", eid, str(e["label"]), str(e.get("name") or eid))))
    return out


def _bare_tenors(lex: Lexicon) -> list[tuple[str, Sense]]:
    """A tenor alone ("the 2-yr") names the one indicator whose names have that tenor,
    when only one has it."""
    owners: dict[str, set[str]] = {}
    months: dict[str, set[str]] = {}  # "3m": shared only (below), never a series alone
    for eid, e in lex.entities.items():
        if e.get("label") != "Indicator":
            continue
        for n in (e.get("name"), *(e.get("aliases") or [])):
            for t in lex.tokenizer.tokens(str(n or "")):
                if re.fullmatch(r"\d+y", t):
                    owners.setdefault(t, set()).add(eid)
                elif re.fullmatch(r"\d+m", t) and e.get("country"):
                    months.setdefault(t, set()).add(eid)
                if re.fullmatch(r"\d+[ym]", t) and e.get("country"):
                    lex.curve_index.setdefault((str(e["country"]), t), eid)
    out = []
    lex.shared_tenors = {t: sorted(ids) for t, ids in owners.items() if len(ids) > 1}
    lex.shared_tenors |= {t: sorted(ids) for t, ids in months.items() if len(ids) > 1}
    for tenor, ids in owners.items():
        if len(ids) == 1:
            eid = next(iter(ids))
            e = lex.entities[eid]
            out.append((tenor, Sense("entity", eid, "Indicator", str(e.get("name") or eid))))
    return out


def _short_forms(
    rows: list[dict[str, Any]], lex: Lexicon, trig: dict[str, Any]
) -> list[tuple[str, Sense]]:
    """How analysts clip names: the first two characters of a Chinese name ("宁德" for
    宁德时代, "招商" for 招商银行), the first four or more of a long one ("易方达蓝筹" for
    易方达蓝筹精选) and the first word of an English name ("Goldman", "Kweichow"), each only
    where no other entity's name contains it."""
    spec = trig.get("short_forms", {})
    labels, not_words = set(spec.get("labels", [])), set(spec.get("not_words", []))
    regions = [w for ws in trig.get("region_words", {}).values() for w in ws if not w.isascii()]
    texts: dict[str, str] = {}  # id -> all its names, for "no other name contains the clip"
    words: dict[str, set[str]] = {}
    for r in rows:
        eid = str(r.get("id") or "")
        names = [r.get("name"), r.get("name_zh"), r.get("short_name"), *(r.get("aliases") or [])]
        names = [n for n in names if isinstance(n, str) and n]
        texts[eid] = " ".join(names)
        for n in names:
            for w in re.findall(r"[A-Za-z]+", n.lower()):
                words.setdefault(w, set()).add(eid)

    def unique_cjk(clip: str, eid: str) -> bool:
        return not any(clip in t for k, t in texts.items() if k != eid)

    out: list[tuple[str, Sense]] = []
    for r in rows:
        eid = str(r.get("id") or "")
        e = lex.entities.get(eid)
        if not e:
            continue
        sense = Sense("entity", eid, str(e["label"]), str(r.get("name") or eid))
        zh = r.get("name_zh")
        for w in regions if isinstance(zh, str) else ():
            rest = zh[len(w) :]
            if (
                zh.startswith(w)
                and len(rest) >= 3
                and _CJK.fullmatch(rest)
                and unique_cjk(rest, eid)
            ):
                out.append((rest, sense))  # "中国人民银行" -> "人民银行" (not "CPI同比")
        for n in {r.get("short_name"), r.get("name_zh")}:  # "易方达蓝筹" for 易方达蓝筹精选
            if isinstance(n, str) and _CJK.fullmatch(n) and len(n) >= 5:
                out.extend((n[:k], sense) for k in range(4, len(n)) if unique_cjk(n[:k], eid))
        if e["label"] not in labels:
            continue
        for n in (r.get("short_name"), r.get("name_zh"), r.get("name")):
            if not isinstance(n, str) or not n:
                continue
            if _CJK.fullmatch(n[:4]) and unique_cjk(n[:2], eid):
                out.append((n[:2], sense))
            first = n.split()[0].lower() if n.isascii() and " " in n else ""
            if (
                len(first) >= 4
                and first.isalpha()
                and first not in STOPWORDS
                and first not in COMMON_WORDS
                and first not in not_words
                and words.get(first) == {eid}
            ):
                out.append((first, sense))
    return out


_LEVEL = re.compile(r"\s*(?:[ⅠⅡⅢⅣ]|\b(?:I{1,3}|IV))\s*$")


def _derived_names(
    name: Any, label: str, trig: dict[str, Any], ontology: Ontology | None = None
) -> list[str]:
    """Other ways people write a name: without a classification level ("证券Ⅲ" ->
    "证券", "Securities III" -> "Securities") and with the label's suffixes from
    ``triggers.toml`` ("银行" -> "银行业", "高股息" -> "高股息概念")."""
    if not isinstance(name, str) or not name:
        return []
    base = _LEVEL.sub("", name).strip() or name
    out = [base] if base != name else []
    labels = ontology.ancestors(label) if ontology is not None else [label]
    sep = next((trig["name_parts"][lb] for lb in labels if lb in trig.get("name_parts", {})), None)
    if sep and sep in base:
        out.append(base.rsplit(sep, 1)[-1])  # "杰罗姆·鲍威尔" -> "鲍威尔"
    for fmt in trig.get("derived_names", {}).get(label, []):
        out.append(fmt.format(base))
    return out


_NOT_VALUES = frozenset(
    {
        "id",
        "name",
        "name_zh",
        "short_name",
        "ticker",
        "code",
        "source",
        "partition",
        "label",
        "text",
        "title",
        "url",
        "content_hash",
        "raw_id",
        "superseded_by",
        "evidence",
    }
)
_KIND_ORDER = {"entity": 0, "value": 1, "relation": 2, "concept": 3, "property": 4}


def _sense_order(s: Sense) -> tuple[int, str, str]:
    return (_KIND_ORDER[s.kind], s.key, s.label)


def rows_from_result(result: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for r in result:
        props = dict(r["e"]) if isinstance(r.get("e"), Mapping) else {}
        props.pop("_labels", None)
        props["labels"] = list(r.get("labels") or [])
        out.append(props)
    return out
