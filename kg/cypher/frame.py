"""A question read into slots (FinQA, "Cypher Synthesis", first half): the ``Frame``
of a question (anchors, concepts, relation, property and value words, aggregation,
comparisons, time window and the question forms of ``triggers.toml``), the ``ReadingCandidate``
a builder makes of it, and the helpers the builders share (kg/cypher/builders/).

Labels, relationship types and property names come only from the ontology and the
graph's own keys, so they may be written into a query; every value travels as a
parameter.
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
    Mention,
    Sense,
    _normalize,
    _singular,
    trigger_regex,
    triggers,
)
from kg.cypher.shapes import ShapeName as S
from kg.cypher.units import Comparison, TimeWindow, Units, aggregation, untimed
from kg.graph.ontology import default_ontology

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
_WORD_NUMS = {"six": 6, "seven": 7, "eight": 8, "nine": 9, "六": 6, "七": 7, "八": 8, "九": 9}


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
class ReadingCandidate:
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
    direction: str | None = None  # "up" | "down" | "any" (with mom): the changes a count asks for
    prefix: tuple[str, str] | None = None  # (property, first characters): "code starts with 60"
    rank: int | None = None  # "the second most": the k-th level of a ranking
    tail_days: int | None = None  # "the last 5 trading days of august": the window's last n days
    values_either: bool = False  # "unit = index or category = policy_rate": either filter holds

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

    def hit(pats: list[str], text: str | None = None) -> re.Match[str] | None:
        for p in pats:
            m = trigger_regex(p).search(question if text is None else text)
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
    both = hit(trig["both_days"]["patterns"])
    if daily is None and both:
        daily = "close"  # "两边都有数据的日子里": each one's value of the day, joined by day
    # "using the days on which both were published" says which days count, not that the
    # question asks for days: the phrase is no period or point-in-time question word
    unboth = question if not both else question[: both.start()] + question[both.end() :]
    unboth = untimed(unboth)  # "which day ... in the first half", "all of last month"
    if hit(trig["close_vs_open"]["up"]) or hit(trig["close_vs_open"]["down"]):
        daily = "close_open"
    ln = hit(trig["last_n"]["patterns"])
    last_n = None
    if ln:
        n = ln.group("n").lower()
        last_n = int(n) if n.isdigit() else _NUMS.get(n)
    if units.aggregation == "count" and _SOME_OF.search(question) and _WHICH_OF.search(question):
        # "货币市场类的几个指标，昨天谁的日内振幅最大": "these few" names a set, "who" asks
        units = replace(units, aggregation=aggregation(question, skip=("count",)))
    target = _wh_target(tokens, mentions)
    bare = _bare_relations(question, tokens, mentions, target)
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
    tail = hit(next(t["patterns"] for t in trig["times"] if t["kind"] == "month_tail"))
    tail_days = None
    if tail:
        n = tail.group("n").lower()
        tail_days = int(n) if n.isdigit() else _NUMS.get(n) or _WORD_NUMS.get(n)
        daily = daily or "close"  # the days' values: their closes
    frame = Frame(
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
        either=_alternatives(tokens, mentions, question),
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
        periods=hit(trig["periods"]["patterns"], unboth) is not None,
        in_bp=hit(trig["answer_bp"]["patterns"]) is not None,
        mom=hit(trig["mom"]["patterns"]) is not None,
        point_time="day"
        if hit(trig["point_time"]["day"], unboth)
        else ("month" if hit(trig["point_time"]["month"], unboth) else None),
        direction="up"
        if hit(trig["direction"]["up"])
        else (
            "down"
            if hit(trig["direction"]["down"])
            else ("any" if hit(trig["mom"]["patterns"]) and hit(trig["direction"]["any"]) else None)
        ),
        prefix=prefix,
        rank=2 if hit(trig["rank"]["second"]) else (3 if hit(trig["rank"]["third"]) else None),
        tail_days=tail_days,
        values_either=_values_either(tokens, mentions),
    )
    return series_versus(frame, tokens, mentions)


def series_versus(frame: Frame, tokens: list[str], mentions: list[Mention]) -> Frame:
    """Two series compared with no number of their own ("days SOFR > US_EFFR", "the 2y
    closing above the 10y", "3m higher than the 10y at the close"): the derived series
    first minus second against zero (``kg/cypher/builders/derived.py``). A comparison
    whose "number" is the second series' tenor ("above the 10y": 10) is that one."""
    inds = [m for m in mentions if m.of("entity") and m.of("entity")[0].label == "Indicator"]
    if len(inds) != 2 or frame.spread:
        return frame
    first, second = inds
    text = _normalize(frame.question)
    ops: list[tuple[str, int]] = []
    for item in triggers()["comparisons"]:
        if item["op"] == "=":
            continue
        for p in item["patterns"]:
            for m in trigger_regex(p).finditer(text):
                at = _token_at(frame.question, tokens, m.start())
                if first.start < at <= second.start and second.start - at <= 4:
                    ops.append((item["op"], m.start()))
    if len(ops) != 1:
        return frame
    op, pos = ops[0]
    tenor = re.search(r"\d+", second.text)
    kept = tuple(
        c
        for c in frame.units.comparisons
        if not (tenor and c.value == float(tenor.group()) and c.pos == pos)
    )
    if len(kept) != len(frame.units.comparisons) - (1 if len(frame.units.comparisons) else 0):
        return frame  # a number of its own ("SOFR above 5.3 while ..."): not a pair
    units = replace(frame.units, comparisons=(*kept, Comparison(op, 0.0, pos)))
    return replace(
        frame,
        units=units,
        spread=True,
        compare_at=tuple(_token_at(frame.question, tokens, c.pos) for c in units.comparisons),
    )


_PREFIX_PROPS = ("code", "ticker")
_SOME_OF = re.compile(r"[的这那]几[个只家]")  # "的几个指标": a set named, not a count asked
_WHICH_OF = re.compile(r"谁|哪个|哪一个|哪只|哪家")


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
    for table in ("aggregations", "comparisons", "comparisons_after", "comparisons_sign", "times"):
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
        "fall",
        "mom",
        "union",
    ):
        pats.extend(trig[key]["patterns"])
    pats.extend(trig["dates"]["patterns"])
    for key in ("most", "daily", "top_n", "point_time"):
        for v in trig[key].values():
            pats.extend(v)
    for group in trig["same_as_group"].values():
        pats.extend(group)
    pats.extend(trig["filler"]["patterns"])
    pats.extend(trig["discourse"]["patterns"])
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
        g = m.groupdict()
        for n, u in ((m.group("b"), g.get("ub")), (m.group("a"), g.get("ua"))):
            eid = spec["series"].format(n=int(n), u=(u or "y").upper())
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


