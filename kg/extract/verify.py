"""Verification and canonicalization of proposed triples against their chunk (Chen et al.,
phase 3; FinReflectKG, CheckRules).

Every candidate, whoever proposed it, passes the same gate:

1. types and relation are mapped onto the ontology (aliases allowed); a triple that
   breaks the domain/range is tried reversed (relation direction check), else dropped;
2. abstract subjects ("we", "the Company", "本公司", "该行", "the Committee") become the
   document's main entity, or the triple is dropped when there is none;
3. names longer than five words are dropped (FinReflectKG's entity-length rule);
4. head and tail must occur in the chunk, literally or through a known alias (the alias
   dictionary's names and codes of the resolved entity; for the main entity also the
   self-references the chunk uses for it); otherwise the triple is dropped;
5. the evidence span must lie in the chunk and contain the tail (or head); a bad span is
   repaired to the sentence that names both, else the triple is dropped;
6. duplicates merge (same head, relation, tail).

What was dropped or repaired, and why, is counted in ``VerifyStats``.
"""

from __future__ import annotations

import copy
import logging
import re
from collections import Counter
from dataclasses import dataclass, field

from core.records import Triple
from kg.extract.deps_en import lexicon
from kg.extract.evidence import Issue, norm, sentence_of
from kg.extract.fastpath import HEADER_CHARS
from kg.extract.figures import header_period, normalise_period
from kg.extract.parties import (
    PARTY_RELATIONS,
    PARTY_TYPES,
    headline_parties,
    no_product,
    not_a_party,
    not_a_party_name,
    not_an_owner,
    other_owner,
    settle_party,
)
from kg.extract.regions import is_region
from kg.extract.table_periods import QUARTER_ORDINALS
from kg.extract.types import Candidate, DocContext
from kg.extract.zh import _jieba
from kg.graph.canonical import AliasIndex, MatchMethod, Resolution
from kg.graph.ontology import Ontology, default_ontology
from kg.graph.quantities import spelled_scales

MAX_WORDS = 5
_CJK = re.compile(r"[\u3400-\u9fff]")
# The gate's word lists are data (kg/data/extract_lexicon_en.json, validated at load by
# deps_en.Lexicon); the regexes made of them are built here once.
_LEX = lexicon()
# Abstract references that name the main entity when the document has one: Latin words
# whole, Chinese ones anywhere.
SELF_REFERENCES = re.compile(
    r"\b(?:"
    + "|".join(sorted(w for w in _LEX.self_references if w.isascii()))
    + r")\b|"
    + "|".join(sorted(w for w in _LEX.self_references if not w.isascii())),
    re.I,
)
# issues whose candidate the corrector drops
DROP_RULES = (
    "conflicting_values", "restated", "negated", "not_a_product", "not_an_owner", "not_a_party",
    "truncated_name", "not_a_risk", "not_a_law", "not_a_deal", "other_owner", "effect_as_level",
    "comparison_period", "not_a_name", "metric_cut", "scale_unknown", "not_a_region", "planned",
)  # fmt: skip
# an auxiliary or copula right after "X markets": "markets" is a noun there
_AUX = _LEX.alternation("auxiliaries") + r"\b"
CROSS_REFERENCE = _LEX.cues("cross_reference_cues")
HURT = _LEX.alternation("hurt_verbs") + r"\b"
CHANGE_VERB = _LEX.alternation("change_verbs")
# characters no name begins or ends with: quotes, punctuation, list bullets ("• Government")
NAME_EDGES = " ,;:\"'“”•▪·◦‣-–—"
# words that open the comparison of a figure: a period after them is the prior period's
# (lower case: a heading "FISCAL 2023 COMPARED TO FISCAL 2022" is no comparison of a figure)
COMPARISON = re.compile(r"\b(?:[Ff]rom|[Cc]ompared\s+(?:to|with)|versus|vs\.?)\s")
# a change named before the metric: "an increase in operating income of $3.7 billion"
CHANGE_NOUN = _LEX.alternation("change_nouns") + "s?"
# "... in operating income of $3.7 billion and [net income of $3.0 billion]": one listed before
_BEFORE_LISTED = (
    r"(?:(?:the\s+|our\s+)?(?:[\w-]+\s+){1,4}?of\s+\S+(?:\s+(?:"
    + "|".join(spelled_scales())  # the shared vocabulary's scale words
    + r"))?,?\s+and\s+)?"
)
LIST_SHAPES = frozenset({"kpi_years_respectively_en", "kpi_years_subject_en"})
_PERIOD_WORD = re.compile(r"quarter|year|annual|month|week|(?:19|20)\d\d", re.I)
# a period naming a quarter or half without its year ("Q4", "fourth quarter")
_QUARTER_ONLY = re.compile(
    r"^(?:Q(?P<q>[1-4])|(?P<w>first|second|third|fourth)(?:[- ]quarter)?|H(?P<h>[12]))$", re.I
)
_QUARTER_NAME = re.compile(r"^(?P<w>first|second|third|fourth)[- ]quarter\b", re.I)
_YEAR = re.compile(r"\b(?:19|20)\d{2}\b")
_SENT = re.compile(r"[^.!?。！？；\n]+[.!?。！？；]?")


def word_count(name: str) -> int:
    """Words of a name; a CJK name counts its jieba words (一个词 is not one character)."""
    if _CJK.search(name):
        return sum(1 for w in _jieba().cut(name) if w.word.strip())
    return len(name.split())


def is_abstract(name: str) -> bool:
    return norm(name).strip(" .,") in lexicon().abstract_references


_ASCII_ALNUM = re.compile(r"[0-9a-z]")


def is_placeholder(name: str, type_names: frozenset[str]) -> bool:
    """A schema word ("Tail", "Entity": the lexicon's ``placeholder_names``) or type name
    copied from the prompt as an entity name is no name at all."""
    n = norm(name).strip(" .,<>[]{}")
    return n in lexicon().placeholder_names or n in type_names


