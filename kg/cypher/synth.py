"""Cypher synthesis (FinQA, "Cypher Synthesis"): variable alignment and clause
combination of the parsing units into candidate queries.

A question's mentions (``lexicon``) and units (``units``) are read into a ``Frame``:
the anchors (linked entities), the concepts named, the relation, property and value
words, the aggregation, comparisons and time window. Every reading the schema allows
becomes a ``Candidate`` (Cypher + parameters + a plain-language description for
ranking + a prior from how much of the question it uses). Labels, relationship types
and property names come only from the ontology and the graph's own keys, so they may
be written into the query; every value travels as a parameter. Every query ends in a
LIMIT, and none writes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import cache
from itertools import pairwise
from typing import Any

from kg.cypher.lexicon import (
    STOPWORDS,
    Lexicon,
    Mention,
    Sense,
    _normalize,
    _singular,
    trigger_regex,
    triggers,
)
from kg.cypher.shapes import ShapeName as S
from kg.cypher.shapes import render, shape
from kg.cypher.units import Comparison, TimeWindow, Units
from kg.graph.ontology import Ontology, default_ontology

ROW_LIMIT = 200
_WH = re.compile(r"\b(which|what|who|whom|list|name|show)\b|哪|什么|谁|列出|有哪些", re.I)
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_WHICH_NAMED = re.compile(
    r"\bwhich (one|of (the|them|these|those|the two))\b|\b(either|or)\b.{0,40}\bwhich\b"
    r"|哪个|哪一个|哪家|哪一家|哪只|谁",
    re.I,
)
_WHICH = re.compile(r"\b(which|what indicator|which one)\b|哪个|哪一个|哪只|哪项", re.I)
# Relations that make a node a group of members ("companies in the banks industry").
_MEMBERSHIP = frozenset({"BELONGS_TO"})
_CJK_TOKEN = re.compile(r"[\u3400-\u9fff]+")
# "what bond has ...": a question for entities, unlike "what is the longest tenor"
_WHAT_NOUN = re.compile(r"\bwhat\s+(?!is\b|was\b|are\b|were\b|'s\b|s\b)[a-z]+", re.I)
_NUMS = {
    **{w: i for i, w in enumerate("zero one two three four five six seven eight nine ten".split())},
    **{w: i for i, w in enumerate("零一二三四五六七八九十")},
    "两": 2,
}


def _folds(xs: str) -> dict[str, str]:
    """Aggregates over a Cypher list variable (one value per day, the last n points)."""
    return {
        "max": f"reduce(m = {xs}[0], x IN {xs} | CASE WHEN x > m THEN x ELSE m END)",
        "min": f"reduce(m = {xs}[0], x IN {xs} | CASE WHEN x < m THEN x ELSE m END)",
        "avg": f"reduce(s = 0.0, x IN {xs} | s + x) / size({xs})",
        "change": f"{xs}[size({xs}) - 1] - {xs}[0]",
    }


_AGG_SHAPES = {
    "count": S.SERIES_COUNT,
    "max": S.SERIES_MAX,
    "min": S.SERIES_MIN,
    "avg": S.SERIES_AVG,
    "change": S.SERIES_CHANGE,
    "first": S.SERIES_FIRST,
}


@dataclass
class Candidate:
    cypher: str
    params: dict[str, Any]
    description: str
    prior: float
    kind: str  # series | attribute | entities | describe
    anchors: list[str] = field(default_factory=list)
    score: float = 0.0
    # False for a guess: an entity set that uses no relation word, value or filter of the
    # question (only run when every content word of the question is accounted for)
    supported: bool = True
    # an empty result is the answer ("ICBC和招行哪个在深交所上市": neither), when it runs first
    conclusive: bool = False


@dataclass
class Frame:
    question: str
    anchors: list[Sense]
    concepts: list[str]  # concept labels named, in order
    relations: list[str]
    properties: list[str]
    values: list[Sense]
    units: Units
    wh: bool
    spread: bool
    target: str | None = None  # the concept named right after a question word
    same_as: bool = False
    when: bool = False
    negated: frozenset[str] = frozenset()  # anchor ids and value keys ("prop=value") excluded
    include_anchor: bool = False  # "CCB included"
    most: str | None = None  # "max" | "min": the group with the most (fewest) members
    top: tuple[int, str] | None = None  # (n, "DESC"|"ASC"): top-n points then average
    last_n: int | None = None  # the last n points by time
    compare: str | None = None  # "max" | "min": which of the named ones is higher (lower)
    daily: str | None = None  # "close" | "open": one value per day, then the aggregate
    range_agg: bool = False  # high minus low
    known_at: int | None = None  # knowledge time (epoch ms): facts recorded by then only
    uncovered: tuple[str, ...] = ()  # content words no mention or trigger accounts for
    explain: bool = False  # "why ...", "怎么看": an explanation, not rows
    fall: bool = False  # a change asked as a fall ("跌了多少"): the drop, positive
    anchor_at: dict[str, int] = field(default_factory=dict)  # anchor id -> token end
    compare_at: tuple[int, ...] = ()  # token index of each comparison (units order)
    periods: bool = False  # "on the days / in the months when ...": a filter over periods
    in_bp: bool = False  # the answer asked in basis points (a value in per cent x 100)
    mom: bool = False  # month-on-month (环比): each reading minus the one before it
    point_time: str | None = None  # "day" | "month": the question asks when (which day)
    # relations named with no entity or value after them ("have a CEO on record", "没有CEO
    # 记录", "don't belong to any theme"): (relation, negated) - an edge that must (not) exist
    bare_relations: tuple[tuple[str, bool], ...] = ()
    # anchors named as alternatives ("in either Liquor or Insurance", "银行或证券行业"):
    # first anchor id -> every id of the group (one constraint, any of them)
    either: dict[str, list[str]] = field(default_factory=dict)
    # the mentions in order: ("E", entity id, label), ("C", concept), ("R", relation)
    sequence: tuple[tuple[str, ...], ...] = ()
    direction: str | None = None  # "up" | "down": the changes a count asks for
    prefix: tuple[str, str] | None = None  # (property, first characters): "code starts with 60"
    rank: int | None = None  # "the second most": the k-th level of a ranking

    @property
    def agg(self) -> str | None:
        return self.units.aggregation


_PARTITIVE = (["of", "the"], ["among", "the"], ["of", "all"], ["among", "all"])


def _wh_target(tokens: list[str], mentions: list[Mention]) -> str | None:
    wh = set(triggers()["wh"]["tokens"])
    roles = triggers()["role_nouns"]
    positions = [i for i, t in enumerate(tokens) if t in wh]
    ends = {m.end: {s.label for s in m.of("entity")} for m in mentions if m.of("entity")}
    concepts = [
        (m.start, s.key)
        for m in mentions
        if not m.of("entity")
        for s in m.of("concept")
        if s.key not in ends.get(m.start, set())  # "the AI theme": part of the name
    ]
    members = triggers()["member_suffix"]
    concepts += [  # "liquor stocks", "白酒股": the group's members are the things named
        (m.start, label)
        for m in mentions
        if m.of("entity") and m.of("entity")[0].label in members["groups"]
        for label, words in members["labels"].items()
        if any(m.text.split()[-1] == w or (not w.isascii() and m.text.endswith(w)) for w in words)
    ]
    concepts += [
        (m.start, roles[s.key])
        for m in mentions
        if not m.of("entity") and not m.of("concept")
        for s in m.of("relation")
        if s.key in roles
    ]
    for p in positions:
        after = [c for c in concepts if c[0] >= p]
        if after:
            return min(after)[1]
    if positions:  # "...的行业有几个": the question word ends the question
        before = [c for c in concepts if c[0] < positions[-1]]
        whole = [c for c in before if tokens[max(0, c[0] - 2) : c[0]] in _PARTITIVE]
        if whole:  # "of the indicators that track a bond, which one ...": the indicators
            return min(whole)[1]
        if before:
            return max(before)[1]
    elif concepts:  # search-box phrasing ("ceos of AI theme companies", "特斯拉CEO")
        heads = [c for c in concepts if c[0] > 0 and tokens[c[0] - 1] == "的"]
        if heads:  # "跟踪国债的指标 周四收盘的最高值": "A的B" is about B
            return max(heads)[1]
        return min(concepts)[1]
    return None


def read_frame(question: str, tokens: list[str], mentions: list[Mention], units: Units) -> Frame:
    anchors: list[Sense] = []
    concepts: list[str] = []
    relations: list[str] = []
    properties: list[str] = []
    values: list[Sense] = []
    rel_values: list[Sense] = []
    prev: Mention | None = None
    for m in mentions:
        ents = m.of("entity")
        # "the EV theme", "semis industry": the concept word is part of the name before it
        named_kind = prev is not None and prev.end == m.start and prev.of("entity")
        kind_of_prev = {s.label for s in prev.of("entity")} if named_kind and prev else set()
        prev = m
        if ents:
            if ents[0].key not in {a.key for a in anchors}:
                anchors.append(ents[0])
        elif any(s.key in kind_of_prev for s in m.of("concept")) and not m.of("relation"):
            continue
        else:
            if m.of("relation"):
                rel_values.extend(m.of("value"))  # "CEO": the relation, a role only alone
            else:  # "daily close": a period's value, not the frequency "daily"
                after = tokens[m.end] if m.end < len(tokens) else ""
                period = after in triggers()["daily_pick_words"]["words"]
                values.extend(v for v in m.of("value") if not (period and v.key == "frequency"))
            concepts.extend(s.key for s in m.of("concept") if s.key not in concepts)
        relations.extend(s.key for s in m.of("relation") if s.key not in relations)
        properties.extend(s.key for s in m.of("property") if s.key not in properties)
    if not anchors:
        values.extend(rel_values)
    trig = triggers()

    def hit(pats: list[str]) -> re.Match[str] | None:
        for p in pats:
            m = trigger_regex(p).search(question)
            if m:
                return m
        return None

    same = hit(trig["same_as"]["patterns"]) is not None
    when = hit(trig["when"]["patterns"]) is not None
    most = "max" if hit(trig["most"]["max"]) else ("min" if hit(trig["most"]["min"]) else None)
    top: tuple[int, str] | None = None
    for key, order in (("patterns", "DESC"), ("bottom", "ASC")):
        m = hit(trig["top_n"][key])
        if m and top is None:
            n = m.group("n").lower()
            top = (int(n) if n.isdigit() else _NUMS.get(n, 0), order)
    daily = next((k for k in _DAILY_PICKS if hit(trig["daily"].get(k, []))), None)
    if hit(trig["close_vs_open"]["up"]) or hit(trig["close_vs_open"]["down"]):
        daily = "close_open"
    ln = hit(trig["last_n"]["patterns"])
    last_n = None
    if ln:
        n = ln.group("n").lower()
        last_n = int(n) if n.isdigit() else _NUMS.get(n)
    bare = _bare_relations(question, tokens, mentions)
    target = _wh_target(tokens, mentions)
    roles = trig["role_nouns"]
    who = re.search(r"\b(who|whom)\b|谁", question, re.I) is not None
    onto = default_ontology()
    role_of = [roles.get(r) for r, _neg in bare if r in roles]
    if not who and target and any(onto.is_a(target, x) or onto.is_a(x, target) for x in role_of):
        target = next((c for c in concepts if c != target), target)  # "有几家没有CEO记录"
    if any(r == f"*{target}" for r, _neg in bare):  # "不属于任何主题的公司": not the theme
        target = next((c for c in concepts if c != target), target)
    if not same and target is not None:  # "companies in Goldman Sachs's industry"
        same = _possessed_group(tokens, mentions, target)
    cvo = trig["close_vs_open"]
    if hit(cvo["up"]) or hit(cvo["down"]):  # close minus open, against zero
        op = ">" if hit(cvo["up"]) else "<"
        units = replace(units, comparisons=(Comparison(op, 0.0, 0),))
    anchor_at: dict[str, int] = {}
    for m in mentions:
        for e in m.of("entity")[:1]:
            anchor_at.setdefault(e.key, m.end)
    pm = hit(trig["prefix"]["patterns"])
    prefix = None
    if pm:
        prop = next((p for p in properties if p in _PREFIX_PROPS), "code")
        prefix = (prop, pm.group("v").upper())
    return Frame(
        question,
        anchors,
        concepts,
        relations,
        properties,
        values,
        units,
        bool(_WH.search(question)),
        hit(trig["spread"]["patterns"]) is not None,
        target,
        same,
        when,
        negated=_negated(tokens, mentions),
        bare_relations=bare,
        either=_alternatives(tokens, mentions),
        sequence=_sequence(tokens, mentions),
        include_anchor=hit(trig["include_anchor"]["patterns"]) is not None,
        most=most,
        top=top if top and top[0] > 0 else None,
        daily=daily,
        range_agg=hit(trig["range_agg"]["patterns"]) is not None,
        last_n=last_n or None,
        compare="max"
        if hit(trig["compare"]["max"])
        else ("min" if hit(trig["compare"]["min"]) else None),
        uncovered=_uncovered(question, tokens, mentions),
        explain=hit(trig["explain"]["patterns"]) is not None,
        fall=hit(trig["fall"]["patterns"]) is not None,
        anchor_at=anchor_at,
        compare_at=tuple(_token_at(question, tokens, c.pos) for c in units.comparisons),
        periods=hit(trig["periods"]["patterns"]) is not None,
        in_bp=hit(trig["answer_bp"]["patterns"]) is not None,
        mom=hit(trig["mom"]["patterns"]) is not None,
        point_time="day"
        if hit(trig["point_time"]["day"])
        else ("month" if hit(trig["point_time"]["month"]) else None),
        direction="up"
        if hit(trig["direction"]["up"])
        else ("down" if hit(trig["direction"]["down"]) else None),
        prefix=prefix,
        rank=2 if hit(trig["rank"]["second"]) else (3 if hit(trig["rank"]["third"]) else None),
    )


_PREFIX_PROPS = ("code", "ticker")


def _token_at(question: str, tokens: list[str], pos: int) -> int:
    """How many tokens start before character ``pos`` of the normalized question (tokens
    found in order; a rewritten token, "10-year" -> "10y", stays at the last place found)."""
    text = _normalize(question)
    cursor = 0
    n = 0
    for t in tokens:
        at = text.find(t, cursor)
        if at >= 0:
            cursor = at + len(t)
        else:
            at = cursor
        if at >= pos:
            break
        n += 1
    return n


def _trigger_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of the normalized question that some trigger pattern matches."""
    trig = triggers()
    pats: list[str] = []
    for table in ("aggregations", "comparisons", "times"):
        for item in trig.get(table, []):
            pats.extend(item["patterns"])
    for key in (
        "value_words",
        "same_as",
        "when",
        "include_anchor",
        "range_agg",
        "spread",
        "answer_bp",
        "pair_names",
        "prefix",
    ):
        pats.extend(trig[key]["patterns"])
    pats.extend(trig["dates"]["patterns"])
    for key in ("most", "daily", "top_n"):
        for v in trig[key].values():
            pats.extend(v)
    for group in trig["same_as_group"].values():
        pats.extend(group)
    pats.extend(trig["filler"]["patterns"])
    return [m.span() for p in pats for m in trigger_regex(p).finditer(text)]