# A name right after one of these is the object of a preposition, never a clause's subject.
_PREPOSITIONS = frozenset({"in", "on", "at", "from", "of", "for", "to", "by", "within", "across"})


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
        lead = [t for t in tokens[max(0, subject.start - 3) : subject.start] if t != "the"]
        if lead and lead[-1] in _PREPOSITIONS:
            continue  # "institutions in the US have no chairman": the US is no subject
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


def _alternatives(
    tokens: list[str], mentions: list[Mention], question: str = ""
) -> dict[str, list[str]]:
    """Entities of one kind joined by "or" ("Liquor or Insurance", "石油石化或者煤炭"), or by
    "and" where every relation the question names holds one value ("bonds MOF and CDB
    issue", "美国财政部和财政部发行的债券": a bond has one issuer, so it is either), or by "and"
    when the question takes them as one set ("put together", "加起来"): the first one's id ->
    the ids of the group."""
    words = set(triggers()["either"]["tokens"])
    rels = {s.key for m in mentions for s in m.of("relation")}
    union = _any(triggers()["union"]["patterns"], question or " ".join(tokens))
    if union or (rels and rels <= default_ontology().functional_relation_types):
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
    question: str, tokens: list[str], mentions: list[Mention], target: str | None = None
) -> tuple[tuple[str, bool], ...]:
    """Relation words with no entity or value named right after them, in a question that
    asks whether an edge exists ("have a CEO recorded", "有CEO记录", "no chairman on file",
    "don't belong to any theme"); negated when a negation word is just before. A relation
    word right before a kind that is not the one asked ("institutions ... that issue bonds",
    "do not issue any bond") is an edge to that kind that must (not) exist."""
    window = int(triggers()["negation"]["window"])
    out = _edges_to_kinds(tokens, mentions, target, window)
    if not _any(triggers()["exists"]["patterns"], _normalize(question)):
        return tuple(out)
    for k, m in enumerate(mentions):
        rels = [s.key for s in m.of("relation")]
        if not rels or m.of("entity") or all(t in STOPWORDS for t in m.text.split()):
            continue  # "in the graph": a preposition, not a relation asked about
        nxt = mentions[k + 1] if k + 1 < len(mentions) else None
        if nxt is not None and nxt.start - m.end <= 2 and (nxt.of("entity") or nxt.of("value")):
            continue  # "listed in Shanghai": the relation's object is named
        prev_m = mentions[k - 1] if k else None
        if (
            prev_m is not None
            and (prev_m.of("entity") or prev_m.of("value"))
            and tokens[prev_m.end : m.start] in ([], ["在"], ["于"])
            and prev_m.start > 0
            and tokens[prev_m.start - 1].endswith(("在", "于"))
        ):
            continue  # "不在美国上市": the object named before the verb, as Chinese orders it
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
        out.extend((r, neg) for r in rels if _IDENT.match(r) and (r, neg) not in out)
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