def contains(name_norm: str, text_norm: str) -> bool:
    """``name_norm`` in ``text_norm`` as whole words where its edges are Latin letters or
    digits ("Tail" is not in "retail"); CJK names match anywhere (no spaces between words)."""
    if not name_norm:
        return False
    start = text_norm.find(name_norm)
    while start >= 0:
        end = start + len(name_norm)
        left_ok = not (_ASCII_ALNUM.match(name_norm[0]) and start > 0
                       and _ASCII_ALNUM.match(text_norm[start - 1]))  # fmt: skip
        right_ok = not (_ASCII_ALNUM.match(name_norm[-1]) and end < len(text_norm)
                        and _ASCII_ALNUM.match(text_norm[end]))  # fmt: skip
        if left_ok and right_ok:
            return True
        start = text_norm.find(name_norm, start + 1)
    return False


@dataclass
class VerifyStats:
    proposed: int = 0
    kept: int = 0
    dropped: Counter[str] = field(default_factory=Counter)
    repaired: Counter[str] = field(default_factory=Counter)
    by_component: Counter[str] = field(default_factory=Counter)  # kept, per extractor
    issues: Counter[str] = field(default_factory=Counter)  # what the critic found, per rule
    rounds: int = 0  # reflection rounds run (critic + corrector)

    def merge(self, other: VerifyStats) -> None:
        self.issues.update(other.issues)
        self.rounds += other.rounds
        self.proposed += other.proposed
        self.kept += other.kept
        self.dropped.update(other.dropped)
        self.repaired.update(other.repaired)
        self.by_component.update(other.by_component)

    def as_dict(self) -> dict[str, object]:
        return {
            "proposed": self.proposed,
            "kept": self.kept,
            "dropped": dict(self.dropped),
            "repaired": dict(self.repaired),
            "kept_by_component": dict(self.by_component),
            "critic_issues": dict(self.issues),
            "reflection_rounds": self.rounds,
        }


@dataclass(slots=True)
class Verified:
    """A candidate that passed, with canonical types, ids and a valid evidence span."""

    cand: Candidate
    head_id: str
    tail_id: str
    head_new: bool
    tail_new: bool
    literal: bool  # both names occur literally (not only through an alias)


_HONORIFIC = re.compile(rf"^{_LEX.alternation('honorifics')}\.?\s+", re.I)
_NAME_NOISE = re.compile(rf"[^\w\s]|_|\b{_LEX.alternation('name_noise_words')}\b", re.I)


# "acquisition of X" (a subject rule's tail) and "X" (a deal pattern's) are one deal
_DEAL_LEAD = re.compile(
    r"^(?:the\s+)?(?:(?:previously\s+announced\s+)?(?:acquisition|purchase)\s+of|"
    r"to\s+(?:acquire|buy|purchase))\s+",
    re.I,
)


def fact_key(c: Candidate) -> tuple[str, str, str, str]:
    """The same fact however its names are dressed: honorifics, punctuation, 'the' and
    corporate suffixes do not make a second fact ("Mr. Coben" = "Coben")."""

    def k(name: str) -> str:
        return " ".join(_NAME_NOISE.sub(" ", _HONORIFIC.sub("", norm(name))).split())

    tail = _DEAL_LEAD.sub("", c.tail) if c.relation == "INVOLVED_IN" else c.tail
    return (k(c.head), c.relation, k(tail), str(c.props.get("period", "")))


def decision_key(v: Verified) -> tuple[str, str, str, str] | None:
    """A policy decision is one fact however often a story tells it: the same bank (by
    its resolved id: "the Federal Reserve" = "the Fed"), action and day ("cut interest
    rates" and "lowered a key interest rate by a quarter point")."""
    c = v.cand
    action = str(c.props.get("action", ""))
    if c.relation != "SETS_POLICY" or not action:
        return None
    when = str(c.props.get("date") or c.props.get("period") or "")
    return (v.head_id, c.relation, f"action:{action}", when)


def _nested(short: str, long: str) -> bool:
    """'Fed' in 'Chicago Fed' (whole words), '白宫国家经济委员会' in '美国白宫国家经济委员会'."""
    a, b = norm(short), norm(long)
    if a == b or len(a) >= len(b):
        return False
    if _CJK.search(a):
        return a in b
    return f" {a} " in f" {b} "


def nested_employers(triples: list[Triple]) -> list[Triple]:
    """One employer per person and document where the names nest: "Charles Evans
    EXECUTIVE_OF Chicago Fed" and "... EXECUTIVE_OF Fed" are one fact, the fuller name kept
    ("美国白宫国家经济委员会" over "白宫国家经济委员会")."""
    jobs = [t for t in triples if t.relation == "EXECUTIVE_OF"]
    drop = {
        id(t)
        for t in jobs
        for u in jobs
        if u is not t and norm(u.head) == norm(t.head) and _nested(t.tail, u.tail)
    }
    return [t for t in triples if id(t) not in drop]


log = logging.getLogger("livekg.extract.critique")
_SUFFIXED = (
    r"[A-Z][\w&.'-]*(?:\s+[A-Z][\w&.'-]*)*,?\s+" + _LEX.alternation("corporate_suffixes") + r"\.?"
)
_COMPOUND = re.compile(rf"{_SUFFIXED}\s+and\s+{_SUFFIXED}")
_COMPOUND_SPLIT = re.compile(r"(?<=\.)\s+and\s+|(?<=[a-z])\s+and\s+(?=[A-Z])")
_PERIOD = re.compile(
    r"(?:(?:three|six|nine|twelve)\s+months|(?:fiscal\s+)?(?:year|quarter))\s+ended\s+"
    r"[A-Z][a-z]+\s+\d{1,2},\s+\d{4}|(?:first|second|third|fourth)\s+quarter(?:\s+of)?"
    r"(?:\s+fiscal)?\s+\d{4}|fiscal(?:\s+year)?\s+\d{4}|FY\s?\d{2,4}|Q[1-4]\s+(?:FY)?\d{2,4}|"
    r"\d{4}年(?:第?[一二三四]季度|\d{1,2}月|上半年|下半年)?|\b(?:19|20)\d{2}\b"
)
_UNIT_AFTER = re.compile(
    r"^\s*(shares|units|employees|customers|subscribers|stores|vehicles|barrels)\b"
)
_FIGURE_KEYS = ("value", "amount", "val", "chg", "change", "value2", "low", "high", "cmp")