def _uncovered(question: str, tokens: list[str], mentions: list[Mention]) -> tuple[str, ...]:
    covered = {i for m in mentions for i in range(m.start, m.end)}
    trig = triggers()
    skip = set(trig["wh"]["tokens"]) | set(trig["negation"]["tokens"]) | set(STOPWORDS)
    text = _normalize(question)
    spans = _trigger_spans(text)
    # the rest of a named entity's name ("Exxon Mobil" for ExxonMobil): not new content
    named = " ".join(s.name for m in mentions for s in m.of("entity")).lower().replace(" ", "")
    out = []
    for i, t in enumerate(tokens):
        if i in covered or t in skip or is_negation(t) or t.isdigit() or len(t) < 2:
            continue
        if len(t) >= 3 and t in named:
            continue
        if t.isascii() and len(t) < 3:
            continue
        pos = text.find(t)
        if pos >= 0 and any(a <= pos < b for a, b in spans):
            continue
        if any(t in text[a:b] for a, b in spans):
            continue
        out.append(t)
    return tuple(out)


def spread_anchors(question: str, entities: dict[str, dict[str, Any]]) -> list[Sense]:
    """The two series a curve-spread name stands for ("2s10s" = the 10Y, then the 2Y)."""
    spec = triggers()["spread_names"]
    for p in spec["patterns"]:
        m = trigger_regex(p).search(question)
        if not m:
            continue
        out = []
        for n in (m.group("b"), m.group("a")):
            eid = spec["series"].format(n=int(n))
            e = entities.get(eid)
            if e is None:
                return []
            out.append(
                Sense("entity", eid, str(e.get("label") or "Indicator"), str(e.get("name") or eid))
            )
        return out
    return []


_PAIR_NUMS = {"一": 1, "二": 2, "两": 2, "三": 3, "五": 5, "七": 7, "十": 10, "三十": 30}


def pair_anchors(question: str, entities: dict[str, dict[str, Any]]) -> list[Sense]:
    """The two regions' series of one tenor a pair name stands for ("中美10年" = the US
    10Y, then the CN 10Y; reversed by "中减美")."""
    spec = triggers()["pair_names"]
    text = _normalize(question)
    for p in spec["patterns"]:
        m = trigger_regex(p).search(text)
        if not m:
            continue
        raw = m.group("n")
        n = int(raw) if raw.isdigit() else _PAIR_NUMS.get(raw, 0)
        out = []
        for pattern in spec["series"]:
            e = entities.get(pattern.format(n=n))
            if e is None:
                return []
            eid = pattern.format(n=n)
            out.append(
                Sense("entity", eid, str(e.get("label") or "Indicator"), str(e.get("name") or eid))
            )
        return out[::-1] if _any(spec["reverse"], text) else out
    return []


def _asks(op: str, question: str) -> bool:
    """Whether any trigger of aggregation ``op`` occurs (not only the first one that wins)."""
    pats = [p for a in triggers()["aggregations"] if a["op"] == op for p in a["patterns"]]
    return _any(pats, _normalize(question))


def _any(patterns: list[str], text: str) -> bool:
    return any(trigger_regex(p).search(text) for p in patterns)


@cache
def _negation_stems() -> frozenset[str]:
    """The negation words as the tokenizer writes them ("excluding" -> "exclud")."""
    return frozenset(_singular(w) for w in triggers()["negation"]["tokens"])


def is_negation(token: str) -> bool:
    """A negation word, or a Chinese word that starts with one ("不在", "没有在", "非银")."""
    neg = triggers()["negation"]
    if token in neg["tokens"] or token in _negation_stems():
        return True
    if token in neg["not_negations"]:
        return False
    return bool(_CJK_TOKEN.fullmatch(token)) and token[:1] in neg["prefixes"] and len(token) <= 3


def _negated(tokens: list[str], mentions: list[Mention]) -> frozenset[str]:
    """Entity ids and ``prop=value`` keys with a negation word shortly before them."""
    neg = triggers()["negation"]
    window = int(neg["window"])
    out: set[str] = set()
    plain: set[str] = set()
    subjects, used = _negated_subjects(tokens, mentions)
    joins = {*triggers()["either"]["tokens"], "and", "nor", "和", "与", "及", "、", ",", "，"}
    named = [x for x in mentions if x.of("entity") or x.of("value")]
    for m in mentions:
        # the few words before the mention, not counting "the", "in", "t" ("aren't in the AI")
        before = [
            i
            for i, t in enumerate(tokens[: m.start])
            if not (t in STOPWORDS or (t.isascii() and len(t) < 2) or i in used)
        ][-window:]
        negs = [i for i in before if is_negation(tokens[i])]
        if negs:  # "除了比亚迪 新能源汽车概念...": a name between takes the negation, unless
            # the two are a list of one kind ("not BYD or CATL", "不含比亚迪、宁德时代")
            between = [x for x in named if negs[-1] < x.start and x.end <= m.start]
            if between and not (
                _kind(between[-1]) == _kind(m)
                or any(t in joins for t in tokens[between[-1].end : m.start])
            ):
                negs = []
        keys = [s.key for s in m.of("entity")[:1]] + [f"{v.key}={v.label}" for v in m.of("value")]
        (out if negs else plain).update(keys)
    # "the Fed ..., not counting the Fed": named plainly too, so it only excludes itself
    return frozenset((out - plain) | subjects)


def _possessed_group(tokens: list[str], mentions: list[Mention], target: str) -> bool:
    """A member's group named by possession ("companies in Goldman Sachs's industry", "share
    Ping An Bank's industry", "平安银行所在行业的公司") when the members are asked, not the group:
    the same group as that member."""
    groups = triggers()["same_as_group"]
    for m1, m2 in pairwise(mentions):
        ents = m1.of("entity")
        if not ents or ents[0].label in groups or not m2.of("concept"):
            continue
        gap = tokens[m1.end : m2.start]
        group = m2.of("concept")[0].key
        if group in groups and group != target and gap in (["s"], ["的"], ["所在"], ["所在", "的"]):
            return True
    return False


def _kind(m: Mention) -> str:
    """An entity mention's label or a value mention's property: what a list shares."""
    ents, vals = m.of("entity"), m.of("value")
    return ents[0].label if ents else (vals[0].key if vals else "")


def _negated_subjects(tokens: list[str], mentions: list[Mention]) -> tuple[set[str], set[int]]:
    """ "companies E Fund Blue Chip does NOT hold", "张坤的基金没有持有的深交所股票": a negated
    relation word with no object named after it (nothing, or a Chinese "的" that makes it a
    clause about what follows) negates the entity named before it, its subject. Returns
    those ids and the token positions of the negation words they used."""
    window = int(triggers()["negation"]["window"])
    wh = {*triggers()["wh"]["tokens"], "many", "much"}
    out: set[str] = set()
    used: set[int] = set()
    for k, m in enumerate(mentions):
        if not m.of("relation") or m.of("entity") or k == 0:
            continue
        nxt = mentions[k + 1] if k + 1 < len(mentions) else None
        clause = m.end < len(tokens) and tokens[m.end] == "的"
        if (
            nxt is not None
            and not clause
            and (nxt.of("entity") or nxt.of("value") or nxt.of("concept"))
        ):
            continue  # "do not hold Moutai", "not held by any fund": the object's side
        before = [
            i
            for i, t in enumerate(tokens[: m.start])
            if not (t in STOPWORDS or (t.isascii() and len(t) < 2))
        ][-window:]
        negs = [i for i in before if is_negation(tokens[i])]
        j = next((j for j in range(k - 1, -1, -1) if mentions[j].of("entity")), None)
        if not negs or j is None or mentions[j].end > negs[-1]:
            continue
        subject = mentions[j]
        if any(x.start > negs[-1] and (x.of("entity") or x.of("value")) for x in mentions[:k]):
            continue  # "没在深交所上市": the object named between, as Chinese orders it
        gap = tokens[subject.end : m.start]
        if any(x.of("relation") for x in mentions[j + 1 : k]) or any(t in wh for t in gap):
            continue  # "美国上市的公司里有几家没有CEO记录": the subject is the one asked about
        if clause or not any(x.of("entity") for x in mentions[k + 1 :]):
            out.add(subject.of("entity")[0].key)
            used.update(negs)
    return out, used


def _sequence(tokens: list[str], mentions: list[Mention]) -> tuple[tuple[str, ...], ...]:
    """Entities, relation words, values and concepts in the order the question names
    them; a concept right after a question word is marked ("哪个机构": the one asked)."""
    wh = set(triggers()["wh"]["tokens"])
    out: list[tuple[str, ...]] = []
    for m in mentions:
        ents, rels, cons = m.of("entity"), m.of("relation"), m.of("concept")
        if ents:
            out.append(("E", ents[0].key, ents[0].label))
        elif rels:
            out.extend(("R", r.key) for r in rels[:1])
        elif cons:
            asked = m.start > 0 and tokens[m.start - 1] in wh
            out.append(("C", cons[0].key, "wh" if asked else ""))
        elif m.of("value"):
            out.append(("V", m.of("value")[0].key))
    return tuple(out)


def _alternatives(tokens: list[str], mentions: list[Mention]) -> dict[str, list[str]]:
    """Entities of one kind joined by "or" ("Liquor or Insurance", "石油石化或者煤炭"), or by
    "and" where every relation the question names holds one value ("bonds MOF and CDB
    issue", "美国财政部和财政部发行的债券": a bond has one issuer, so it is either): the first
    one's id -> the ids of the group."""
    words = set(triggers()["either"]["tokens"])
    rels = {s.key for m in mentions for s in m.of("relation")}
    if rels and rels <= default_ontology().functional_relation_types:
        words |= set(triggers()["either"]["and_tokens"])
    out: dict[str, list[str]] = {}
    ents = [(m, m.of("entity")[0]) for m in mentions if m.of("entity")]
    head: str | None = None
    for (m1, e1), (m2, e2) in pairwise(ents):
        gap = [  # "Liquor or Insurance", "either the liquor or the autos industry"
            t
            for t in tokens[m1.end : m2.start]
            if t not in (",", "，", "、") and (t in words or t not in STOPWORDS)
        ]
        if e1.label == e2.label and gap and all(t in words for t in gap):
            head = head if head is not None and head in out and e1.key in out[head] else e1.key
            out.setdefault(head, [e1.key])
            if e2.key not in out[head]:
                out[head].append(e2.key)
        else:
            head = None
    return out


def _bare_relations(
    question: str, tokens: list[str], mentions: list[Mention]
) -> tuple[tuple[str, bool], ...]:
    """Relation words with no entity or value named right after them, in a question that
    asks whether an edge exists ("have a CEO recorded", "有CEO记录", "no chairman on file",
    "don't belong to any theme"); negated when a negation word is just before."""
    if not _any(triggers()["exists"]["patterns"], _normalize(question)):
        return ()
    window = int(triggers()["negation"]["window"])
    out: list[tuple[str, bool]] = []
    for k, m in enumerate(mentions):
        rels = [s.key for s in m.of("relation")]
        if not rels or m.of("entity") or all(t in STOPWORDS for t in m.text.split()):
            continue  # "in the graph": a preposition, not a relation asked about
        nxt = mentions[k + 1] if k + 1 < len(mentions) else None
        if nxt is not None and nxt.start - m.end <= 2 and (nxt.of("entity") or nxt.of("value")):
            continue  # "listed in Shanghai": the relation's object is named
        named_before = any(x.of("entity") for x in mentions[:k])
        if named_before and nxt is not None and nxt.start - m.end <= 1 and nxt.of("concept"):
            continue  # "张坤的基金持有的股票": a hop of a chain, not an edge test
        prev = mentions[k - 1] if k > 0 else None
        owned = prev is not None and prev.of("concept") and m.start - prev.end <= 1
        if owned and any(x.of("entity") for x in mentions[: k - 1]):
            continue  # "张坤基金的持仓有哪些": the chain's last hop, not an edge test
        before = [
            t for t in tokens[: m.start] if not (t in STOPWORDS or (t.isascii() and len(t) < 2))
        ][-window:]
        neg = any(is_negation(t) for t in before)
        out.extend((r, neg) for r in rels if _IDENT.match(r))
    for m in mentions:  # "not in any industry", "不属于任何主题": membership of that kind
        concepts = [s.key for s in m.of("concept")]
        if not concepts or m.of("entity") or m.of("relation"):
            continue
        near = tokens[max(0, m.start - 2) : m.start]
        if not any(t in ("any", "任何", "任一") for t in near):
            continue
        before = [t for t in tokens[: m.start] if not (t.isascii() and len(t) < 2)][-4:]
        if any(is_negation(t) for t in before):  # "any indicator tracking ...": a quantifier
            out.append((f"*{concepts[0]}", True))
    return tuple(out)


