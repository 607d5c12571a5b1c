"""Does the executed reading account for every content word of the question? (issue 44)

The reader's own ``Frame.uncovered`` lists the words that no mention or trigger matched:
a word some rule matched counts as read even when the query that ran ignores what the
rule found ("how many MORE sessions", "ai names that ARENT semis", "banks OR insurers").
This check starts from the other end, the query that ran: a word is accounted for only
when the part of the reading it belongs to is used by that query (an entity whose id is a
parameter or an anchor, a concept whose label, a relation whose type, a property whose key
appears in the Cypher, a value that is a parameter; a time phrase when the query reads a
window, a comparison when its number is used, an aggregate word when the query aggregates;
negation words when something is negated). What is left, less stop words
(``coverage.toml``, written from grammar, not from question sets), is evidence against
the reading: a plain leftover word a little, a leftover word of a class that changes what
is asked (negation, comparison, either/or, each, difference, both, time, a number) more.

A word no mention covers is still credited when the lexicon maps it to a part the query
uses (``lexicon_senses``: a word of a trigger phrase, "trade" of "trade in", "chaired" of
"chair", a character of a Chinese one, "发" of "发行", "债" of "国债"), when it is a
number in another form that a comparison the query uses reads ("5y" for tenor > 5, "two"
for > 2), a counting noun ("times", "sessions", "次") when the query counts. A concept
word is used when the query names the label or uses an entity of that label ("高管"
beside an Executive)."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from kg.cypher.frame import Frame, ReadingCandidate, is_negation
from kg.cypher.lexicon import Mention, Sense, _normalize, _singular, trigger_regex, triggers
from kg.cypher.reading import AGG_CYPHER, RANKED, WINDOW_PARAMS, flat_params, query_negates

COVERAGE_PATH = Path(__file__).with_name("coverage.toml")
# Trigger tables by the part of a reading they fill; "frame" words (question words, "when",
# "value", "on which days") are the question's frame and always accounted for.
CATEGORIES: dict[str, tuple[str, ...]] = {
    "frame": (
        "value_words",
        "when",
        "filler",
        "discourse",
        "explain",
        "point_time",
        "periods",
        "ever",
    ),
    "frame2": ("has_data", "two_part"),
    "time": ("times", "dates", "time_units", "event_days", "range"),
    "comparison": (
        "comparisons",
        "comparisons_after",
        "comparisons_sign",
        "close_vs_open",
        "direction",
        "compare",
    ),
    "aggregate": (
        "aggregations",
        "most",
        "top_n",
        "rank",
        "last_n",
        "daily",
        "range_agg",
        "mom",
        "fall",
        "answer_bp",
    ),
    "spread": ("spread", "spread_names", "pair_names", "difference", "both_days"),
    "set": ("same_as", "same_as_group", "include_anchor", "prefix", "exists", "union"),
}
_SKIP_KEYS = {"between", "series", "words", "groups", "labels", "strip", "pronouns"}
_NUMBER = re.compile(r"\d|^[零一二两三四五六七八九十百千万点]+$")
# what aggregates in a query: the reader's own test (``reading.AGG_CYPHER``), and a
# ``collect(`` of a list, which accounts for "list all"
_AGG_CYPHER = (*AGG_CYPHER, "collect(")
_SUBTRACT = re.compile(r"[\w)\]]\s+-\s+[\w(]")
_TENOR = re.compile(r"^(\d+(?:\.\d+)?)[dwmy]$")  # "5y", "7d": a number with its unit
_ONE_OF = "一"  # "一期", "一家": "one" + a measure word, the article of Chinese


@dataclass(frozen=True)
class Coverage:
    leftover: tuple[str, ...]  # content words the executed reading does not account for
    classes: tuple[str, ...]  # the kinds of the leftover words that change what is asked


@cache
def words() -> dict[str, Any]:
    with COVERAGE_PATH.open("rb") as fh:
        return tomllib.load(fh)


def _patterns(node: Any) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, list):
        return [p for x in node for p in _patterns(x)]
    if isinstance(node, dict):
        if "patterns" in node:
            return _patterns(node["patterns"])
        return [p for k, v in node.items() if k not in _SKIP_KEYS for p in _patterns(v)]
    return []


@cache
def _category_patterns() -> dict[str, list[re.Pattern[str]]]:
    trig = triggers()
    out: dict[str, list[re.Pattern[str]]] = {}
    for cat, keys in CATEGORIES.items():
        pats = [p for k in keys for p in _patterns(trig.get(k, []))]
        out[cat] = [trigger_regex(p) for p in pats if p]
    return out


def _token_spans(text: str, tokens: Sequence[str]) -> list[tuple[int, int]]:
    """Each token's character span in the normalized question, found in order (a token
    rewritten by the lexicon, "10-year" -> "10y", takes the place where the search stands)."""
    out = []
    cursor = 0
    for t in tokens:
        at, size = text.find(t, cursor), len(t)
        while at < 0 and size > 1:  # "2024年" read as the tenor "2024y": its longest prefix
            size -= 1
            at = text.find(t[:size], cursor, cursor + 12 + size)
        if at < 0:
            out.append((cursor, cursor))
            continue
        out.append((at, at + size + (len(t) > size)))
        cursor = at + size
    return out


def _class_of(token: str) -> str | None:
    classes: dict[str, list[str]] = words()["classes"]
    if is_negation(token):
        return "negation"
    for name, ws in classes.items():
        if token.isascii():
            if token in ws:
                return name
        elif any(not w.isascii() and w in token for w in ws):
            return name
    if _NUMBER.search(token):
        return "number"
    return None


def used_parts(frame: Frame, chosen: ReadingCandidate) -> dict[str, bool]:
    """Which parts of the frame the executed query uses (from the query, not the rules)."""
    cy = chosen.cypher
    low = cy.lower()
    used = flat_params(chosen.params)
    nums = [x for x in used if isinstance(x, int | float) and not isinstance(x, bool)]
    win = frame.units.time
    reads_window = any(k in chosen.params for k in WINDOW_PARAMS) or (
        win is not None and any(x in nums for x in (win.start_ms, win.end_ms) if x is not None)
    )
    cmp_used = bool(frame.units.comparisons) and all(
        any(abs(float(n) - c.value) < 1e-9 for n in nums) or f"{c.value:g}" in cy
        for c in frame.units.comparisons
    )
    aggregated = any(w in low for w in _AGG_CYPHER) or bool(RANKED.search(low))
    series = chosen.kind in ("series", "when")
    return {
        "frame": True,
        "frame2": True,
        "time": reads_window or frame.known_at is not None,
        "comparison": cmp_used or (series and (frame.compare is not None or "> 0" in cy)),
        "aggregate": aggregated or series,
        "spread": bool(_SUBTRACT.search(cy)) or (series and frame.spread),
        "set": chosen.kind in ("entities", "attribute"),
    }


def _stem(word: str) -> str:
    """A crude English stem for matching a word to a lexicon word ("chaired" = "chair",
    "traded" = "trade", "tracking" = "track"); words under 4 letters stay as they are."""
    w = _singular(word)
    for suffix in ("ing", "ed", "e"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 4:
            return w[: -len(suffix)]
    return w


@cache
def lexicon_senses() -> tuple[dict[str, tuple[Sense, ...]], tuple[tuple[str, Sense], ...]]:
    """The trigger lexicon (``triggers.toml``: words for concepts, relations, properties
    and values) by English word stem, and its Chinese phrases: a word is credited with the
    senses of every phrase it is part of."""
    trig = triggers()
    pairs: list[tuple[str, Sense]] = []
    for kind, table in (("concept", "concepts"), ("relation", "relations")):
        for key, ws in trig.get(table, {}).items():
            pairs.extend((w, Sense(kind, key)) for w in ws)
    for key, ws in trig.get("properties", {}).items():
        pairs.extend((w, Sense("property", key)) for w in ws)
    for prop, vals in trig.get("values", {}).items():
        for val, ws in vals.items():
            pairs.extend((w, Sense("value", prop, val)) for w in [val, *ws])
    stop = set(words()["stop"]["en"])
    en: dict[str, list[Sense]] = {}
    zh: list[tuple[str, Sense]] = []
    for phrase, sense in pairs:
        p = _normalize(phrase)
        if p.isascii():
            for w in re.findall(r"[a-z]+", p):
                if w not in stop and len(w) >= 3:
                    en.setdefault(_stem(w), []).append(sense)
        else:
            zh.append((p, sense))
    return {k: tuple(v) for k, v in en.items()}, tuple(zh)


def _senses_of(token: str) -> list[Sense]:
    en, zh = lexicon_senses()
    if token.isascii():
        return list(en.get(_stem(token), ())) if len(token) >= 3 else []
    return [s for p, s in zh if token in p]


def _sense_used(
    s: Sense,
    cy: str,
    used: list[Any],
    used_ids: set[str],
    carried: set[str],
    labels: set[str],
) -> bool:
    if s.kind == "entity" and (s.key in used_ids or s.key.casefold() in carried):
        return True
    if s.kind in ("concept", "relation") and f":{s.key.lstrip('*')}" in cy:
        return True
    if s.kind == "concept" and s.key in labels:  # "高管": the anchor is an Executive
        return True
    if s.kind == "property" and (f".{s.key}" in cy or s.key in used):
        return True
    if s.kind == "value":
        val = (s.label or s.key).casefold()
        if any(isinstance(x, str) and x.casefold() == val for x in used) or val in carried:
            return True
    return False


def coverage(
    frame: Frame,
    chosen: ReadingCandidate,
    tokens: Sequence[str],
    mentions: Sequence[Mention],
    entities: dict[str, dict[str, Any]],
) -> Coverage:
    text = _normalize(frame.question)
    spans = _token_spans(text, tokens)
    used = flat_params(chosen.params)
    used_ids = {str(x) for x in used if isinstance(x, str) and x in entities}
    used_ids |= set(chosen.anchors)
    for first, group in frame.either.items():
        if first in used_ids:
            used_ids |= set(group)
    carried = {
        str(x).casefold()
        for i in used_ids
        for v in entities.get(i, {}).values()
        for x in (v if isinstance(v, list | tuple) else [v])
        if isinstance(x, str)
    }
    labels = {str(entities.get(i, {}).get("label") or "") for i in used_ids} - {""}
    consumed: set[int] = set()
    hits = [  # a mention is used when one of its senses is
        any(_sense_used(s, chosen.cypher, used, used_ids, carried, labels) for s in m.senses)
        for m in mentions
    ]
    for k, m in enumerate(mentions):
        # a relation, concept or property word next to a used name or value is how the
        # question names it ("listed on SSE" read as exchange = SSE, "国债" beside CN10Y)
        near = [j for j in (k - 1, k + 1) if 0 <= j < len(mentions) and hits[j]]
        near = [j for j in near if abs(mentions[j].start - m.start) <= 3]
        linking = any(mentions[j].of("entity") or mentions[j].of("value") for j in near)
        if hits[k] or (linking and not m.of("entity") and not m.of("value")):
            consumed.update(range(m.start, m.end))
    parts = used_parts(frame, chosen)
    upper = chosen.cypher.upper()
    accounted = {  # classes of words a part of the query accounts for
        "comparison": parts["comparison"],
        "difference": parts["spread"],
        "time": parts["time"],
        "alternative": " IN $" in upper or " OR " in upper or bool(frame.either),
        "both": " AND " in upper or len(used_ids) >= 2,
    }
    accounted["alternative"] |= frame.values_either or frame.compare is not None
    pats = _category_patterns()
    hit: list[tuple[int, int]] = []
    for cat, on in parts.items():
        if on:
            hit.extend(x.span() for p in pats[cat] for x in p.finditer(text))
    names = " ".join(
        str(entities.get(i, {}).get(k) or "") for i in used_ids for k in ("name", "name_zh")
    ).casefold()
    stop = set(words()["stop"]["en"]) | set(words()["stop"]["zh"]) | set(triggers()["wh"]["tokens"])
    numbers = {
        part
        for x in used
        if isinstance(x, int | float) and not isinstance(x, bool)
        for part in [f"{x:g}", *f"{x:g}".split(".")]
    }
    negated = query_negates(chosen.cypher)
    spoken = {**triggers()["spoken"]["en_units"], **triggers()["spoken"]["en_tens"]}
    counted = "count(" in chosen.cypher.lower() or "size(" in chosen.cypher.lower()
    zh_stop = set(words()["stop"]["zh"])
    # the numbers of the question's comparisons that the query uses (not any number of the
    # query: "最宽的一天" is no count of days because some parameter is 1)
    compared = {f"{c.value:g}" for c in frame.units.comparisons} & numbers
    leftover: list[str] = []
    classes: set[str] = set()
    for i, t in enumerate(tokens):
        a, b = spans[i]
        if i in consumed or not t.strip() or not re.search(r"\w", t):
            continue
        if b > a and any(x < b and y > a for x, y in hit):
            continue
        if t.isdigit() and (t in numbers or t.lstrip("0") in numbers):
            continue
        if len(t) >= 3 and t.isascii() and t in names:
            continue
        if parts["time"] and t in words()["range_words"]["words"]:
            continue  # "from ... to ...", "9月16日到18日": the window's own joints
        tenor = _TENOR.match(t)
        if tenor and f"{float(tenor.group(1)):g}" in compared:
            continue  # "longer than five years" read as "> 5y", the query compares with 5
        if t in spoken and f"{spoken[t]:g}" in compared:
            continue  # "more than two companies": members > 2
        if counted and t in words()["count_nouns"]["words"]:
            continue  # "how many times / sessions / 次": what the count counts
        if len(t) == 2 and t[0] == _ONE_OF and t[1] in zh_stop:
            continue  # "最新一期", "那一家": the article, not a count
        kind = _class_of(t)
        if kind is None and any(
            _sense_used(s, chosen.cypher, used, used_ids, carried, labels) for s in _senses_of(t)
        ):
            continue  # a word of a lexicon phrase whose part the query uses ("发" of 发行)
        if (kind == "negation" and negated) or (kind and accounted.get(kind)):
            continue
        if kind is not None:
            classes.add(kind)
            leftover.append(t)
        elif t not in stop and not (t.isascii() and len(t) < 2):
            leftover.append(t)
    return Coverage(tuple(leftover), tuple(sorted(classes)))


def evidence(cov: Coverage, max_words: int = 3) -> list[str]:
    """Evidence names for ``reading.assess``: ``leftover_word`` per plain leftover word (at
    most ``max_words``), one ``leftover_<class>`` per class of leftover word."""
    plain = [w for w in cov.leftover if _class_of(w) is None]
    return ["leftover_word"] * min(len(plain), max_words) + [f"leftover_{c}" for c in cov.classes]


# -- agreement of two readings (cheap ones) ----------------------------------------------

RIVAL_GAP = 0.1  # a rival reading this close in score is run, and its rows compared


def _key(c: ReadingCandidate) -> tuple[str, str]:
    params = {k: v for k, v in c.params.items() if not k.startswith("_")}
    return c.description, repr(sorted(params.items(), key=lambda kv: kv[0]))


def top_by_prior(cands: Sequence[ReadingCandidate]) -> ReadingCandidate | None:
    """The synthesizer's own first choice (its prior, before the encoder's similarity)."""
    return max(cands, key=lambda c: c.prior, default=None)


def agreement(
    chosen: ReadingCandidate,
    ranked: Sequence[ReadingCandidate],
    unspelled: ReadingCandidate | None,
    respelled: bool,
) -> list[str]:
    """Evidence from readings the rules made another way: the prior's first choice is not
    the reading that ran (``prior_disagrees``); the question as typed, before respelling
    and rewrites, reads differently (``respell_disagrees``)."""
    out = []
    first = top_by_prior(ranked)
    if first is not None and first.description != chosen.description:
        out.append("prior_disagrees")
    if respelled and (unspelled is None or first is None or _key(unspelled) != _key(first)):
        out.append("respell_disagrees")
    return out


def rival(chosen: ReadingCandidate, ranked: Sequence[ReadingCandidate]) -> ReadingCandidate | None:
    """The best other reading (another description) within ``RIVAL_GAP`` of the chosen."""
    for c in ranked:
        if c is not chosen and c.description != chosen.description:
            return c if chosen.score - c.score < RIVAL_GAP else None
    return None


def same_rows(a: Sequence[dict[str, Any]], b: Sequence[dict[str, Any]]) -> bool:
    def norm(rows: Sequence[dict[str, Any]]) -> list[str]:
        return sorted(repr(sorted((k, str(v)) for k, v in r.items() if k != "name")) for r in rows)

    return norm(a) == norm(b)