def _has_figure(c: Candidate) -> bool:
    return any(c.props.get(k) for k in _FIGURE_KEYS)


def _figure(c: Candidate) -> str:
    return "|".join(sorted({norm(str(c.props[k])) for k in _FIGURE_KEYS if c.props.get(k)}))


def _has_unit(c: Candidate) -> bool:
    if c.props.get("unit"):
        return True
    figures = [str(c.props.get(k, "")) for k in _FIGURE_KEYS if c.props.get(k)]
    return any(re.search(r"[$€£¥%]|percent|billion|million|bp|亿|万|RMB|Rs", f) for f in figures)


def _unit_after(text: str, c: Candidate) -> str:
    for k in _FIGURE_KEYS:
        value = str(c.props.get(k, ""))
        at = text.find(value, max(c.start, 0)) if value else -1
        if at >= 0:
            m = _UNIT_AFTER.match(text[at + len(value) : at + len(value) + 20])
            if m:
                return m.group(1)
    return ""


def header_year(ctx: DocContext, text: str) -> str:
    """The first four-digit year of the title and the chunk's opening (``HEADER_CHARS``),
    "" when none: the year a quarter named without one ("Q4") is given by the critic."""
    _, year = header_period(
        f"{ctx.title}\n{text[:HEADER_CHARS]}", lines=None, chars=None, bare_year=True
    )
    return year.removeprefix("FY")


def find_period(text: str, start: int, end: int) -> str:
    """The period a sentence (or a header) names, nearest first: an explicit 'three months
    ended ...', a quarter, a fiscal year, else a year."""
    if not text:
        return ""
    lo = text.rfind(".", 0, max(start, 0)) + 1 if start > 0 else 0
    hi = text.find(".", end) if end > 0 else -1
    window = text[lo : hi if hi > 0 else len(text)]
    m = _PERIOD.search(window)
    return m.group(0) if m else ""


def trim_headline_name(name: str, kind: str) -> str:
    """The name inside a run of capitalised headline words, or "" when none is left: cut
    before the first verb/auxiliary/question word (and, for a person, at a possessive:
    "Tidjane Thiam's Resignation" -> "Tidjane Thiam"); a company may also lose one such
    word before it ("Says Cipla" -> "Cipla", "How T-Mobile" -> "T-Mobile"). A person
    keeps at least two words, since one is too little to tell who."""
    lex = lexicon()
    name = re.sub(r"-(?:owned|based)$", "", name.strip())  # "Converse-owned" -> "Converse"
    words = name.replace("\u2019", "'").split()
    while words and words[0].casefold() in lex.function_words - {"the", "a"}:
        words.pop(0)  # "of Meetings With ..." -> "Meetings With ..."
    low = [w.casefold() for w in words]
    before: list[str] = []
    for w, lw in zip(words, low, strict=True):
        if lw in lex.headline_words:
            break
        if kind == "Person" and lw.endswith("'s"):
            before.append(w[:-2])
            break
        before.append(w)
    while before and before[-1].casefold() in lex.function_words:
        before.pop()  # "Medicines Company For" -> "Medicines Company"
    if kind == "Person":
        return " ".join(before) if len(before) >= 2 else ""
    if before:
        return " ".join(before)
    rest, rest_low = words[1:], low[1:]
    if not rest or any(w in lex.headline_words or w in lex.pronouns for w in rest_low):
        return ""
    return " ".join(rest) if all(w[:1].isupper() for w in rest) else ""


def _renamed(rule: str, name: str, kind: str) -> str:
    """A name with its headline noise cut ("" when nothing is left): an organisation noun
    before it (``org_noun_prefix``), a headline's verb after it (``headline_name``)."""
    if rule == "headline_name":
        return trim_headline_name(name, kind)
    name = re.sub(r"^UPDATE\s*\d*\s*-\s*", "", name)
    words = name.split()
    if len(words) > 1 and words[0].lower() in lexicon().org_nouns:
        name = " ".join(words[1:])
    return name