def _values_either(tokens: list[str], mentions: list[Mention]) -> bool:
    """Two property values of different properties joined by "or" ("unit = index or category
    = policy_rate", "单位是指数或者类别是政策利率"): either filter holds, not both."""
    words = set(triggers()["either"]["tokens"])
    vals = [m for m in mentions if m.of("value") and not m.of("entity")]
    for a, b in pairwise(vals):
        if a.of("value")[0].key == b.of("value")[0].key:
            continue  # one property: "NASDAQ or NYSE" is already either (IN)
        between = [m for m in mentions if a.end <= m.start and m.end <= b.start]
        inside = {i for m in between if m.of("property") for i in range(m.start, m.end)}
        gap = [t for i, t in enumerate(tokens[a.end : b.start], a.end) if i not in inside]
        rest = [t for t in gap if t in words or t not in (*STOPWORDS, "是", "为", "=")]
        if rest and all(t in words for t in rest):
            return True
    return False


def _edges_to_kinds(
    tokens: list[str], mentions: list[Mention], target: str | None, window: int
) -> list[tuple[str, bool]]:
    """A relation word, then (after "any", "a", "任何" at most) a concept that is neither the
    one asked nor followed by a name: "institutions operating in China that (do not) issue
    (any) bonds" - the asked ones must (not) have that edge to something of that kind."""
    out: list[tuple[str, bool]] = []
    if target is None:
        return out
    quantifiers = {"any", "a", "an", "任何", "任一", "the"}
    for k, m in enumerate(mentions[:-1]):
        rels = [s.key for s in m.of("relation")]
        nxt = mentions[k + 1]
        cons = nxt.of("concept")
        gap = tokens[m.end : nxt.start]
        if not rels or m.of("entity") or not cons or nxt.of("entity") or nxt.of("relation"):
            continue
        if len(gap) > 1 or any(t not in quantifiers for t in gap) or cons[0].key == target:
            continue
        after = mentions[k + 2 : k + 4]
        if after and after[0].start - nxt.end <= 1 and after[0].of("entity"):
            continue  # "issue bonds like UST_10Y": a named object
        if len(after) == 2 and after[0].of("relation") and after[1].of("entity"):
            continue  # "CEOs who run companies in the AI theme": a hop of a chain
        prev = mentions[k - 1] if k else None
        joined = prev is not None and tokens[prev.end : m.start] in ([], ["的"])
        owner = joined and prev is not None and bool(prev.of("entity"))
        if owner and not (k >= 2 and mentions[k - 2].of("relation")):
            continue  # "易方达蓝筹的持仓股在哪些概念里": the entity's hop, a chain
        before = [
            t for t in tokens[: m.start] if not (t in STOPWORDS or (t.isascii() and len(t) < 2))
        ][-window:]
        neg = any(is_negation(t) for t in before)
        out.extend((r, neg) for r in rels if _IDENT.match(r))
    return out


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