class Synthesizer:
    def __init__(self, lexicon: Lexicon, ontology: Ontology | None = None) -> None:
        self.lex = lexicon
        self.onto = ontology or default_ontology()

    # -- entry point -------------------------------------------------------------------
    def candidates(self, frame: Frame, now: datetime) -> list[Candidate]:
        self._members_target(frame)
        out: list[Candidate] = self._relation_walk(frame)  # before any reads the target
        out += self._when(frame)
        out += self._series(frame, now)
        out += self._attributes(frame)
        out += self._entity_sets(frame, now)
        out += self._which_of_named(frame, now)
        out += self._named_most(frame)
        out += self._chain(frame)
        if not out and frame.anchors:
            out.append(self._describe(frame))
        for c in out:
            c.cypher = c.cypher.strip()
        return out

    def _members_target(self, frame: Frame) -> None:
        """A group named with no concept asked for ("banks listed in china", "high dividend
        theme constituents", "AI names that are not semis"): the question is about its
        members, the label with the most membership edges into that group in the graph."""
        if frame.prefix is not None and frame.target is None and not frame.concepts:
            having: dict[str, int] = {}  # "names whose code starts with 00": who has codes
            for e in self.lex.entities.values():
                if frame.prefix[0] in e:
                    having[e["label"]] = having.get(e["label"], 0) + 1
            if having:
                frame.target = max(having, key=lambda k: having[k])
                frame.concepts.append(frame.target)
                return
        if frame.target is not None or frame.concepts or frame.same_as:
            return
        if any(a.label in ("Indicator", "Bond") for a in frame.anchors):
            return
        for a in frame.anchors:
            if a.key in frame.negated:
                continue
            counts: dict[str, int] = {}
            for (h, r, t), n in self.lex.edge_stats.items():
                if t == a.label and r in _MEMBERSHIP:
                    counts[h] = counts.get(h, 0) + n
            if counts and a.label not in counts:
                frame.target = max(counts, key=lambda k: counts[k])
                frame.concepts.append(frame.target)
                return

    # -- helpers -----------------------------------------------------------------------
    def is_a(self, label: str, other: str) -> bool:
        return self.onto.is_a(label, other)

    def _props_of(self, label: str) -> set[str]:
        names: set[str] = set()
        for lb in self.onto.ancestors(label):
            c = self.onto.concept(lb)
            if c:
                names.update(p.name for p in c.properties)
        return names

    def _numeric_props(self, label: str) -> set[str]:
        out: set[str] = set()
        for lb in self.onto.ancestors(label):
            c = self.onto.concept(lb)
            if c:
                out.update(p.name for p in c.properties if p.type in ("float", "int"))
        return out

    # -- "when": the start of a fact's validity -------------------------------------------
    def _when(self, frame: Frame) -> list[Candidate]:
        if not frame.when or not frame.anchors or (frame.periods and frame.units.comparisons):
            return []  # "on the days when A closed above x": a filter, not "since when"
        rels = [r for r in frame.relations if _IDENT.match(r)] or [""]
        out = []
        a0 = frame.anchors[0]
        other = frame.anchors[1] if len(frame.anchors) > 1 else None
        for r in rels[:3]:
            rel = f":{r}" if r else ""
            if other is not None:
                cy = render(S.WHEN_PAIR, rel=rel)
                params = {"a0": a0.key, "a1": other.key}
                desc = f"since when {a0.name} {r.lower()} {other.name}"
            elif r:
                cy = render(S.WHEN_ONE, rel=rel)
                params = {"a0": a0.key}
                desc = f"since when {a0.name} {r.lower()}"
            else:
                continue
            out.append(Candidate(cy, params, desc, 6.0, "when", list(params.values())))
        return out

    # -- indicator values (dynamic partition) ---------------------------------------------
    def _indicator_anchors(self, frame: Frame) -> list[tuple[str, str, str]]:
        """(indicator match pattern, anchor id, how) for anchors that have values."""
        out = []
        for a in frame.anchors:
            if a.label == "Indicator":
                out.append(("(i:Indicator {id: $a})", a.key, "indicator"))
            elif a.label in ("Bond", "Region", "Company", "Fund") and (
                frame.units.value_word or frame.agg not in (None, "count")
            ):
                # relational reasoning: the indicator that tracks the anchor
                out.append(("(i:Indicator)-[:TRACKS]->(:Entity {id: $a})", a.key, "tracks"))
        return out

    def series_set_frame(self, frame: Frame) -> Frame | None:
        """ "The yields that track US Treasury notes: spread at Friday's close", "跟踪美国国债
        的两个收益率 哪个跌得更多": a series question about indicators named by their
        relations, not by name. The frame of the set query (which indicators), to be run
        first; None when the question names its series or asks nothing of their values."""
        if not frame.anchors or any(a.label == "Indicator" for a in frame.anchors):
            return None
        if frame.target != "Indicator" and "Indicator" not in frame.concepts:
            return None
        if frame.most is not None or frame.agg == "count" or frame.same_as:
            return None
        if not (frame.spread or frame.compare is not None or frame.direction is not None):
            return None  # a spread, "which is higher", "which fell more" of the set
        units = replace(frame.units, aggregation=None, comparisons=(), time=None)
        return replace(
            frame,
            target="Indicator",
            units=units,
            spread=False,
            compare=None,
            daily=None,
            direction=None,
            top=None,
            last_n=None,
            fall=False,
            range_agg=False,
        )

    def with_series(self, frame: Frame, ids: list[str]) -> Frame:
        """The question again, about the indicators the set query found."""
        senses = [
            Sense("entity", i, "Indicator", str(self.lex.entities.get(i, {}).get("name") or i))
            for i in ids
        ]
        return replace(
            frame,
            anchors=senses,
            concepts=[c for c in frame.concepts if c not in ("Indicator", "Bond")],
            target=None,
            relations=[],
            values=[],
            negated=frozenset(),
            either={},
            anchor_at={i: 0 for i in ids},
        )

    def _series(self, frame: Frame, now: datetime) -> list[Candidate]:
        u = frame.units
        wants_values = (
            u.value_word
            or u.time is not None
            or frame.agg in ("max", "min", "avg", "change", "first", "latest")
            or (frame.agg == "count" and bool(u.comparisons))
            or frame.spread
            or frame.range_agg
            or frame.compare is not None
            or frame.mom
            or frame.point_time is not None
        )
        if frame.target == "Indicator" and wants_values and frame.agg in ("max", "min", "avg"):
            as_values = self._regions_as_values(frame, "Indicator")
            if as_values is not frame and not as_values.anchors:  # "US yield indicators"
                return self._series_over_set(as_values)
        inds = self._indicator_anchors(frame)
        if not inds and wants_values and frame.agg in ("max", "min", "avg"):
            return self._series_over_set(frame)
        if not inds or not wants_values:
            return []
        joint = self._series_joint(frame, [a for _p, a, how in inds if how == "indicator"])
        if joint is not None:
            return [joint]
        filtered = self._series_filtered(frame, [a for _p, a, how in inds if how == "indicator"])
        if filtered is not None:
            return [filtered]
        counted = frame.agg == "count" and not u.comparisons  # "how many" of a spread: no
        if frame.spread and len(inds) >= 2 and not counted and not frame.range_agg:
            return [self._spread(frame, inds[:2])]
        direct = [aid for _p, aid, how in inds if how == "indicator"]
        if frame.compare and frame.wh and len(direct) >= 2 and not frame.spread:
            return [self._which_of(frame, direct)]
        if (  # "which of them rose between the Nov 16 and Nov 20 closes"
            frame.direction
            and frame.wh
            and len(direct) >= 2
            and not frame.spread
            and u.time is not None
            and _WHICH.search(frame.question)
        ):
            return [self._which_of(frame, direct)]
        out = []
        for pattern, aid, how in inds:
            prior = 3.0 if how == "indicator" else 2.0
            if how == "tracks" and (u.time is not None or frame.agg in _VALUE_AGGS):
                prior += 2.5  # "the highest yield of the 10-year bond on <day>"
            if how == "tracks" and any(a.label == "Indicator" for a in frame.anchors):
                continue
            if (
                frame.wh
                and frame.target not in (None, "Indicator")
                and frame.relations
                and frame.agg is None
                and u.time is None
            ):
                prior -= 1.5  # "who issues the bond the 10Y yield tracks": an entity

            out.append(self._series_one(frame, pattern, aid, prior))
        return out

    def _series_joint(self, frame: Frame, ids: list[str]) -> Candidate | None:
        """Days on which each of two or more series meets its own comparison ("days the US
        10Y closed above 4.2 and the 2Y below 3.6"): each comparison belongs to the series
        named last before it, every series to one comparison (``series_joint_days``)."""
        comps = frame.units.comparisons
        if len(comps) < 2 or len(set(ids)) < 2 or frame.spread:
            return None
        owners: list[str] = []
        for at in frame.compare_at:
            before = [a for a in ids if frame.anchor_at.get(a, 10**6) <= at + 1]
            if not before:
                return None
            owners.append(max(before, key=lambda a: frame.anchor_at.get(a, -1)))
        if len(set(owners)) != len(owners):
            return None  # "between 4.2 and 4.3": one series, two bounds
        params: dict[str, Any] = {"ids": owners, "n": len(owners)}
        conds = []
        for k, (a, c) in enumerate(zip(owners, comps, strict=True)):
            params[f"s{k}"], params[f"c{k}"] = a, c.value
            conds.append(f"(r.s = $s{k} AND r.v {c.op} $c{k})")
        ow, dw = self._window_where(frame.units.time, params, frame.known_at)
        counted = frame.agg == "count"
        fold = (
            "RETURN count(k) AS count"
            if counted
            else "RETURN k AS period_start, [r IN met WHERE r.s = $s0][0].v AS value\n"
            "ORDER BY period_start"
        )
        pick = _DAILY_PICKS["open" if frame.daily == "open" else "close"]
        cond = " OR ".join(conds)
        cy = render(
            S.SERIES_JOINT_DAYS, obs_where=ow, daily_where=dw, pick=pick, conds=cond, fold=fold
        )
        names = [self.lex.entities.get(a, {}).get("name", a) for a in owners]
        what = " and ".join(f"{n} {c.op} a value" for n, c in zip(names, comps, strict=True))
        desc = ("number of " if counted else "") + shape(S.SERIES_JOINT_DAYS).describe.format(
            conds=what
        )
        return Candidate(f"{cy}\nLIMIT {ROW_LIMIT}", params, desc, 7.0, "series", owners)

    def _series_filtered(self, frame: Frame, ids: list[str]) -> Candidate | None:
        """One series read in the periods another meets the question's comparison ("the
        average CPI in the months M2 was below 7.5"): the condition's series is the one
        named last before the comparison, the other is read (``series_filtered``)."""
        comps = frame.units.comparisons
        if not frame.periods or len(ids) < 2 or len(comps) != 1:
            return None
        at = frame.compare_at[0]
        before = [a for a in ids if frame.anchor_at.get(a, 10**6) <= at + 1]
        if not before:
            return None
        cond = max(before, key=lambda a: frame.anchor_at.get(a, -1))
        target = next(a for a in ids if a != cond)
        if frame.spread and frame.anchor_at.get(target, -1) <= at:
            return None  # "days the 10y-2y spread was above 0.8": one spread, not a filter
        params: dict[str, Any] = {"a": target, "b": cond, "f0": comps[0].value}
        ow, dw = self._window_where(frame.units.time, params, frame.known_at)
        monthly = all(
            self.lex.entities.get(a, {}).get("frequency") == "monthly" for a in (cond, target)
        )
        if monthly:  # calendar months: the count of month starts up to a time is its month
            params["months"] = _month_starts(frame.units.time)
            keys = {k: f"size([m IN $months WHERE m <= {k}.t])" for k in ("q", "p")}
        else:
            keys = {k: f"{k}.t / 86400000" for k in ("q", "p")}
        head = render(
            S.SERIES_FILTERED,
            obs_where=ow,
            daily_where=dw,
            obs_where2=ow.replace("o.", "o2."),
            daily_where2=dw.replace("d.", "d2."),
            key_q=keys["q"],
            key_p=keys["p"],
            op=comps[0].op,
        )
        rest = replace(frame, units=replace(frame.units, comparisons=()))
        agg = frame.agg if frame.agg not in (None, "latest") else "avg"
        ret = self._series_return(rest, agg, params)
        slots = params.pop("_slots", {})
        name = self.lex.entities.get(target, {}).get("name", target)
        other = self.lex.entities.get(cond, {}).get("name", cond)
        desc = shape(S.SERIES_FILTERED).describe.format(
            agg=agg, name=name, other=other, op=comps[0].op
        )
        cy = f"{head}\n{render(ret, **slots)}\nLIMIT {ROW_LIMIT}"
        return Candidate(cy, params, desc, 7.0, "series", [target, cond])

    def _which_of(self, frame: Frame, ids: list[str]) -> Candidate:
        """Which of the named series is higher (lower): now, or its aggregate in the
        question's window ("Which was higher on Nov 18, the US 10Y or the CN 10Y?")."""
        params: dict[str, Any] = {"ids": ids}
        head = render(S.INDICATOR_SET, matches="", optionals="", where="\nWHERE t.id IN $ids")
        order = "ASC" if frame.compare == "min" else "DESC"
        moved = frame.agg == "change" or frame.fall or frame.direction is not None
        if moved and frame.units.time is not None:  # "which fell more from Mon close to Fri"
            body = self._points("(i)", replace(frame, daily="close"), params)
            days = (
                "WITH i, p.t / 86400000 AS day, collect(p.v) AS vs\n"
                "WITH i, day, vs[size(vs) - 1] AS v ORDER BY day\n"
                "WITH i, collect(v) AS dv"
                if frame.daily == "close"
                else "WITH i, collect(p.v) AS dv"
            )
            down = frame.fall or frame.direction == "down"
            value = "dv[0] - dv[size(dv) - 1]" if down else "dv[size(dv) - 1] - dv[0]"
            tail = render(S.SERIES_ARGMAX, value=value, order=order)
            if frame.compare is None and frame.direction is not None:  # "which rose"
                tail = render(S.SERIES_WHICH_MOVED, value=value, op=">")
            cy = f"{head}\n{body}\nWITH i, p ORDER BY p.t\n{days}\n{tail}"
            what = "fell" if down else "rose"
            desc = f"which of {', '.join(ids)} {what} {'less' if order == 'ASC' else 'more'}"
            return Candidate(cy, params, desc, 6.0, "series", ids)
        if frame.units.time is None and frame.known_at is None:
            cy = f"{head}\n{render(S.SERIES_ARGMAX, value='i.last_value', order=order)}"
        else:
            value = {"min": "min(p.lo)", "avg": "sum(p.s) / sum(p.n)"}.get(
                frame.agg or "", "max(p.hi)" if frame.compare == "max" else "min(p.lo)"
            )
            if frame.agg in (None, "latest"):
                value = "sum(p.s) / sum(p.n)"  # "higher on Nov 18": the day's level
            body = self._points("(i)", frame, params)
            cy = f"{head}\n{body}\n{render(S.SERIES_ARGMAX, value=value, order=order)}"
        desc = f"which of {', '.join(ids)} is {'lower' if order == 'ASC' else 'higher'}"
        return Candidate(cy, params, desc, 6.0, "series", ids)

    def _series_over_set(self, frame: Frame) -> list[Candidate]:
        """Values of the indicators an entity-set path selects: the highest (lowest,
        average) point among them, or which of them has it ("which yield tracking US
        Treasuries had the lowest average this week")."""
        target = frame.target or next((c for c in frame.concepts if c == "Indicator"), None)
        if target != "Indicator" or (frame.units.time is None and not frame.units.value_word):
            return []
        combos = self._constraints(frame, "Indicator", list(frame.anchors)) or []
        if not combos and not frame.anchors and frame.values:
            combos = [([], [], 0.0)]  # "US yield indicators": the set by its properties alone
        links = [  # "the indicators that track a bond", "跟踪债券的指标": an edge to a kind
            f"(t)-[fr{k}:{r}]->(:{c})"
            for k, r in enumerate(frame.relations)
            for c in frame.concepts
            if c != "Indicator"
            and _IDENT.match(r)
            and _IDENT.match(c)
            and self._data("Indicator", r, c)
        ]
        if links and not frame.anchors:
            combos = [([*p, *links], n, sc) for p, n, sc in (combos or [([], [], 0.0)])]
        agg = frame.agg or "max"
        value = {"max": "max(p.hi)", "min": "min(p.lo)", "avg": "sum(p.s) / sum(p.n)"}[agg]
        which = frame.wh and frame.target == "Indicator" and bool(_WHICH.search(frame.question))
        daily = frame.daily if frame.daily in ("close", "open") else None
        if daily is None and _CLOSE_WORD.search(frame.question):
            daily = "close"  # "the maximum friday close across the indicators ..."
        out = []
        for pats, negs, score in combos[:2]:
            params: dict[str, Any] = {f"a{k}": a.key for k, a in enumerate(frame.anchors)}
            where, wparams, _used = self._target_filters(frame, "Indicator")
            params.update(wparams)
            slots = self._finish(frame, pats, negs, where, params)
            head = render(S.INDICATOR_SET, **slots)
            body = self._points("(i)", frame, params)
            order = "ASC" if agg == "min" else "DESC"
            if daily is not None:  # "the highest daily close", "周五收盘的平均"
                fn = f"{agg}(v)"
                fold = (
                    render(S.SERIES_ARGMAX, value=fn, order=order)
                    if which
                    else f"RETURN {fn} AS value"
                )
                ret = render(S.SERIES_SET_DAILY, pick=_DAILY_PICKS[daily], fold=fold)
                desc = f"{agg} of the daily {daily} values of the indicators"
            elif which:
                ret = render(S.SERIES_ARGMAX, value=value, order=order)
                desc = shape(S.SERIES_ARGMAX).describe.format(order=agg)
            else:
                ret = render({"max": S.SERIES_MAX, "min": S.SERIES_MIN, "avg": S.SERIES_AVG}[agg])
                desc = f"{agg} value of the indicators"
            cy = f"{head}\n{body}\n{ret}"
            prior = 4.0 + score + (1.0 if frame.units.time is not None else 0.0)
            out.append(Candidate(cy, params, desc, prior, "series", []))
        return out

    def _window_where(
        self, win: TimeWindow | None, params: dict[str, Any], known_at: int | None = None
    ) -> tuple[str, str]:
        """WHERE parts for instant points (o) and daily rows (d); with a knowledge time,
        only observations made by then (a day row by its last point)."""
        o, d = ["o.observed_at IS NOT NULL"], ["d.last_at IS NOT NULL"]
        if win and win.start_ms is not None:
            params["from"] = win.start_ms
            o.append("o.observed_at >= $from")
            d.append("d.last_at >= $from")
        if win and win.end_ms is not None:
            params["to"] = win.end_ms
            o.append("o.observed_at < $to")
            d.append("d.first_at < $to")
        if known_at is not None:
            params["known_at"] = known_at
            o.append("o.observed_at <= $known_at")  # a market print is public when observed
            d.append("d.last_at <= $known_at")
        return " AND ".join(o), " AND ".join(d)

    def _points(self, pattern: str, frame: Frame, params: dict[str, Any]) -> str:
        ow, dw = self._window_where(frame.units.time, params, frame.known_at)
        return render(
            S.SERIES_POINTS,
            pattern=pattern,
            obs_where=ow,
            daily_where=dw,
            value_filter="" if frame.daily else self._value_filter(frame, params),
        )

    def _value_filter(self, frame: Frame, params: dict[str, Any]) -> str:
        parts = []
        for k, c in enumerate(frame.units.comparisons):
            params[f"c{k}"] = c.value
            parts.append(f"p.v {c.op} $c{k}")
        return (" AND " + " AND ".join(parts)) if parts else ""

    def _series_return(self, frame: Frame, agg: str | None, params: dict[str, Any]) -> S:
        """The RETURN shape of a series question, and its slots in ``params['_slots']``."""
        win = frame.units.time
        if frame.rank is not None and agg in ("max", "min") and frame.top is None:
            params["rank"] = frame.rank  # "the second highest reading", "第三低"
            params["_slots"] = {"order": "DESC" if agg == "max" else "ASC"}
            return S.SERIES_RANK
        if frame.top is not None and frame.daily is not None:  # "the 3 highest closes"
            params["top"] = frame.top[0]
            avg = _asks("avg", frame.question)
            fold = (
                "RETURN reduce(s = 0.0, x IN top | s + x) / size(top) AS value"
                if avg
                else "UNWIND top AS value\nRETURN value"
            )
            pick = _DAILY_PICKS[frame.daily]
            params["_slots"] = {"pick": pick, "order": frame.top[1], "fold": fold}
            return S.SERIES_DAILY_TOP
        if frame.top is not None:
            params["top"] = frame.top[0]
            params["_slots"] = {"order": frame.top[1]}
            return S.SERIES_TOP_AVG if _asks("avg", frame.question) else S.SERIES_TOP_LIST
        if frame.last_n is not None:
            params["last"] = frame.last_n
            folds = {k: f"RETURN {v} AS value" for k, v in _folds("xs").items()}
            folds["change"] = "RETURN xs[0] - xs[size(xs) - 1] AS value"  # newest first
            folds["count"] = "RETURN size(xs) AS count"
            fold = folds.get(agg or "", "UNWIND xs AS value\nRETURN value")
            params["_slots"] = {"agg": fold}
            return S.SERIES_LAST_N
        if frame.range_agg and frame.daily != "range":
            return S.SERIES_RANGE
        if frame.daily is not None and agg in _DAILY_AGGS:
            pick = _DAILY_PICKS[frame.daily]
            conds = []
            for k, c in enumerate(frame.units.comparisons):  # on the day's value, not ticks
                params[f"c{k}"] = c.value
                conds.append(f"x {c.op} $c{k}")
            if conds and agg in ("max", "min", "avg"):  # "the average close on days above x"
                kept = f"[x IN dv WHERE {' AND '.join(conds)}]"
                fold = _folds("kept")[agg].replace("kept", kept)
                fold = f"CASE WHEN size({kept}) = 0 THEN null ELSE {fold} END"
            elif agg == "count" or conds:
                fold = f"size([x IN dv WHERE {' AND '.join(conds) or 'true'}])"
            elif agg == "change" and frame.fall:
                fold = "dv[0] - dv[size(dv) - 1]"
            else:
                fold = _folds("dv").get(agg or "", "dv[size(dv) - 1]")
            params["_slots"] = {"pick": pick, "agg": fold}
            return S.SERIES_DAILY
        if agg == "change" and frame.fall:
            return S.SERIES_FALL
        if agg in _AGG_SHAPES:
            return _AGG_SHAPES[agg]
        if agg == "latest" or (win is not None and win.point):
            return S.SERIES_LAST
        if win is not None and win.kind in _ONE_VALUE_WINDOWS:
            return S.SERIES_LAST  # "the PMI last month", "the 10Y on 2025-06-18"
        return S.SERIES_LIST

    def _series_mom(self, frame: Frame, pattern: str, aid: str, prior: float) -> Candidate:
        """Month-on-month changes (``series_mom``): the latest one in the window, how many
        rose (fell), the biggest rise (drop), their average."""
        params: dict[str, Any] = {"a": aid}
        win = frame.units.time
        params["mom_from"] = win.start_ms if win and win.start_ms is not None else 0
        early = replace(win, start_ms=None) if win else None  # the first one's predecessor
        body = self._points(pattern, replace(frame, units=replace(frame.units, time=early)), params)
        down = frame.direction == "down" or frame.fall
        agg = frame.agg  # "average MoM move": the average, though "move" names a change
        if agg not in ("count", "avg", "max", "min"):
            agg = next((a for a in ("avg", "max", "min") if _asks(a, frame.question)), agg)
        sign = "-" if down and agg in ("max", "min", None, "latest", "change") else ""
        name = self.lex.entities.get(aid, {}).get("name", aid)
        if frame.point_time is not None:  # which month had the biggest rise (drop)
            order = "ASC" if agg == "min" and frame.direction is None else "DESC"
            fold = (
                f"WITH d ORDER BY {sign}d.v {order} LIMIT 1\n"
                f"RETURN d.t AS period_start, d.v AS value"
            )
            desc = f"the month of the biggest month-on-month change of {name}"
            cy = f"{body}\n{render(S.SERIES_MOM, fold=fold)}\nLIMIT {ROW_LIMIT}"
            return Candidate(cy, params, desc, prior + 1.0, "series", [aid])
        if agg == "count":
            cond = {"up": "d.v > 0", "down": "d.v < 0"}.get(frame.direction or "", "true")
            fold = f"WITH d WHERE {cond}\nRETURN count(d) AS count"
        elif agg in ("max", "min") and frame.direction is not None:
            fold = f"RETURN max({sign}d.v) AS value"  # "biggest drop": the largest fall
        elif agg in ("max", "min", "avg"):
            fold = f"RETURN {agg}(d.v) AS value"
        else:
            fold = (
                f"WITH d ORDER BY d.t DESC LIMIT 1\nRETURN {sign}d.v AS value, d.t AS observed_at"
            )
        desc = shape(S.SERIES_MOM).describe.format(name=name)
        cy = f"{body}\n{render(S.SERIES_MOM, fold=fold)}\nLIMIT {ROW_LIMIT}"
        return Candidate(cy, params, desc, prior + 1.0, "series", [aid])

    def _series_when(self, frame: Frame, pattern: str, aid: str, prior: float) -> Candidate:
        """Which day (month) of the series: the period with the highest (lowest) value,
        the first (last) one meeting the question's threshold, or all that do."""
        params: dict[str, Any] = {"a": aid}
        body = self._points(pattern, replace(frame, daily="close"), params)  # no tick filter
        monthly = self.lex.entities.get(aid, {}).get("frequency") == "monthly"
        if monthly or frame.point_time == "month":
            key, pick = "p.t", "vs[size(vs) - 1]"
        else:
            daily = frame.daily or ("range" if frame.range_agg else "close")
            key, pick = "p.t / 86400000 * 86400000", _DAILY_PICKS[daily]
        conds = []
        for k, c in enumerate(frame.units.comparisons):
            params[f"c{k}"] = c.value
            conds.append(f"v {c.op} $c{k}")
        trig = triggers()["point_time"]
        agg = frame.agg if frame.agg in ("max", "min") else None
        if agg is None and frame.compare is not None and not conds:
            agg = frame.compare  # "哪天振幅更大"
        name = self.lex.entities.get(aid, {}).get("name", aid)
        period = "month" if monthly else "day"
        if frame.rank is not None and agg is not None:  # "the month of the second highest"
            params["rank"] = frame.rank
            order = "DESC" if agg == "max" else "ASC"
            cond = " AND ".join(conds) or "v IS NOT NULL"
            ret = render(S.SERIES_WHEN_RANK, key=key, pick=pick, cond=cond, order=order)
            desc = shape(S.SERIES_WHEN_RANK).describe.format(period=period, name=name, what=agg)
            cy = f"{body}\n{ret}\nLIMIT {ROW_LIMIT}"
            return Candidate(cy, params, desc, prior + 1.0, "series", [aid])
        if _any(trig["first"], frame.question):
            order, limit = "k ASC", "\nLIMIT 1"
        elif _any(trig["last"], frame.question):
            order, limit = "k DESC", "\nLIMIT 1"
        elif agg is not None:
            order, limit = f"v {'DESC' if agg == 'max' else 'ASC'}, k", "\nLIMIT 1"
        else:
            order, limit = "k", ""
        ret = render(
            S.SERIES_WHEN,
            key=key,
            pick=pick,
            cond=" AND ".join(conds) or "v IS NOT NULL",
            order=order,
            limit=limit,
        )
        desc = shape(S.SERIES_WHEN).describe.format(period=period, name=name, what=order)
        cy = f"{body}\n{ret}\nLIMIT {ROW_LIMIT}"
        return Candidate(cy, params, desc, prior + 1.0, "series", [aid])

    def _series_one(self, frame: Frame, pattern: str, aid: str, prior: float) -> Candidate:
        if frame.mom and frame.point_time is not None:  # "哪个月环比跌得最多"
            return self._series_mom(frame, pattern, aid, prior)
        if frame.point_time is not None:
            return self._series_when(frame, pattern, aid, prior)
        if frame.mom:
            return self._series_mom(frame, pattern, aid, prior)
        params: dict[str, Any] = {"a": aid}
        agg = "change" if frame.fall and frame.agg in (None, "latest") else frame.agg
        win = frame.units.time
        name = self.lex.entities.get(aid, {}).get("name", aid)
        plain = (
            not frame.units.comparisons
            and frame.top is None
            and not frame.range_agg
            and frame.last_n is None
        )
        if agg is None and win is None and plain and frame.daily is None:
            agg = "latest"  # "what is the US 10Y yield?": its current value
        if agg == "latest" and win is None and plain and frame.known_at is None:
            cy = render(S.SERIES_LATEST, pattern=pattern)
            desc = shape(S.SERIES_LATEST).describe.format(name=name)
            return Candidate(cy, params, desc, prior + 1, "series", [aid])
        body = self._points(pattern, frame, params)
        ret = self._series_return(frame, agg, params)
        slots = params.pop("_slots", {})
        desc = shape(ret).describe.format(name=name, **slots)
        if win is not None:
            desc += f" {win.text}"
        cy = f"{body}\n{render(ret, **slots)}\nLIMIT {ROW_LIMIT}"
        return Candidate(cy, params, desc, prior, "series", [aid])

    def _spread(self, frame: Frame, inds: list[tuple[str, str, str]]) -> Candidate:
        (p1, a1, _), (p2, a2, _) = inds
        params: dict[str, Any] = {"a": a1, "b": a2}
        right = p2.replace("(i:", "(j:").replace("$a", "$b")
        n1 = self.lex.entities.get(a1, {}).get("name", a1)
        n2 = self.lex.entities.get(a2, {}).get("name", a2)
        win = frame.units.time
        tail = self._spread_tail(frame, params)
        if tail is None and win is None and frame.known_at is None:
            cy = render(S.SERIES_SPREAD, left=p1, right=right)
            desc = shape(S.SERIES_SPREAD).describe.format(name=n1, other=n2)
        else:  # in a window: each spread then folded (tail), or the spread at its end
            which = S.SERIES_SPREAD_AT if tail is None else S.SERIES_SPREAD_POINTS
            ow, _ = self._window_where(win, params, frame.known_at)
            slots = {"left": p1, "right": right, "obs_where": ow}
            slots["obs_where2"] = ow.replace("o.", "o2.")
            cy = render(which, **slots, **({} if tail is None else {"agg": tail}))
            desc = shape(which).describe.format(name=n1, other=n2)
        return Candidate(cy, params, desc, 3.5, "series", [a1, a2])

    def _spread_tail(self, frame: Frame, params: dict[str, Any]) -> str | None:
        """How spreads over a window are folded (None: one spread, now or at a time)."""
        conds = []
        agg = frame.agg
        for k, c in enumerate(frame.units.comparisons if agg == "count" else ()):
            params[f"c{k}"] = c.value
            conds.append(f"d {c.op} $c{k}")
        if frame.daily in ("close", "open") and (agg in ("max", "min", "avg") or conds):
            pick = "ds[size(ds) - 1]" if frame.daily == "close" else "ds[0]"
            fold = (
                f"size([x IN dv WHERE {' AND '.join(c.replace('d ', 'x ') for c in conds)}])"
                if conds
                else _folds("dv")[agg or "max"]
            )
            return (
                "WITH t / 86400000 AS day, t, d ORDER BY t\n"
                "WITH day, collect(d) AS ds\n"
                f"WITH day, {pick} AS v ORDER BY day\n"
                f"WITH collect(v) AS dv WHERE size(dv) > 0\nRETURN {fold} AS value"
            )
        if conds:
            return f"WITH d WHERE {' AND '.join(conds)}\nRETURN count(d) AS count"
        if agg in ("max", "min", "avg") and (frame.units.time is not None or _ever(frame)):
            return f"RETURN {agg}(d) AS value"
        return None

    # -- properties of one entity (attribute lookup) ------------------------------------
    def _attributes(self, frame: Frame) -> list[Candidate]:
        if not frame.properties or not frame.anchors or frame.agg == "count":
            return []
        out = []
        for a in frame.anchors[:2]:
            own = self.lex.entities.get(a.key, {})
            have = set(own) | self._props_of(a.label)
            for prop in frame.properties:
                if own.get(prop) is None:  # "股票代码" of a US stock: its ticker
                    alt = triggers()["property_fallback"].get(prop)
                    prop = alt if alt and own.get(alt) is not None else prop
                if prop not in have or not _IDENT.match(prop):
                    continue
                other = triggers()["property_companion"].get(prop)
                if other and own.get(other) is not None and _IDENT.match(other):
                    cy = render(S.ATTRIBUTE_PAIR, prop=prop, other=other)
                else:
                    cy = render(S.ATTRIBUTE, prop=prop)
                desc = f"the {prop.replace('_', ' ')} of {a.name}"
                prior = 3.0 if not frame.concepts else 2.5
                if frame.target is not None and self.is_a(a.label, frame.target):
                    prior += 1.0  # "the stock code of BYD": the concept is the anchor's
                out.append(Candidate(cy, {"a": a.key}, desc, prior, "attribute", [a.key]))
        return out

    # -- sets of entities: filters, relations, counts --------------------------------------
    def _relation_ends(self, frame: Frame) -> list[str]:
        """Labels at the other end of a relation the question names, seen from an
        anchor (from the graph's edges; the ontology's concrete labels without them)."""
        out: list[str] = []
        for a in frame.anchors:
            for r in frame.relations:
                for (h, rel, t), n in sorted(self.lex.edge_stats.items(), key=lambda x: -x[1]):
                    if rel != r or n <= 0:
                        continue
                    if self.is_a(t, a.label) and h not in out:
                        out.append(h)
                    if self.is_a(h, a.label) and t not in out:
                        out.append(t)
        return out

    def _fits(self, label: str, relations: list[str]) -> bool:
        """Whether ``label`` can be an end of one of ``relations``."""
        for r in self.onto.relations:
            if r.type in relations:
                ends = [e for e in (*r.domain, *r.range) if e != "Entity"]
                if not ends:  # a relation between any entities: the graph's edges decide
                    ends = [
                        e for (h, rel, t) in self.lex.edge_stats if rel == r.type for e in (h, t)
                    ]
                if any(self.is_a(label, e) or self.is_a(e, label) for e in ends):
                    return True
        return False

    def _targets(self, frame: Frame) -> list[str]:
        anchor_labels = {a.label for a in frame.anchors}
        if (
            frame.target == "Person"
            and frame.relations
            and not self._fits("Person", frame.relations)
        ):
            # "who issues the bond ...": "who" is whoever the named relation's end is
            ends = [
                lb
                for r in frame.relations
                if (rel := self.onto.relation(r)) is not None
                for lb in (*rel.range, *rel.domain)
                if lb in self._concrete_labels()
                and lb not in anchor_labels
                and lb not in frame.concepts
            ]
            if ends:
                frame.target = ends[0]
                return list(dict.fromkeys(ends))[:3]
        named = [c for c in frame.concepts if c in self._concrete_labels()]
        ends = self._relation_ends(frame)
        if ends and not any(self._fits(c, frame.relations) for c in named):
            # "who supplies Apple", "how many suppliers": the named relation decides
            return ends[:3]
        if frame.target in named:
            return [frame.target, *[c for c in named if c != frame.target]][:2]
        if frame.target in self._concrete_labels():
            return [frame.target, *named][:2]  # a role noun ("which CEOs ...")
        if named:
            # the first concept named that is not only the anchors' own type
            first = [c for c in named if c not in anchor_labels] or named
            return first[:2]
        labels: list[str] = []
        for a in frame.anchors:
            for other in self._neighbour_labels(a.label, frame.relations):
                if other not in labels:
                    labels.append(other)
        for v in frame.values:
            for lb in sorted(self.lex.value_props.get(v.key, ())):
                if lb not in labels:
                    labels.append(lb)
        return labels[:4]

    def _neighbour_labels(self, label: str, hinted: list[str]) -> list[str]:
        """Labels linked to ``label`` in the graph's edges (most edges first, hinted
        relations before others); the ontology's when the graph has no statistics."""
        counts: dict[str, tuple[int, int]] = {}
        for (h, r, t), n in self.lex.edge_stats.items():
            for mine, other in ((h, t), (t, h)):
                if self.is_a(mine, label) and other != label:
                    hint, total = counts.get(other, (0, 0))
                    counts[other] = (hint + (n if r in hinted else 0), total + n)
        if counts:
            return sorted(counts, key=lambda lb: (-counts[lb][0], -counts[lb][1], lb))
        return [o for _r, _d, o in self._relations_for(label, hinted)]

    def _concrete_labels(self) -> set[str]:
        return {c.label for c in self.onto.concepts if not c.abstract}

    def _relations_for(self, label: str, hinted: list[str]) -> list[tuple[str, str, str]]:
        """(relation, direction, other label): out = (label)-[r]->(other)."""
        opts: list[tuple[str, str, str]] = []
        for r in self.onto.relations:
            if r.internal:
                continue
            if any(self.is_a(label, d) for d in r.domain):
                for rg in r.range:
                    if rg != "Entity":
                        opts.append((r.type, "out", rg))
            if any(self.is_a(label, rg) for rg in r.range):
                for d in r.domain:
                    if d != "Entity":
                        opts.append((r.type, "in", d))
        hinted_opts = [o for o in opts if o[0] in hinted]
        return hinted_opts or [o for o in opts if o[0] in _DEFAULT_RELS]

    def _data(self, head: str, rel: str, tail: str) -> bool | None:
        """Whether the graph has (head)-[rel]->(tail) edges; None when not known."""
        stats = self.lex.edge_stats
        if not stats:
            return None
        return any(
            n > 0 and r == rel and self.is_a(h, head) and self.is_a(t, tail)
            for (h, r, t), n in stats.items()
        )

    def _pairs(self, a: str, b: str, hinted: list[str]) -> list[tuple[str, str, float]]:
        """(relation, direction, prior bonus) linking label ``a`` to label ``b``;
        direction ``out`` is (a)-[r]->(b). Relations with edges in the graph first."""
        out: list[tuple[str, str, float]] = []
        for r in self.onto.relations:
            if r.internal:
                continue
            bonus = 1.0 if r.type in hinted else (0.0 if r.type in _DEFAULT_RELS else -1.0)
            for direction, head, tail in (("out", a, b), ("in", b, a)):
                if not (
                    any(self.is_a(head, d) for d in r.domain)
                    and any(self.is_a(tail, g) for g in r.range)
                ):
                    continue
                seen = self._data(head, r.type, tail)
                if seen is False:
                    bonus_d = bonus - 2.0
                else:
                    bonus_d = bonus + (0.5 if seen else 0.0)
                out.append((r.type, direction, bonus_d))
        out.sort(key=lambda x: -x[2])
        return out

    def _links(self, target: str, anchor: Sense, frame: Frame) -> list[tuple[str, float]]:
        """Path patterns from ``t`` to the anchor variable ``{A}``, with a prior bonus."""
        hinted = frame.relations
        direct = [
            (f"(t)-[{{F}}:{r}]->({{A}})" if d == "out" else f"({{A}})-[{{F}}:{r}]->(t)", b)
            for r, d, b in self._pairs(target, anchor.label, hinted)
        ]
        good = [x for x in direct if x[1] >= 0]
        hinted_direct = any(any(f":{r}]" in p for r in hinted) for p, _ in good)
        if good and (hinted_direct or not hinted):
            return good[:3]
        # two hops through a concept, the concepts the question names first (also when
        # the relation the question names fits no direct link: "indicators that track
        # US Treasuries" = indicators tracking bonds the Treasury issues)
        mids = [c for c in frame.concepts if c not in (target, anchor.label)]
        mids += [m for m in _MIDS if m not in mids]
        two: list[tuple[str, float]] = []
        for mid in mids:
            named = 0.5 if mid in frame.concepts else 0.0
            for r1, d1, b1 in self._pairs(target, mid, hinted)[:2]:
                for r2, d2, b2 in self._pairs(mid, anchor.label, hinted)[:2]:
                    if b1 < -0.5 or b2 < -0.5:
                        continue
                    h1 = (
                        f"(t)-[{{F}}:{r1}]->({{X}}:{mid})"
                        if d1 == "out"
                        else f"(t)<-[{{F}}:{r1}]-({{X}}:{mid})"
                    )
                    h2 = (
                        f"({{X}})-[{{F}}b:{r2}]->({{A}})"
                        if d2 == "out"
                        else f"({{X}})<-[{{F}}b:{r2}]-({{A}})"
                    )
                    two.append((f"{h1}, {h2}", b1 + b2 + named - 1.0))
        two.sort(key=lambda x: -x[1])
        if good:
            return good[:2] + [t for t in two if any(f":{r}]" in t[0] for r in hinted)][:2]
        return two[:3] or direct[:2]

    def _entity_sets(self, frame: Frame, now: datetime) -> list[Candidate]:
        if frame.agg in ("change", "first") or (
            frame.anchors and not frame.wh and frame.agg is None and not frame.values
        ):
            if not (frame.anchors and (frame.concepts or frame.target or frame.relations)):
                return []
        out: list[Candidate] = []
        if frame.most is not None:
            out.extend(self._group_most(frame))
        if frame.units.comparisons and (frame.agg == "count" or frame.wh):
            out.extend(self._group_having(frame))
        if frame.same_as and frame.anchors:
            out.extend(self._same_group(frame))
        for target in self._targets(frame):
            out.extend(self._entity_set(frame, target, now))
        return out

    # -- validity of the facts a query reads -----------------------------------------
    def _validity(
        self, frame: Frame, pats: list[str], params: dict[str, Any], *, successors: bool = True
    ) -> tuple[list[str], list[str]]:
        """Conditions (and OPTIONAL MATCHes) on every fact variable of ``pats``: currently
        valid; or valid in the question's window; and, with a knowledge time, recorded by
        then (a fact closed by a successor recorded later was still open as far as we
        knew then)."""
        win = frame.units.time
        known = frame.known_at
        timed = win is not None and (win.end_ms is not None or win.start_ms is not None)
        if timed or known is not None:
            end = win.end_ms if win is not None and win.end_ms is not None else None
            start = win.start_ms if win is not None and win.start_ms is not None else None
            if end is None and start is None:
                start, end = known, (known or 0) + 1
            elif end is None:
                end = (known + 1) if known is not None else 2**62
            if start is None:
                start = end - 1
            params["from_v"], params["to_v"] = start, end
        conds: list[str] = []
        opts: list[str] = []
        for f, head, rel in _fact_vars(" ".join(pats)):
            if known is not None:
                params["known_at"] = known
                conds.append(render(S.KNOWN_AT, f=f))
                if successors:
                    opts.append(render(S.SUCCESSOR_KNOWN, f=f, head=head, rel=rel))
                    conds.append(render(S.VALID_DURING_KNOWN, f=f))
                else:
                    conds.append(render(S.VALID_DURING, f=f))
            elif timed:
                conds.append(render(S.VALID_DURING, f=f))
            else:
                conds.append(render(S.VALID_NOW, f=f))
        return conds, opts

    def _finish(
        self,
        frame: Frame,
        pats: list[str],
        negs: list[tuple[str, str, dict[str, Any]]],
        where: list[str],
        params: dict[str, Any],
        base: list[str] | None = None,
        extra: list[str] | None = None,
    ) -> dict[str, str]:
        """The matches / optionals / where slots of an entity-set shape: the question's
        filters, the negated constraints and the validity of every fact read."""
        conds, opts = self._validity(frame, [*(base or []), *pats], params)
        for _opt, _cond, vp in negs:
            params.update(vp)
        opts = [o for o, _c, _p in negs if o] + opts
        conds = where + [c for _o, c, _p in negs] + conds + (extra or [])
        return self._clauses(pats, opts, conds)

    @staticmethod
    def _clauses(pats: list[str], opts: list[str], conds: list[str]) -> dict[str, str]:
        """The matches / optionals / where slots of an entity-set shape."""
        where = ""
        if conds:
            where = ("\nWITH * WHERE " if opts else "\nWHERE ") + " AND ".join(conds)
        return {
            "matches": "".join(f"\nMATCH {p}" for p in pats),
            "optionals": "".join(f"\n{o}" for o in opts),
            "where": where,
        }

    def _constraints(
        self, frame: Frame, target: str, anchors: list[Sense], start: int = 0
    ) -> list[tuple[list[str], list[str], float]] | None:
        """Patterns joining ``t`` to each positive anchor and conditions excluding each
        negated one, best combinations first (None when an anchor cannot be joined)."""
        combos: list[tuple[list[str], list[str], float]] = [([], [], 0.0)]
        same = [a for a in anchors if a.label == target]
        for k, a in enumerate(anchors, start):
            if a in same and a.key in frame.negated:  # "banks other than JPM": not JPM itself
                combos = [(p, [*n, ("", f"t.id <> $a{k}", {})], sc + 0.5) for p, n, sc in combos]
                continue
            links = self._links(target, a, frame)
            if a in same and not links:
                continue
            if not links:
                return None
            negated = a.key in frame.negated
            nxt = []
            for pats, negs, score in combos:
                for pat, bonus in links[: (1 if negated else 3)]:
                    p = (
                        pat.replace("{A}", f"a{k}:Entity {{id: $a{k}}}")
                        .replace("{F}", f"f{k}")
                        .replace("{X}", f"x{k}")
                    )
                    if negated:
                        # bind the anchor; the path is an OPTIONAL MATCH that must find nothing
                        q = p.replace(f"a{k}:Entity {{id: $a{k}}}", f"a{k}")
                        bind = f"(a{k}:Entity {{id: $a{k}}})"
                        first = _fact_vars(q)[0][0]
                        vp: dict[str, Any] = {}
                        vc, _ = self._validity(frame, [q], vp, successors=False)
                        where = (" WHERE " + " AND ".join(vc)) if vc else ""
                        opt = render(S.ABSENT, path=q, where=where)
                        neg = (opt, f"{first} IS NULL", vp)
                        nxt.append(([*pats, bind], [*negs, neg], score + bonus))
                    else:
                        nxt.append(([*pats, p], negs, score + bonus))
            combos = sorted(nxt, key=lambda x: -x[2])[:4]
        return combos

    def _same_group(self, frame: Frame) -> list[Candidate]:
        """Other members of the anchor's group ("same industry as Intel"), with the
        question's other constraints (listed in China, on the SSE, in a theme...)."""
        members = [a for a in frame.anchors if a.label not in _GROUPS and a.label != "Region"]
        if not members:
            return []
        a = members[0]
        rest = [x for x in frame.anchors if x.key != a.key]
        target = frame.target if frame.target and frame.target not in _GROUPS else a.label
        if target in ("Person", "Executive"):
            target = a.label
        said = [g for g, pats in triggers()["same_as_group"].items() if _any(pats, frame.question)]
        groups = [c for c in frame.concepts if c in _GROUPS and c != target]
        groups = said or groups or list(_GROUPS)
        out = []
        for g in groups[:3]:
            # the group's own relation, not one the other constraints name ("listed in")
            for r1, d1, b1 in self._pairs(target, g, [])[:1]:
                for r2, d2, b2 in self._pairs(a.label, g, [])[:1]:
                    if b1 < -0.5 or b2 < -0.5 or d1 != "out" or d2 != "out":
                        continue
                    base = f"(g0:Entity {{id: $g0}})-[fg0:{r2}]->(x:{g})<-[fg1:{r1}]-(t:{target})"
                    combos = self._constraints(frame, target, rest) or []
                    for pats, negs, score in combos:
                        params: dict[str, Any] = {"g0": a.key}
                        params.update({f"a{k}": x.key for k, x in enumerate(rest)})
                        where, wparams, used = self._target_filters(frame, target)
                        params.update(wparams)
                        extra = [] if frame.include_anchor else ["t.id <> $g0"]
                        slots = self._finish(frame, pats, negs, where, params, [base], extra)
                        ret, _ = self._entity_return(frame, target, used)
                        cy = render(
                            S.SAME_GROUP,
                            rel_anchor=r2,
                            group=g,
                            rel_target=r1,
                            target=target,
                            ret=ret,
                            **slots,
                        )
                        desc = shape(S.SAME_GROUP).describe.format(
                            target=target.lower(), group=g.lower(), name=a.name
                        ) + "".join(f" with {c}" for c in used)
                        prior = 5.0 + b1 + b2 + score + 0.5 * (len(pats) + len(used) + len(negs))
                        prior += 0.5 if g in frame.concepts else 0
                        out.append(Candidate(cy, params, desc, prior, "entities", [a.key]))
        return out

    def _group_most(self, frame: Frame) -> list[Candidate]:
        """The group (or property value) with the most members matching the question's
        other constraints ("which industry has the most companies listed in the US")."""
        named = [c for c in frame.concepts if c in self._concrete_labels()]
        prop = next((p for p in frame.properties if not self._numeric_props_has(p)), None)
        order = "max" if frame.most == "max" else "min"
        group, member, rels = self._group_and_member(frame, named)
        out: list[Candidate] = []
        if group is None and prop is not None and _IDENT.match(prop):
            member = member or (named[0] if named else "Company")
            for pats, negs, score in (self._constraints(frame, member, frame.anchors) or [])[:2]:
                params: dict[str, Any] = {f"a{k}": x.key for k, x in enumerate(frame.anchors)}
                where, wparams, _used = self._target_filters(frame, member)
                params.update(wparams)
                slots = self._finish(frame, pats, negs, where, params)
                cy = render(S.VALUE_ARGMAX, member=member, prop=prop, order=order, **slots)
                desc = shape(S.VALUE_ARGMAX).describe.format(prop=prop, member=member.lower())
                out.append(Candidate(cy, params, desc, 6.0 + score, "entities", []))
        if group is None or member is None:
            return out
        combos = self._constraints(frame, member, list(frame.anchors)) or []
        for rel in rels[:2]:
            for pats, negs, score in combos[:2]:
                params = {f"a{k}": x.key for k, x in enumerate(frame.anchors)}
                where, wparams, _used = self._target_filters(frame, member)
                params.update(wparams)
                base = f"(t)-[fr:{rel}]->(g)"
                slots = self._finish(frame, pats, negs, where, params, [base])
                cy = render(
                    S.GROUP_ARGMAX, member=member, rel=rel, group=group, order=order, **slots
                )
                if frame.rank is not None:  # "tied for the second most"
                    params["rank"] = frame.rank
                    way = "DESC" if order == "max" else "ASC"
                    cy = render(
                        S.GROUP_RANK, member=member, rel=rel, group=group, order=way, **slots
                    )
                desc = shape(S.GROUP_ARGMAX).describe.format(
                    group=group.lower(), member=member.lower()
                )
                prior = 5.5 + score + (1.0 if rel in frame.relations else 0.0)
                out.append(Candidate(cy, params, desc, prior, "entities", []))
        return out

    def _named_most(self, frame: Frame) -> list[Candidate]:
        """Which of two or more named groups has more members ("who issues more bonds,
        MOF or CDB", "财政部和国开行谁发的债多", "which industry has more companies, banks or
        semis"): the member count of each named one, the highest (lowest) answers."""
        order = frame.compare or frame.most
        if order is None:
            return []
        by_label: dict[str, list[str]] = {}
        for a in frame.anchors:
            if a.key not in frame.negated:
                for x in frame.either.get(a.key, [a.key]):
                    ids = by_label.setdefault(a.label, [])
                    if x not in ids:
                        ids.append(x)
        named = [c for c in frame.concepts if c in self._concrete_labels()]
        out: list[Candidate] = []
        for group, ids in by_label.items():
            if len(ids) < 2 or group in ("Indicator",) or not _IDENT.match(group):
                continue
            by_rel = [
                (o, r, d)
                for (h, r, t) in self.lex.edge_stats
                if r in frame.relations and group in (h, t)
                for o, d in ((h, "in"), (t, "out"))
                if o != group
            ]
            members = sorted({c for c in named if c != group}, key=lambda c: c == "Person")
            links = [*by_rel]
            for member in [*members, "Company"]:
                links += [
                    (member, r, "in")
                    for r, d, _b in self._pairs(member, group, [])
                    if d == "out" and self._data(member, r, group)
                ]
            for member, rel, d in links:
                if not (_IDENT.match(member) and _IDENT.match(rel)):
                    continue
                path = (
                    f"(t:{member})-[fr:{rel}]->(g)"
                    if d == "in"
                    else f"(g)-[fr:{rel}]->(t:{member})"
                )
                fn = "max" if order == "max" else "min"
                cy = render(S.NAMED_ARGMAX, group=group, path=path, order=fn)
                desc = shape(S.NAMED_ARGMAX).describe.format(
                    group=group.lower(), member=member.lower()
                )
                prior = 7.0 + (1.0 if member in named or rel in frame.relations else 0.0)
                out.append(Candidate(cy, {"gids": ids}, desc, prior, "entities", ids))
                break
        return out

    def _group_having(self, frame: Frame) -> list[Candidate]:
        """How many groups have a number of members ("industries with only one company",
        "公司数超过两家的行业")."""
        named = [c for c in frame.concepts if c in self._concrete_labels()]
        group, member, rels = self._group_and_member(frame, named)
        if group is None or member is None or group == "Entity" or group != frame.target:
            return []
        c = frame.units.comparisons[0]
        if c.op not in (">", ">=", "<", "<=", "="):
            return []
        params: dict[str, Any] = {"members": c.value}
        matches, conds = "", ""
        if frame.anchors:  # the members' own constraints ("... companies listed in China")
            combos = self._constraints(frame, member, list(frame.anchors))
            if not combos:
                return []
            pats, _negs, _score = combos[0]
            params.update({f"a{k}": a.key for k, a in enumerate(frame.anchors)})
            vc, _opts = self._validity(frame, pats, params, successors=False)
            matches = "".join(f"\nMATCH {p}" for p in pats)
            conds = "".join(f" AND {x}" for x in vc)
        ret = (
            "RETURN count(g) AS count"
            if frame.agg == "count"
            else "RETURN g.id AS id, g.name AS name\nORDER BY id"
        )
        out = []
        for rel in rels[:1]:
            cy = render(
                S.GROUP_HAVING,
                group=group,
                rel=rel,
                member=member,
                op=c.op,
                matches=matches,
                conds=conds,
                ret=ret,
            )
            desc = shape(S.GROUP_HAVING).describe.format(
                group=group.lower(), op=f"{c.op} {c.value:g}"
            )
            out.append(Candidate(cy, params, desc, 6.0, "entities", []))
        return out

    def _group_and_member(
        self, frame: Frame, named: list[str]
    ) -> tuple[str | None, str | None, list[str]]:
        """(group label, member label, relations member -> group) of a "which X has the
        most Y" question: a named concept that the graph links another named concept (or
        companies) to; else a named relation's far end ("issuers with the most bonds")."""
        order = [frame.target] if frame.target in named else []
        order += [c for c in named if c not in order]
        for g in order:
            for m in [*[c for c in named if c != g], "Company"]:
                if m == g:
                    continue
                rels = [
                    r for r, d, _b in self._pairs(m, g, []) if d == "out" and self._data(m, r, g)
                ]
                if rels:
                    hinted = [r for r in rels if r in frame.relations]
                    return g, m, hinted or rels
        for r in frame.relations:
            rel = self.onto.relation(r)
            if rel is None:
                continue
            for m in [*named, "Company"]:
                if any(self.is_a(m, d) for d in rel.domain) and self._data(m, r, "Entity"):
                    return "Entity", m, [r]
        return None, (named[0] if named else None), []

    def _numeric_props_has(self, prop: str) -> bool:
        return any(prop in self._numeric_props(c.label) for c in self.onto.concepts)

    def _regions_as_values(self, frame: Frame, target: str) -> Frame:
        """A region named for entities that have no edge to a region but record a country
        ("美国的指标", "chinese monthly indicators"): their ``country`` property instead."""
        members = [e for e in self.lex.entities.values() if e.get("label") == target]
        countries = {e.get("country") for e in members}
        if not any(a.label == "Region" and a.key in countries for a in frame.anchors):
            return frame
        if any(
            self._data(target, r.type, "Region") or self._data("Region", r.type, target)
            for r in self.onto.relations
        ):
            return frame  # the graph links them to regions: the edge decides
        keep = [a for a in frame.anchors if not (a.label == "Region" and a.key in countries)]
        moved = [a for a in frame.anchors if a not in keep]
        values = [*frame.values, *(Sense("value", "country", a.key) for a in moved)]
        negated = frame.negated | {f"country={a.key}" for a in moved if a.key in frame.negated}
        return replace(frame, anchors=keep, values=values, negated=frozenset(negated))

    def _chain_path(self, labels: list[str], rels: list[str | None]) -> str | None:
        """The pattern from the named entity ``a0`` through ``labels`` (the last bound to
        ``t``, those between to ``x1``, ``x2``...), each hop by its relation word or the
        graph's commonest join; None when a hop has no join or a label is not plain."""
        parts = ["(a0:Entity {id: $a0})"]
        for k, (lab, rel) in enumerate(zip(labels[1:], rels, strict=True), 1):
            hop = self._hop(labels[k - 1], lab, rel)
            if hop is None or not _IDENT.match(lab):
                return None
            r, d = hop
            node = f"(t:{lab})" if k == len(labels) - 1 else f"(x{k}:{lab})"
            parts.append(f"-[f{k}:{r}]->{node}" if d == "out" else f"<-[f{k}:{r}]-{node}")
        return "".join(parts)

    def _hop(self, a: str, b: str, rel: str | None) -> tuple[str, str] | None:
        """(relationship type, direction) joining label ``a`` to ``b`` in the graph: the
        named relation if it joins them, else the one with the most edges."""
        best: tuple[int, str, str] | None = None
        for (h, r, t), n in self.lex.edge_stats.items():
            for d, x, y in (("out", h, t), ("in", t, h)):
                if (x == a or self.is_a(a, x)) and (y == b or self.is_a(b, y)):
                    score = n + (10**9 if r == rel else 0)
                    if best is None or score > best[0]:
                        best = (score, r, d)
        return None if best is None or not _IDENT.match(best[1]) else (best[1], best[2])

    def _chain(self, frame: Frame) -> list[Candidate]:
        """Three or more hops from the one named entity through the concepts named after
        it, in order ("张坤的基金持有的股票属于哪个行业", "the industry of the stocks E Fund
        Blue Chip holds"); a relation word after the last concept names one more hop
        ("what does Zhang Kun's fund hold"). Each hop's relation: the word between, else
        the graph's most common edge between the two kinds."""
        seq = list(frame.sequence)
        ents = [x for x in seq if x[0] == "E"]
        if len(ents) == 1 and seq and seq[0][0] == "C" and seq[0][2] == "wh":
            # "which industries are the stocks held by Zhang Kun's fund in": read backwards,
            # the possessive's concept staying after its owner ("Zhang Kun's fund")
            seq = seq[::-1]
            if len(seq) > 1 and seq[0][0] == "C" and seq[1][0] == "E":
                seq[0], seq[1] = seq[1], seq[0]
        elif len(seq) == 3 and [x[0] for x in seq] == ["R", "E", "C"]:
            # "the holdings of Zhang Kun's fund": a relation noun before the entity's concept
            # names the hop after it, as "what does Zhang Kun's fund hold" does
            seq = [*seq[1:], seq[0]]
        elif len(seq) == 4 and [x[0] for x in seq[:2]] == ["R", "C"]:
            # "the holdings of the fund Zhang Kun manages / managed by Zhang Kun": the
            # clause's relation joins the entity to the concept, the first one goes on
            e = next((x for x in seq[2:] if x[0] == "E"), None)
            r = next((x for x in seq[2:] if x[0] == "R"), None)
            if e is not None and r is not None:
                seq = [e, r, seq[1], seq[0]]
        if (
            len(ents) != 1
            or seq[0][0] != "E"
            or frame.units.time is not None
            or frame.units.comparisons
            or any(x[0] == "V" for x in seq)  # values constrain: the entity-set shapes
            or frame.bare_relations
            or frame.negated
            or frame.properties  # "在哪个交易所上市": an attribute
        ):
            return []
        labels: list[str] = [ents[0][2]]
        rels: list[str | None] = []
        pending: str | None = None
        for item in seq[1:]:
            if item[0] == "R":
                pending = item[1]
            elif item[0] == "C" and item[1] != labels[-1]:
                labels.append(item[1])
                rels.append(pending)
                pending = None
        asked = any(x[0] == "C" and x[2] == "wh" and x[1] == labels[-1] for x in seq)
        extended = False
        if pending is not None and not asked:  # "what does Zhang Kun's fund hold"
            ends = {
                (t if h == labels[-1] else h)
                for (h, r, t) in self.lex.edge_stats
                if r == pending and labels[-1] in (h, t)
            }
            if len(ends) == 1:
                labels.append(ends.pop())
                rels.append(pending)
                extended = True
        if len(labels) < (2 if extended else 3):
            return []  # one hop: the entity-set shapes' job
        if len(labels) == 3 and rels[-1] is None and not asked and not extended:
            return []  # two hops with nothing asked of the last: the other shapes' job
        path = self._chain_path(labels, rels)
        if path is None:
            return []
        params: dict[str, Any] = {"a0": ents[0][1]}
        conds, _opts = self._validity(frame, [path], params, successors=False)
        where = ("\nWHERE " + " AND ".join(conds)) if conds else ""
        target = labels[-1]
        ret, desc_ret = self._entity_return(frame, target, [])
        cy = render(S.ENTITY_CHAIN, path=path, where=where, ret=ret)
        desc = f"{desc_ret} {target.lower()} reached from {ents[0][1]} via {' '.join(labels[1:-1])}"
        prior = 5.0 + (1.0 if target == frame.target else 0.0)
        return [Candidate(cy, params, desc, prior, "entities", [ents[0][1]])]

    def _relation_walk(self, frame: Frame) -> list[Candidate]:
        """Two or more relation words walked out from the one named entity, nearest first
        ("who issued the bond that US2Y tracks", "中国10年国债收益率跟踪的那只债是谁发的":
        indicator -TRACKS-> bond -ISSUED_BY-> issuer), each hop to the one kind the graph
        joins by that relation; for an entity whose words name no concept on the way."""
        seq = list(frame.sequence)
        ents = [i for i, x in enumerate(seq) if x[0] == "E"]
        rels = [i for i, x in enumerate(seq) if x[0] == "R"]
        if (
            len(ents) != 1
            or len(rels) < 2
            or any(x[0] == "V" for x in seq)
            or frame.units.time is not None
            or frame.units.comparisons
            or frame.negated
            or frame.properties
        ):
            return []
        e = ents[0]
        if len({seq[i][1] for i in rels}) != len(rels):
            return []  # "who runs Tesla as CEO": one relation named twice, not a walk
        order = sorted(rels, key=lambda i: (abs(i - e), i))
        labels = [seq[e][2]]
        hops: list[str] = []
        for i in order:
            r = seq[i][1]
            ends = {
                (t if self.is_a(labels[-1], h) else h)
                for (h, rr, t) in self.lex.edge_stats
                if rr == r and (self.is_a(labels[-1], h) or self.is_a(labels[-1], t))
            } - set(labels)
            if len(ends) != 1:
                return []  # no single kind, or back to one already passed
            labels.append(ends.pop())
            hops.append(r)
        target = labels[-1]
        if frame.target not in (None, "Person", target) or not _IDENT.match(target):
            return []
        path = self._chain_path(labels, hops)
        if path is None:
            return []
        params: dict[str, Any] = {"a0": seq[e][1]}
        conds, _opts = self._validity(frame, [path], params, successors=False)
        where = ("\nWHERE " + " AND ".join(conds)) if conds else ""
        ret, desc_ret = self._entity_return(frame, target, [])
        cy = render(S.ENTITY_CHAIN, path=path, where=where, ret=ret)
        desc = f"{desc_ret} {target.lower()} reached from {seq[e][1]} via {' '.join(hops)}"
        return [Candidate(cy, params, desc, 5.5, "entities", [seq[e][1]])]

    def _which_of_named(self, frame: Frame, now: datetime) -> list[Candidate]:
        """Which of the named entities meets the rest of the question ("BYD or CATL - which
        one has a chairman on file", "ICBC和招行哪个在深交所上市"): the entity set of their
        kind restricted to them (possibly none)."""
        if not _WHICH_NAMED.search(frame.question):
            return []
        named = [a for a in frame.anchors if a.label not in ("Indicator",)]
        by_label: dict[str, list[str]] = {}
        for a in named:
            by_label.setdefault(a.label, []).append(a.key)
        label, ids = max(by_label.items(), key=lambda kv: len(kv[1]), default=("", []))
        if len(ids) < 2 or not _IDENT.match(label):
            return []
        sub = replace(
            frame,
            anchors=[a for a in frame.anchors if a.key not in ids],
            target=label,
            concepts=[label, *(c for c in frame.concepts if c != label)],
            either={},
        )
        out = self._entity_set(sub, label, now, restrict=ids)
        for c in out:
            c.prior += 3.0
            c.description = f"which of {', '.join(ids)}: {c.description}"
            c.conclusive = True
        return out

    def _entity_set(
        self, frame: Frame, target: str, now: datetime, restrict: list[str] | None = None
    ) -> list[Candidate]:
        frame = self._regions_as_values(frame, target)
        others = {x for ids in frame.either.values() for x in ids[1:]}
        anchors = [a for a in frame.anchors if a.key not in others]  # one per "A or B"
        same = [a for a in anchors if a.label == target]
        combos = self._constraints(frame, target, anchors)
        if combos is None:
            return []
        params_base: dict[str, Any] = {f"a{k}": a.key for k, a in enumerate(anchors)}
        where, wparams, used = self._target_filters(frame, target)
        vpats = self._value_hops(frame, target, where, wparams, used)
        combos = [([*vpats, *p], n, sc + 0.5 * len(vpats)) for p, n, sc in combos]
        out = []
        for pats, negs, score in combos:
            params = {**params_base, **wparams}
            extra = []
            if restrict:  # "which of A and B ...": only the named ones
                params["ids"] = restrict
                extra.append("t.id IN $ids")
            for k, a in enumerate(anchors):  # "A or B": the anchor node is any of them
                if a.key in frame.either and a.key not in frame.negated:
                    node = f"(a{k}:Entity {{id: $a{k}}})"
                    pats = [p.replace(node, f"(a{k}:Entity)") for p in pats]
                    params[f"a{k}"] = frame.either[a.key]
                    extra.append(f"a{k}.id IN $a{k}")
            if same and not frame.include_anchor:
                extra.append(
                    "NOT t.id IN [" + ", ".join(f"$a{anchors.index(a)}" for a in same) + "]"
                )
            edges = self._edge_exists(frame, target, pats) + self._has_data(frame, target, params)
            slots = self._finish(frame, pats, [*negs, *edges], where, params, None, extra)
            ret, desc_ret = self._entity_return(frame, target, used)
            cy = render(S.ENTITY_SET, target=target, ret=ret, **slots)
            pos = [a for a in anchors if a.key not in frame.negated]
            desc = (
                f"{desc_ret} {target.lower()}"
                + "".join(f" {_rel_words(p)} {a.name}" for p, a in zip(pats, pos, strict=False))
                + "".join(f" not {a.name}" for a in anchors if a.key in frame.negated)
                + "".join(f" with {c}" for c in used)
            )
            prior = 1.0 + score + 0.5 * (len(used) + len(negs))
            prior += 0.5 if target in frame.concepts else 0
            if not anchors and not used and target not in frame.concepts:
                prior -= 2
            if target == frame.target:
                prior += 1.5
            if same and not frame.same_as:
                prior -= 2.0  # companies "related" to a company without asking for peers
            if frame.agg in ("latest", "change", "first") or (
                frame.units.time is not None
                and frame.units.time.kind not in ("as_of", "year", "month")
            ):
                prior -= 2.0  # values over time are series questions
            hinted = any(f":{r}]" in " ".join(pats) for r in frame.relations) or bool(edges)
            prior += 0.5 * len(edges)
            c = Candidate(cy, params, desc, prior, "entities", [a.key for a in anchors])
            c.supported = bool(used or negs or hinted or extra) or (
                not anchors and target in frame.concepts and frame.agg == "count"
            )
            out.append(c)
        return out

    def _has_data(
        self, frame: Frame, target: str, params: dict[str, Any]
    ) -> list[tuple[str, str, dict[str, Any]]]:
        """Indicators with (without) points, in the question's window when it names one
        ("月度指标里有数据的有几个", "how many monthly indicators have no observations")."""
        trig = triggers()["has_data"]
        if target != "Indicator" or not _any(trig["patterns"], frame.question):
            return []
        neg = _any(trig["negated"], frame.question)
        win = frame.units.time
        conds = ["ob IS NOT NULL"]
        if win is not None and win.start_ms is not None:
            params["from_d"] = win.start_ms
            conds.append("coalesce(ob.observed_at, ob.last_at) >= $from_d")
        if win is not None and win.end_ms is not None:
            params["to_d"] = win.end_ms
            conds.append("coalesce(ob.observed_at, ob.first_at) < $to_d")
        where = " WHERE " + " AND ".join(conds[1:]) if len(conds) > 1 else ""
        opt = render(S.ABSENT, path="(t)-[:HAS_OBSERVATION|HAS_DAILY]->(ob)", where=where)
        return [(opt, f"ob IS {'NULL' if neg else 'NOT NULL'}", {})]

    def _edge_exists(
        self, frame: Frame, target: str, pats: list[str]
    ) -> list[tuple[str, str, dict[str, Any]]]:
        """Edges that must (not) exist from the target, for relations named with nothing
        after them ("firms with a CEO recorded", "没有CEO记录的公司"): an OPTIONAL MATCH of
        the current edge that must find something (nothing); a concept named for the
        other end is its label ("don't belong to any theme")."""
        out: list[tuple[str, str, dict[str, Any]]] = []
        used = " ".join(pats)
        for k, (rel, neg) in enumerate(frame.bare_relations):
            kind = rel[1:] if rel.startswith("*") else None  # any relation to that concept
            if kind is None and f":{rel}]" in used:
                continue
            links = {
                (d, r, other)
                for (h, r, t), _n in self.lex.edge_stats.items()
                if (r == rel if kind is None else r in _MEMBERSHIP)
                for d, mine, other in (("out", h, t), ("in", t, h))
                if mine == target or self.is_a(target, mine)
            }
            if kind is not None:
                links = {x for x in links if x[2] == kind}
                if not links or any(f"(:{kind})" in u for u in used.split("MATCH")):
                    continue
                rel = sorted(links)[0][1]
            ends = {(d, o) for d, _r, o in links}
            if not ends or not _IDENT.match(rel):
                continue
            named = [kind] if kind else []
            named = named or [
                c for c in frame.concepts if c != target and any(o == c for _d, o in ends)
            ]
            d = next((d for d, o in sorted(ends) if not named or o == named[0]), None)
            if d is None:
                continue
            node = f"(:{named[0]})" if named else "()"
            e = f"e{k}"
            path = f"(t)-[{e}:{rel}]->{node}" if d == "out" else f"(t)<-[{e}:{rel}]-{node}"
            opt = render(S.ABSENT, path=path, where=f" WHERE {e}.valid_to IS NULL")
            out.append((opt, f"{e} IS {'NULL' if neg else 'NOT NULL'}", {}))
        return out

    def _value_hops(
        self,
        frame: Frame,
        target: str,
        where: list[str],
        params: dict[str, Any],
        used: list[str],
    ) -> list[str]:
        """Values of a named concept one relation away from the target ("CEOs of
        Nasdaq-listed companies": the exchange is the company's)."""
        pats = []
        for k, v in enumerate(frame.values):
            labels = self.lex.value_props.get(v.key, set())
            if any(self.is_a(target, lb) or self.is_a(lb, target) for lb in labels):
                continue
            mid = next(
                (
                    c
                    for c in frame.concepts
                    if c != target and any(self.is_a(c, lb) for lb in labels)
                ),
                None,
            )
            if mid is None or not _IDENT.match(v.key):
                continue
            pairs = [x for x in self._pairs(target, mid, frame.relations) if x[2] >= 0]
            if not pairs:
                continue
            r, d, _b = pairs[0]
            pats.append(
                f"(t)-[fv{k}:{r}]->(xv{k}:{mid})"
                if d == "out"
                else f"(t)<-[fv{k}:{r}]-(xv{k}:{mid})"
            )
            params[f"vv{k}"] = v.label
            where.append(f"xv{k}.{v.key} = $vv{k}")
            used.append(f"{mid.lower()} {v.key} {v.label}")
        return pats

    def _target_filters(
        self, frame: Frame, target: str
    ) -> tuple[list[str], dict[str, Any], list[str]]:
        where: list[str] = []
        params: dict[str, Any] = {}
        used: list[str] = []
        seen: dict[str, int] = {}  # property -> index of its positive values' clause
        for k, v in enumerate(frame.values):
            labels = self.lex.value_props.get(v.key, set())
            if not any(self.is_a(target, lb) or self.is_a(lb, target) for lb in labels):
                continue
            negated = f"{v.key}={v.label}" in frame.negated
            if not _IDENT.match(v.key):
                continue
            if not negated and v.key in seen:  # "NASDAQ or NYSE companies": one property
                at = seen[v.key]  # holds one value, so two named values mean either one
                name = f"v{at}"
                if v.label not in params[name]:
                    params[name] = [*params[name], v.label]
                    where[where.index(f"t.{v.key} = ${name}")] = f"t.{v.key} IN ${name}"
                    used.append(f"or {v.label}")
                continue
            if negated:  # every excluded value counts
                params[f"v{k}"] = v.label
                where.append(f"(t.{v.key} IS NULL OR t.{v.key} <> $v{k})")
                used.append(f"{v.key} not {v.label}")
            else:
                seen[v.key] = k
                params[f"v{k}"] = [v.label]
                where.append(f"t.{v.key} = $v{k}")
                used.append(f"{v.key} {v.label}")
        for k in seen.values():  # a single value stays a plain equality
            if len(params[f"v{k}"]) == 1:
                params[f"v{k}"] = params[f"v{k}"][0]
        if frame.prefix is not None:  # "whose code starts with 60"
            pprop, pval = frame.prefix
            has = any(e.get("label") == target and pprop in e for e in self.lex.entities.values())
            if has and _IDENT.match(pprop):
                params["pfx"] = pval
                where.append(f"toUpper(t.{pprop}) STARTS WITH $pfx")
                used.append(f"{pprop} starting with {pval}")
        numeric = self._numeric_props(target)
        prop = next((p for p in frame.properties if p in numeric), None)
        if prop is None and target == "Indicator":
            prop = "last_value"
        if frame.prefix is not None:
            prop = None  # the prefix's digits are no threshold
        for k, c in enumerate(frame.units.comparisons):
            if prop is None:
                break
            params[f"c{k}"] = c.value
            where.append(f"t.{prop} {c.op} $c{k}")
            used.append(f"{prop} {c.op} {c.value:g}")
        return where, params, used

    def _entity_return(self, frame: Frame, target: str, used: list[str]) -> tuple[str, str]:
        numeric = self._numeric_props(target)
        prop = next((p for p in frame.properties if p in numeric), None)
        if prop is None and target == "Indicator" and frame.agg in ("max", "min", "avg"):
            prop = "last_value"
        if frame.agg == "count":
            return render(S.RET_COUNT), shape(S.RET_COUNT).describe
        if frame.agg in ("max", "min") and prop:
            q = frame.question
            if _WHICH.search(q) or _WHAT_NOUN.search(q) or "哪" in q:
                ret = render(S.RET_TOP_BY_PROP, prop=prop, fn=frame.agg)
                return ret, f"the {frame.agg} {prop}"
            return render(S.RET_AGG_PROP, fn=frame.agg, prop=prop), f"{frame.agg} {prop} of"
        if frame.agg == "avg" and prop:
            return render(S.RET_AGG_PROP, fn="avg", prop=prop), f"average {prop} of"
        return render(S.RET_ENTITIES), shape(S.RET_ENTITIES).describe

    def _describe(self, frame: Frame) -> Candidate:
        a = frame.anchors[0]
        cy = render(S.DESCRIBE)
        return Candidate(cy, {"a": a.key}, f"what {a.name} is", 0.0, "describe", [a.key])