class Verifier:
    def __init__(self, ontology: Ontology | None = None, index: AliasIndex | None = None) -> None:
        self.ontology = ontology or default_ontology()
        self.index = index or AliasIndex(self.ontology)
        self._type_names = frozenset(
            norm(n)
            for n in (
                *(c.label for c in self.ontology.concepts),
                *(r.type for r in self.ontology.relations),
            )
        )

    # -- support ---------------------------------------------------------------------
    def names_for(self, name: str, label: str, ctx: DocContext) -> list[str]:
        """The name and its known aliases (alias dictionary; main entity's references)."""
        names = [name]
        res = self.index.resolve(name, label)
        if res.method != MatchMethod.NEW:
            names += [res.id, res.name]
        if ctx.main_entity and norm(name) in {norm(ctx.main_entity), *map(norm, ctx.aliases)}:
            names += [ctx.main_entity, *ctx.aliases]
        return names

    def occurs(self, name: str, label: str, text_norm: str, ctx: DocContext) -> tuple[bool, bool]:
        """(supported, literally): does the chunk name this entity?"""
        if contains(norm(name), text_norm):
            return True, True
        for alias in self.names_for(name, label, ctx)[1:]:
            if alias and len(alias) > 1 and contains(norm(alias), text_norm):
                return True, False
        if ctx.main_entity and norm(name).rstrip(".") == norm(ctx.main_entity).rstrip("."):
            if SELF_REFERENCES.search(text_norm):
                return True, False  # "we"/"the Company" in a document about the main entity
            if ctx.kind == "filing":
                return True, False  # the filer's own filing: the chunk is the filer speaking
        return False, False

    # -- reflection without a model: a critic of checks, a corrector of repairs ----
    def critique(self, cands: list[Candidate], text: str, ctx: DocContext) -> list[Issue]:
        """Every issue the checks find (FinReflectKG's critic, made of rules)."""
        issues: list[Issue] = []
        text_norm = norm(text)
        by_fact: dict[tuple[str, str, str, str], int] = {}
        for i, c in enumerate(cands):
            for side in ("head", "tail"):
                if is_abstract(getattr(c, side)):
                    issues.append(Issue(i, "subject_reference", side))
            if _COMPOUND.fullmatch(c.head) or _COMPOUND.fullmatch(c.tail):
                issues.append(Issue(i, "compound_name", c.head if _COMPOUND.fullmatch(c.head)
                                    else c.tail))  # fmt: skip
            check = self.ontology.check(c.head, c.head_type, c.relation, c.tail, c.tail_type)
            if not check.ok:
                back = self.ontology.check(c.tail, c.tail_type, c.relation, c.head, c.head_type)
                issues.append(Issue(i, "direction" if back.ok else "schema", str(check.reason)))
            for side in ("head", "tail"):
                name = getattr(c, side)
                if not is_abstract(name) and not self.occurs(name, "", text_norm, ctx)[0]:
                    issues.append(Issue(i, "unsupported", side))
            if c.relation == "DISCLOSES" and _has_figure(c):
                if not c.props.get("period") and not c.props.get("period2"):
                    issues.append(Issue(i, "period_missing", ""))
                if not _has_unit(c):
                    issues.append(Issue(i, "unit_missing", ""))
            key = fact_key(c)
            value = str(c.props.get("value") or c.props.get("amount") or c.props.get("val") or "")
            if key in by_fact and value:
                j = by_fact[key]
                other = str(cands[j].props.get("value") or cands[j].props.get("amount")
                            or cands[j].props.get("val") or "")  # fmt: skip
                if other and norm(other) != norm(value):
                    issues.append(Issue(i, "conflicting_values", f"{other} vs {value}"))
            elif value:
                by_fact[key] = i
        issues += self._restated(cands)
        issues += self._undone(cands, text)
        issues += no_product(cands)
        issues += not_an_owner(cands, text, self.index)
        issues += not_a_party(cands)
        issues += self._read_in_sentence(cands, text)
        issues += other_owner(cands, text, ctx)
        issues += self._figure_read(cands, text, ctx)
        issues += headline_parties(cands, text)
        issues += self._names_cut(cands, text, self.index)
        forward = lexicon().cues("forward_cues")
        issues += [
            Issue(i, "forward_looking", m.group(0))
            for i, c in enumerate(cands)
            if c.relation == "DISCLOSES" and _has_figure(c) and not c.props.get("kind")
            and c.end > c.start >= 0 and (m := forward.search(text[c.start : c.end]))
        ]  # fmt: skip
        return issues

    @staticmethod
    def _metric_cut(tail: str, sent: str, head: str = "", loose: bool = False) -> str:
        """The word before a metric's name in every mention, when it shows the name is the
        end of a longer one: a preposition ("total expense for its defined contribution
        plans", "the commercial portion of Linked In", "ROU asset pertaining to operating
        leases"), the last item of a list ("property, equipment and right-of-use assets",
        "operating leases and other short-term rental arrangements") or a capitalised word
        before a lower-case name ("Amortization expense for ..." read as "expense for ...").
        ``loose`` (the spaCy subject rule's one-noun metrics): also after "in" ("net
        reduction in sales") or a lower-case word of the name ("Membership fee revenue")."""
        if not tail or not sent:
            return ""
        lex, found = lexicon(), ""
        for m in re.finditer(rf"(?<![\w-]){re.escape(tail)}\b", sent):
            words = re.findall(r"[\w'’-]+", sent[: m.start()])
            while words and words[-1].lower() in lex.determiners:
                words.pop()
            prev = words[-1] if words else ""
            if prev.lower() in head.lower().split() or _PERIOD_WORD.search(prev):
                return ""  # the owner's name ("Hotel operating costs"), "Fourth-quarter"
            if prev.lower() in ("and", "or") and re.match(r"\w+ed\b", tail):
                return ""  # "... and paid dividends of": a verb phrase, not a list
            if loose:  # "net reduction in sales", "Membership fee revenue" read as "revenue"
                low = prev.lower()
                if low == "in" or (
                    prev[:1].islower()
                    and tail[:1].islower()
                    and low not in lex.metric_links | lex.metric_openers | lex.function_words
                    and not low.endswith("ed")
                ):
                    found = prev
                    continue
                return ""
            if prev.lower() in lex.metric_openers or (
                prev[:1].isupper()
                and tail[:1].islower()
                and prev.lower() not in lex.sentence_openers
            ):
                found = prev
                continue
            return ""
        return found

    @staticmethod
    def _figure_read(cands: list[Candidate], text: str, ctx: DocContext) -> list[Issue]:
        """A DISCLOSES figure read against its sentence (10-K prose, releases):
        a change stored as the level ("Revenue increased $13.6 billion") -> ``change_as_level``
        (kept as a change: ``measure`` change); the effect of something on a metric ("the
        effect ... was an increase in operating income of $3.7 billion") ->
        ``effect_as_level`` (dropped: neither the level nor the period's change); the period of
        the comparison ("grew 14% from $18.7 billion in fiscal 2022 to ...") given to the
        fact -> ``comparison_period`` (dropped); a quarter without its year ("Q4") or a
        "Fourth-quarter revenue" with only the year -> ``period_incomplete`` (the year of
        the document header is attached; without one the fact is left as it is)."""
        out: list[Issue] = []
        for i, c in enumerate(cands):
            if c.relation != "DISCLOSES" or not _has_figure(c) or c.end <= c.start:
                continue
            sent, tail = sentence_of(text, c.start, c.end), re.escape(c.tail)
            kind, period = str(c.props.get("kind", "")), str(c.props.get("period", ""))
            raw = str(c.props.get("raw") or c.props.get("value") or "")
            level = re.search(r"\d", raw) and not re.search(r"%|percent|basis point", raw)
            if c.props.get("measure") != "change" and kind != "prior" and level:
                fig = re.escape(raw)
                if re.search(
                    rf"\b(?:{CHANGE_VERB}|up|down)\s+(?:by\s+)?(?:approximately\s+)?{fig}", sent
                ):
                    out.append(Issue(i, "change_as_level", raw))
                    continue
                if re.search(
                    rf"\b{CHANGE_NOUN}\s+(?:in|to|on)\s+{_BEFORE_LISTED}"
                    rf"(?:[\w-]+\s+(?:and|&)\s+)?{tail}\s+of\s+(?:approximately\s+)?{fig}",
                    sent,
                    re.I,
                ):
                    out.append(Issue(i, "effect_as_level", raw))
                    continue
            span = text[c.start : c.end]
            said = span if Verifier._names_period(span, period) else sent
            # the shapes that name the words before a list of figures ("... was $127 million,
            # $98 million and $84 million in 2019, 2018 and 2017") cut long names
            cut = ""
            if c.rule in LIST_SHAPES:
                cut = Verifier._metric_cut(c.tail, sent, c.head)
            elif c.component.value == "nlp" and c.rule == "metric":  # the subject rule's noun
                cut = Verifier._metric_cut(c.tail, sent, c.head, loose=True)
            if cut:
                out.append(Issue(i, "metric_cut", cut))
                continue
            if (
                ctx.kind == "filing"
                and c.component.value != "table"  # a table's caption states its scale
                and c.props.get("unit") == "USD"
                and re.fullmatch(r"\(?\$\s?\d{2,3}(?:,\d{3})*\)?", raw.strip(" ,.;"))
            ):  # "$340" in a 10-K: in millions or thousands, said nowhere (as a table cell)
                out.append(Issue(i, "scale_unknown", raw))
                continue
            if period and kind != "prior" and Verifier._in_comparison(said, period):
                out.append(Issue(i, "comparison_period", period))
                continue
            if (
                _QUARTER_ONLY.match(period)
                or (
                    _QUARTER_NAME.match(c.tail)
                    and re.fullmatch(r"(?:FY\s?)?(?:19|20)\d{2}", period)
                )
            ) and header_year(ctx, text):
                out.append(Issue(i, "period_incomplete", period))
        return out

    @staticmethod
    def _names_period(text: str, period: str) -> bool:
        want = normalise_period(period)
        return any(normalise_period(p.group(0)) == want for p in _PERIOD.finditer(text))

    @staticmethod
    def _in_comparison(sent: str, period: str) -> bool:
        """Is ``period`` named in the sentence only after a comparison word ("from $18.7
        billion in fiscal 2022 to ...", "compared to $10.7 billion for fiscal 2022")?"""
        want = normalise_period(period)
        inside = outside = 0
        windows = []
        for m in COMPARISON.finditer(sent):
            rest = sent[m.end() : m.end() + 80]
            stop = re.search(r"\s(?:to|and)\s|[,;]", rest)
            windows.append((m.end(), m.end() + (stop.start() if stop else len(rest))))
        for p in _PERIOD.finditer(sent):
            if normalise_period(p.group(0)) != want:
                continue
            if any(a <= p.start() < b for a, b in windows):
                inside += 1
            else:
                outside += 1
        return inside > 0 and outside == 0

    @staticmethod
    def _cut_everywhere(
        c: Candidate, side: str, name: str, sent: str, modifiers: frozenset[str]
    ) -> bool:
        """Every mention of ``name`` in the sentence is part of a longer name."""
        found = False
        for m in re.finditer(rf"(?<![\w-]){re.escape(name)}\b", sent):
            found = True
            before = re.search(r"(?:^|\s)([\w'-]+)\s+(?:and|&)\s+$", sent[: m.start()])
            after = sent[m.end() :]
            cut = (
                (before is not None and before.group(1).lower() in modifiers)
                or (
                    c.relation == "COMPLIES_WITH"
                    and before is not None
                    and before.group(1)[:1].isupper()
                    and before.group(1).lower() not in lexicon().law_ends
                )
                or (
                    side == "tail"
                    and c.relation in ("COMPLIES_WITH", "IMPACTED_BY")
                    and "-" not in name
                    and re.match(r"\s+[A-Z][a-z]+\b", after) is not None
                )
            )
            if not cut:
                return False
        hyphen = re.search(rf"\w-{re.escape(name)}\b", sent) is not None
        return found or hyphen

    @staticmethod
    def _names_cut(cands: list[Candidate], text: str, index: AliasIndex) -> list[Issue]:
        """Names cut out of a longer name in the sentence: after a size word and "and"
        ("Small and Medium Business" -> "Medium Business"), after a hyphen ("air-to-ground
        systems" -> "ground systems"), a law's second half ("Dodd-Frank Wall Street Reform
        and Consumer Protection Act" -> "Consumer Protection Act") or a law or risk followed
        by more of its Title Case name ("Defense Federal Acquisition Regulation Supplement")
        -> ``truncated_name`` (dropped). A risk named with its place cut off ("the deadly
        conflict in Ukraine" -> "deadly conflict") -> ``risk_place`` (the place is put back).
        A company "name" of digits and single letters ("S B100.T", a cover page's
        code) the dictionary does not know -> ``not_a_name``."""
        lex, out = lexicon(), []
        for i, c in enumerate(cands):
            if c.end <= c.start:
                continue
            sent = sentence_of(text, c.start, c.end)
            for side in ("head", "tail"):
                name = getattr(c, side)
                kind = getattr(c, f"{side}_type")
                if (
                    kind in PARTY_TYPES
                    and re.search(r"\d", name)
                    and not re.search(r"[A-Za-z]{2}", name)
                ):
                    if index.resolve(name, kind).method == MatchMethod.NEW:
                        out.append(Issue(i, "not_a_name", name))
                        break
                if Verifier._cut_everywhere(c, side, name, sent, lex.drop_modifiers):
                    out.append(Issue(i, "truncated_name", name))
                    break
            else:
                if c.relation == "IMPACTED_BY" and " in " not in c.tail:
                    m = re.search(
                        rf"\b{re.escape(c.tail)}\s+in\s+(?:the\s+)?([A-Z][\w.-]*)(\s+[A-Z][\w-]*)?",
                        sent,
                    )
                    if m is None:
                        continue
                    one = m.group(1).rstrip(".")
                    two = f"{one}{m.group(2) or ''}".rstrip(".")
                    place = two if m.group(2) and is_region(two.lower()) else one
                    if is_region(place.lower()):
                        out.append(Issue(i, "risk_place", place))
        return out

    @staticmethod
    def _read_in_sentence(cands: list[Candidate], text: str) -> list[Issue]:
        """Checks of a triple against the words around its names in the evidence sentence
        (10-K prose, news): "X wins Y" (a contract, vote or prize: no acquisition);
        "Emerging markets are ..." (a noun, no make/sell verb); a metric cut
        out of a coordination ("Small and Medium Business revenues" -> "Medium Business
        revenues"); a risk that is a cross-reference ("... discussed above") or the thing
        a risk hurts ("our GPU business could be adversely affected"); a section heading
        read as a law ("Government Regulation"); a growth rate stored as the value ("grew
        14% ... to $21.3 billion": the percentage is the change)."""
        lex, out = lexicon(), []
        for i, c in enumerate(cands):
            if c.end <= c.start:
                continue
            sent = sentence_of(text, c.start, c.end)
            head, tail = re.escape(c.head), re.escape(c.tail)
            if c.relation == "INVOLVED_IN" and re.search(
                rf"{head}\s+(?:wins|won)\s+(?:\S+\s+){{0,3}}{tail}", sent, re.I
            ):
                out.append(Issue(i, "not_a_deal", c.tail))  # a contract, vote or prize won
            elif c.relation == "INVOLVED_IN" and re.search(
                rf"{tail}\s+(?:buys|acquires|to\s+buy|to\s+acquire)\b", sent, re.I
            ):  # "LVMH buys Tiffany, Charles Schwab buys ...": a buyer of its own clause
                out.append(Issue(i, "not_a_deal", c.tail))
            elif (
                c.relation == "INVOLVED_IN"
                and c.props.get("role") == "buyer"
                and re.search(rf"\bfrom\s+(?:the\s+)?{tail}", sent)
            ):  # "to acquire luxury dealerships from Park Place": the seller, not the target
                out.append(Issue(i, "not_a_deal", c.tail))
            elif (
                c.relation == "INVOLVED_IN"
                and c.head.lower().split()[-1:]
                and (c.head.lower().split()[-1] in lex.not_buyers)
            ):  # "3 Top Energy Stocks to Buy", "Notable Insider Buys"
                out.append(Issue(i, "not_a_deal", c.head))
            elif c.relation == "PRODUCES" and re.search(rf"{head}\s+markets\s+{_AUX}", sent):
                out.append(Issue(i, "not_a_product", c.tail))
            elif c.relation == "DISCLOSES" and re.search(
                rf"[A-Z][\w-]*\s+(?:and|&)\s+(?:{head}\s+)?{tail}\b", sent
            ):
                out.append(Issue(i, "truncated_name", c.tail))
            elif c.tail_type == "RiskFactor" and (
                CROSS_REFERENCE.search(c.tail)
                or re.search(rf"{tail}\s+(?:\w+\s+)?(?:be|been)\s+(?:\w+ly\s+){{0,3}}{HURT}", sent)
            ):
                out.append(Issue(i, "not_a_risk", c.tail))
            elif c.relation == "OPERATES_IN" and c.tail.lower() in lex.place_kinds:
                out.append(Issue(i, "place_kind", c.tail))  # "the State of Oregon"
            elif c.relation == "OPERATES_IN" and c.rule.endswith("_call") and not is_region(c.tail):
                out.append(Issue(i, "not_a_region", c.tail))  # "our folks in the field"
            elif c.relation == "COMPLIES_WITH" and all(
                w in lex.generic_rule_words for w in c.tail.lower().split()
            ):
                out.append(Issue(i, "not_a_law", c.tail))
            elif c.relation == "DISCLOSES" and str(c.props.get("value", "")).endswith("%"):
                value = re.escape(str(c.props["value"]))
                if re.search(rf"{tail}\s+(?:\w+\s+)?{CHANGE_VERB}\s+(?:by\s+)?{value}", sent):
                    out.append(Issue(i, "change_as_value", str(c.props["value"])))
        return out

    @staticmethod
    def _undone(cands: list[Candidate], text: str) -> list[Issue]:
        """A relation between two parties with a negation between their names in the
        evidence sentence is no fact (dropped); one under a hedge ("in talks to buy", "may
        launch") is kept with the hedge as the ``hedged`` attribute."""
        lex, out = lexicon(), []
        for i, c in enumerate(cands):
            if c.relation not in PARTY_RELATIONS or c.start < 0 or c.end <= c.start:
                continue
            if c.props.get("hedged"):
                continue
            sent = text[c.start : c.end].casefold()
            a, b = sent.find(c.head.casefold()), sent.find(c.tail.casefold())
            if a < 0 or b < 0:
                continue
            lo, hi = (a + len(c.head), b) if a < b else (b + len(c.tail), a)
            between = sent[lo:hi]
            if lex.cues("negation_cues").search(between):
                out.append(Issue(i, "negated", between.strip()[:60]))
            elif c.relation == "PRODUCES" and lex.cues("forward_cues").search(between):
                # "WellPoint, which plans to sell exchange-based insurance": a plan, no product
                out.append(Issue(i, "planned", between.strip()[:60]))
            elif lex.cues("hedge_cues").search(between):
                out.append(Issue(i, "hedged", between.strip()[:60]))
        return out

    @staticmethod
    def _restated(cands: list[Candidate]) -> list[Issue]:
        """The same figure of one sentence disclosed twice: once by a named owner ("LinkedIn
        revenue increased 10%") and once by the document's subject -> keep the owner's."""
        out: list[Issue] = []
        figures: dict[tuple[int, int, str], list[int]] = {}
        for i, c in enumerate(cands):
            if c.relation == "DISCLOSES" and _has_figure(c):
                figure = _figure(c)
                figures.setdefault((c.start, c.end, figure), []).append(i)
                figures.setdefault((-1, -1, figure), []).append(i)
        for idx in figures.values():
            if len({cands[i].head for i in idx}) > 1:
                for i in idx:
                    if cands[i].component.value != "pattern" and any(
                        cands[j].component.value == "pattern" for j in idx
                    ):
                        out.append(Issue(i, "restated", _figure(cands[i])))
        return out

    def correct(
        self,
        cands: list[Candidate],
        issues: list[Issue],
        text: str,
        ctx: DocContext,
        stats: VerifyStats,
    ) -> list[Candidate]:
        """Deterministic repairs: resolve the filer/subject, fix the direction, split
        compound names, attach the period from the sentence or the header, keep one of two
        conflicting values; what cannot be repaired is dropped."""
        drop: set[int] = set()
        extra: list[Candidate] = []
        order = {"subject_reference": 0, "direction": 1, "compound_name": 2}
        for issue in sorted(issues, key=lambda i: order.get(i.rule, 3)):
            c = cands[issue.index]
            rule = issue.rule
            if rule == "subject_reference":
                setattr(c, issue.detail, ctx.main_entity)
                setattr(c, f"{issue.detail}_type", ctx.main_type)
                stats.repaired["subject_reference"] += 1
            elif rule == "direction":
                c.head, c.tail = c.tail, c.head
                c.head_type, c.tail_type = c.tail_type, c.head_type
                stats.repaired["direction"] += 1
            elif rule == "compound_name":
                parts = [p.strip(" ,") for p in _COMPOUND_SPLIT.split(issue.detail) if p.strip()]
                side = "head" if c.head == issue.detail else "tail"
                for part in parts[1:]:
                    clone = copy.copy(c)
                    clone.props = dict(c.props)
                    setattr(clone, side, part)
                    extra.append(clone)
                setattr(c, side, parts[0])
                stats.repaired["compound_name"] += 1
            elif rule == "period_missing":
                period = find_period(text, c.start, c.end) or find_period(ctx.title, 0, 0)
                if period:
                    c.props["period"] = period
                    stats.repaired["period"] += 1
                else:  # a figure with no period is no fact (issue 28), as in tables
                    drop.add(issue.index)
                    stats.dropped["period_missing"] += 1
            elif rule == "unit_missing":
                unit = _unit_after(text, c)
                if unit:
                    c.props["unit"] = unit
                    stats.repaired["unit"] += 1
                else:
                    drop.add(issue.index)
                    stats.dropped["unit_missing"] += 1
            elif rule == "forward_looking":  # a forecast stays, as guidance
                c.props["kind"] = "guidance"
                stats.repaired["forward_looking"] += 1
            elif rule == "hedged":  # kept, marked: FIRE-kind text states talks as relations
                c.props["hedged"] = issue.detail
                stats.repaired["hedged"] += 1
            elif rule == "place_kind":  # "under the laws of the State of Oregon" -> Oregon
                sent = sentence_of(text, c.start, c.end)
                m = re.search(rf"\b{re.escape(c.tail)}\s+of\s+((?:[A-Z][\w.-]*\s?){{1,3}})", sent)
                if m is None:
                    drop.add(issue.index)
                    stats.dropped["place_kind"] += 1
                else:
                    c.tail = m.group(1).strip().rstrip(".,;")
                    stats.repaired["place_kind"] += 1
            elif rule == "change_as_value":  # "grew 14% from $18.7 billion to $21.3 billion"
                sent = sentence_of(text, c.start, c.end)
                after = sent[sent.find(issue.detail) + len(issue.detail) :]
                level = re.search(
                    r"\bto\s+(\$\s?[\d.,]+(?:\s+(?:billion|million|thousand))?)", after
                )
                c.props["change"] = issue.detail
                if level is None:
                    drop.add(issue.index)
                    stats.dropped["change_as_value"] += 1
                else:
                    c.props["value"] = level.group(1)
                    stats.repaired["change_as_value"] += 1
            elif rule == "change_as_level":  # "Revenue increased $13.6 billion": a change
                c.props["measure"] = "change"
                stats.repaired["change_as_level"] += 1
            elif rule == "period_incomplete":  # "Q4" -> "2022-Q4" from the header's year
                year = header_year(ctx, text)
                q = _QUARTER_ONLY.match(issue.detail) or _QUARTER_NAME.match(c.tail)
                if not year or q is None:
                    continue
                if issue.detail[:2].upper() != "FY" and _YEAR.fullmatch(issue.detail):
                    year = issue.detail  # "Fourth-quarter revenue", 2022
                g = q.groupdict()
                if g.get("h"):
                    c.props["period"] = f"{year}-H{g['h']}"
                else:
                    n = g.get("q") or QUARTER_ORDINALS[g["w"].lower()]
                    c.props["period"] = f"{year}-Q{n}"
                stats.repaired["period_incomplete"] += 1
            elif rule in ("org_noun_prefix", "headline_name"):
                # "Drugmaker Shire" -> "Shire"; "Susan Story Announces" -> "Susan Story"
                name = _renamed(rule, getattr(c, issue.detail), getattr(c, f"{issue.detail}_type"))
                if name:
                    setattr(c, issue.detail, name)
                (stats.repaired if name else stats.dropped)[rule] += 1
                drop.update(() if name else (issue.index,))
            elif rule == "risk_place":  # "deadly conflict" -> "deadly conflict in Ukraine"
                c.tail = f"{c.tail} in {issue.detail}"
                stats.repaired["risk_place"] += 1
            elif rule in DROP_RULES:
                drop.add(issue.index)
                stats.dropped[rule] += 1
        return [c for i, c in enumerate(cands) if i not in drop] + extra

    @staticmethod
    def _actionable(issue: Issue, cands: list[Candidate], ctx: DocContext) -> bool:
        """Issues the corrector can act on; the rest (unsupported, schema, an abstract
        subject with no document subject) are left to the gate, which drops and counts."""
        if issue.rule in ("unsupported", "schema"):
            return False
        if issue.rule == "subject_reference":
            return bool(ctx.main_entity)
        if issue.rule == "period_missing":
            return "period_source" not in cands[issue.index].props
        return True

    def reflect(
        self,
        cands: list[Candidate],
        text: str,
        ctx: DocContext,
        stats: VerifyStats,
        n_max: int = 3,
    ) -> list[Candidate]:
        """Critic and corrector until no issue remains or ``n_max`` rounds; each round is
        logged (``livekg.extract.critique``) and counted."""
        for round_no in range(1, n_max + 1):
            issues = [i for i in self.critique(cands, text, ctx) if self._actionable(i, cands, ctx)]
            if not issues:
                break
            stats.rounds += 1
            stats.issues.update(i.rule for i in issues)
            log.info(
                "critique round=%d doc=%s issues=%s", round_no, ctx.doc_id,
                dict(Counter(i.rule for i in issues)),
            )  # fmt: skip
            cands = self.correct(cands, issues, text, ctx, stats)
        for c in cands:
            c.props.pop("period_source", None)
        return cands

    # -- the gate --------------------------------------------------------------------
    def verify(
        self, cands: list[Candidate], chunk_text: str, ctx: DocContext, *, repair: bool = True
    ) -> tuple[list[Verified], VerifyStats]:
        stats = VerifyStats(proposed=len(cands))
        if repair and cands:
            cands = self.reflect(cands, chunk_text, ctx, stats)
        text_norm = norm(chunk_text)
        seen: dict[tuple[str, str, str, str], Verified] = {}
        raw_seen: set[tuple[str, ...]] = set()
        for c in cands:
            raw = (c.head, c.head_type, c.relation, c.tail, c.tail_type, str(c.props.get("period")))
            if raw in raw_seen:  # the same proposal twice: verify it once
                stats.dropped["duplicate"] += 1
                continue
            raw_seen.add(raw)
            reason = self._one(c, chunk_text, text_norm, ctx, stats, repair)
            if isinstance(reason, str):
                stats.dropped[reason] += 1
                continue
            key = decision_key(reason) or fact_key(reason.cand)
            if key in seen:
                stats.dropped["duplicate"] += 1
                if len(reason.cand.props) > len(seen[key].cand.props):
                    seen[key] = reason  # one decision told twice: the fuller telling
                continue
            seen[key] = reason
        out = list(seen.values())
        stats.kept = len(out)
        stats.by_component.update(v.cand.component.value for v in out)
        return out, stats

    def _one(
        self,
        c: Candidate,
        text: str,
        text_norm: str,
        ctx: DocContext,
        stats: VerifyStats,
        repair: bool,
    ) -> Verified | str:
        c.head, c.tail = c.head.strip(NAME_EDGES), c.tail.strip(NAME_EDGES)
        for side in ("head", "tail"):  # "Bank of America's": the owner's name
            if getattr(c, f"{side}_type") in PARTY_TYPES and getattr(c, side).endswith("'s"):
                setattr(c, side, getattr(c, side)[:-2])
        for side in ("head", "tail"):
            name = getattr(c, side)
            if is_abstract(name):
                if not (repair and ctx.main_entity):
                    return "subject_reference"
                setattr(c, side, ctx.main_entity)
                setattr(c, f"{side}_type", ctx.main_type)
                stats.repaired["subject_reference"] += 1
        if not c.head or not c.tail:
            return "empty_name"
        if is_placeholder(c.head, self._type_names) or is_placeholder(c.tail, self._type_names):
            return "placeholder"
        if norm(c.head) == norm(c.tail):
            return "self_loop"
        reason = not_a_party_name(c, text, ctx)
        if reason:
            return reason
        reason = settle_party(c, text)
        if reason:
            return reason
        if word_count(c.head) > MAX_WORDS or word_count(c.tail) > MAX_WORDS:
            return "entity_length"
        check = self.ontology.check(c.head, c.head_type, c.relation, c.tail, c.tail_type)
        if not check.ok and repair:
            back = self.ontology.check(c.tail, c.tail_type, c.relation, c.head, c.head_type)
            if back.ok:
                c.head, c.tail = c.tail, c.head
                c.head_type, c.tail_type = c.tail_type, c.head_type
                check = back
                stats.repaired["direction"] += 1
        if not check.ok:
            return f"schema:{check.reason.value if check.reason else 'invalid'}"
        assert check.head_label and check.tail_label and check.relation
        c.head_type, c.tail_type, c.relation = check.head_label, check.tail_label, check.relation
        h_ok, h_lit = self.occurs(c.head, c.head_type, text_norm, ctx)
        t_ok, t_lit = self.occurs(c.tail, c.tail_type, text_norm, ctx)
        if not (h_ok and t_ok):
            return "unsupported"
        if not self._span_ok(c, text):
            if not repair:
                return "bad_span"
            span = self._find_span(c, text)
            if span is None:
                return "bad_span"
            c.start, c.end = span
            stats.repaired["span"] += 1
        h = self.index.resolve(c.head, c.head_type)
        t = self.index.resolve(c.tail, c.tail_type)
        h = self._ref(c, "head_ref", h)
        t = self._ref(c, "tail_ref", t)
        if repair and h.method != MatchMethod.NEW:
            c.head_type = h.label
        if repair and t.method != MatchMethod.NEW:
            c.tail_type = t.label
        return Verified(c, h.id, t.id, not h.canonical, not t.canonical, h_lit and t_lit)

    def _ref(self, c: Candidate, key: str, res: Resolution) -> Resolution:
        """A pattern's link to a known entity id (``refs`` in the pattern data) wins over
        name resolution when the dictionary has that id."""
        ref = str(c.props.get(key, ""))
        entry = self.index.get(ref) if ref and res.method == MatchMethod.NEW else None
        if entry is None:
            return res
        return Resolution(entry.id, entry.label, entry.name, MatchMethod.ID)

    @staticmethod
    def _span_ok(c: Candidate, text: str) -> bool:
        if not (0 <= c.start < c.end <= len(text)):
            return False
        ev = norm(text[c.start : c.end])
        return norm(c.tail) in ev or norm(c.head) in ev

    @staticmethod
    def _find_span(c: Candidate, text: str) -> tuple[int, int] | None:
        tail, head = norm(c.tail), norm(c.head)
        best: tuple[int, int] | None = None
        for m in _SENT.finditer(text):
            s = norm(m.group(0))
            if tail in s and head in s:
                return m.span()
            if best is None and (tail in s or head in s):
                best = m.span()
        return best