_VALUE_AGGS = ("max", "min", "avg", "change", "first", "latest")
# windows that name one reading of a monthly series or one day's close
# One value per day ([daily] in triggers.toml): which of the day's ticks (vs, by time).
_CLOSE_WORD = re.compile(r"\bclos(?:e|es|ing)\b(?! (?:above|below|over|under|higher|lower))|收盘")
_DAILY_PICKS = {
    "range": f"{_folds('vs')['max']} - {_folds('vs')['min']}",
    "high": _folds("vs")["max"],
    "low": _folds("vs")["min"],
    "close": "vs[size(vs) - 1]",
    "open": "vs[0]",
    "close_open": "vs[size(vs) - 1] - vs[0]",  # the day's move, close against open
}


def _month_starts(win: TimeWindow | None) -> list[int]:
    """Epoch ms of the first instant of every calendar month from the window's start (or
    ten years back) to a month past its end (or past now): a time's month is the number
    of these starts not after it."""
    end = datetime.now(UTC)
    if win and win.end_ms is not None:
        end = datetime.fromtimestamp(win.end_ms / 1000, UTC)
    if win and win.start_ms is not None:
        start = datetime.fromtimestamp(win.start_ms / 1000, UTC)
    else:
        start = end.replace(year=end.year - 10)
    y, m = start.year, start.month
    out = []
    while (y, m) <= (end.year + (end.month // 12), end.month % 12 + 1):
        out.append(int(datetime(y, m, 1, tzinfo=UTC).timestamp() * 1000))
        y, m = (y + 1, 1) if m == 12 else (y, m + 1)
    return out


def _ever(frame: Frame) -> bool:
    return _any(triggers()["ever"]["patterns"], frame.question)


_DAILY_AGGS = ("max", "min", "avg", "change", None, "latest", "count")
_ONE_VALUE_WINDOWS = ("month", "month_noyear", "last_month", "as_of")
_GROUPS = ("Industry", "Theme", "Region")
_MIDS = (
    "Company",
    "Fund",
    "Industry",
    "Theme",
    "Indicator",
    "Bond",
    "Institution",
    "Product",
    "Event",
)

# relations tried when the question names none (the universe's structure)
_DEFAULT_RELS = frozenset(
    {
        "BELONGS_TO",
        "LISTED_IN",
        "ISSUED_BY",
        "HAS_CEO",
        "HAS_CHAIRMAN",
        "HAS_STAKE_IN",
        "MANAGES",
        "TRACKS",
        "SETS_POLICY",
        "EXECUTIVE_OF",
        "OPERATES_IN",
    }
)


_FACT_OUT = re.compile(r"\((\w+)[^()]*\)-\[(f\w*):(\w+)\]->")
_FACT_IN = re.compile(r"<-\[(f\w*):(\w+)\]-\((\w+)")


def _fact_vars(text: str) -> list[tuple[str, str, str]]:
    """(fact variable, its head node variable, relationship type) in a MATCH pattern."""
    out = [(m.group(2), m.group(1), m.group(3)) for m in _FACT_OUT.finditer(text)]
    out += [(m.group(1), m.group(3), m.group(2)) for m in _FACT_IN.finditer(text)]
    seen: set[str] = set()
    return [x for x in out if not (x[0] in seen or seen.add(x[0]))]  # type: ignore[func-returns-value]


def _rel_words(pattern: str) -> str:
    m = re.search(r":([A-Z_]+)\]", pattern)
    return m.group(1).lower().replace("_", " ") if m else "related to"
