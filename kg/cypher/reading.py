"""What an answer understood (issue 44): the reading it executed, as a short sentence in
the question's language and as fields, and how sure the reader is of it.

The confidence comes only from evidence the parser already has: words of the question
that no mention or trigger accounts for, things it understood that the executed query
does not use (a named entity, a property value, a number to compare with, a time
window, a negation), a competing reading with a close score, an answer that came from a
later candidate because the best one found nothing, and answers from outside the query
path (retrieval, a bare description). Each kind of evidence costs a fixed amount
(``PENALTIES``); below ``THRESHOLD`` the answer abstains: it says what it understood,
what it could not place, and offers the closest readings as choices. The weights and the
threshold are calibrated on the dev sets (docs/query.md, "Abstaining").
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from kg.cypher.frame import Frame, ReadingCandidate, is_negation
from kg.cypher.lexicon import triggers

# Cost of each kind of evidence against a reading (1.0 = certain). Calibrated on the dev
# sets (see docs/query.md); ``THRESHOLD``: the least confidence that is answered.
PENALTIES: dict[str, float] = {
    "uncovered_word": 0.12,  # per word the reading does not account for (at most 3 count)
    "uncovered_number": 0.45,  # a number, ordinal, tenor or clock word left unread
    "unused_aggregate": 0.55,  # an aggregate or a daily close asked; the query has none
    "rows_of_another_kind": 0.2,  # rows that are not what the question asks (check.py)
    "unused_entity": 0.45,  # a linked entity the query does not use
    "unused_value": 0.3,  # a property value the query does not filter on
    "unused_number": 0.45,  # a comparison whose number the query does not use
    "unused_time": 0.45,  # a time window the query does not read
    "unplaced_negation": 0.45,  # a negation word with nothing negated in the query
    "close_competitor": 0.3,  # another reading within CLOSE of the chosen one's score
    "fell_through": 0.3,  # the best reading found nothing; a later one answered
    "no_rows": 0.25,  # the reading ran and found nothing ("not known")
    "retrieval": 0.6,  # answered by retrieval, not by a reading of the question
    "description": 0.6,  # only "what X is" (no reading of the question's ask)
    "no_reading": 1.0,  # nothing was read
    # the coverage check (kg/cypher/coverage.py): a content word the query that ran does
    # not account for, per word (at most 3); once for each class of such words that
    # changes what is asked; chosen by leave-one-voice-out (docs/query.md)
    "leftover_word": 0.1,
    "leftover_number": 0.3,
    **{f"leftover_{k}": 0.15 for k in ("negation", "comparison", "difference", "time")},
    **{f"leftover_{k}": 0.0 for k in ("alternative", "each", "both")},
    # agreement of two readings (coverage.agreement, rival rows): measured, no weight earned
    "prior_disagrees": 0.0,
    "respell_disagrees": 0.0,
    "rival_rows_differ": 0.0,
}
# The least confidence that is answered: the least threshold of the leave-one-voice-out
# curve at which the held-out voices' answered-wrong share is <= 3% (docs/query.md)
THRESHOLD = 0.85
CLOSE = 0.05  # score gap under which two different readings compete
MAX_UNCOVERED = 3
MAX_CHOICES = 3
WINDOW_PARAMS = ("from", "to", "from_v", "to_v", "from_d", "to_d", "months", "mom_from", "at")
_ZH = re.compile(r"[\u3400-\u9fff]")
# Words that carry a number, a rank or a time: left unread, the answer is likely off
# ("above four point two", "second highest", "十八号", "早上六点", "five a m utc").
# The words are ``[spoken]`` in triggers.toml, the ones respell.py reads as digits, and
# the words that join them; "oh" (0 in "four oh five") is left out: alone, an interjection.
_SPOKEN = triggers()["spoken"]
_NUM_WORDS = re.compile(
    "^({})$".format(
        "|".join(
            [w for w in _SPOKEN["en_units"] if w != "oh"]
            + list(_SPOKEN["en_tens"])
            + ["hundred", "thousand", "point"]
        )
    ),
    re.I,
)
_ORDINALS = re.compile(r"^(first|second|third|fourth|fifth)$|第[一二三四五六七八九十]", re.I)
_DAY_ORDINALS = re.compile(r"^(sixth|seventh|eighth|ninth|tenth|\w+teenth|\w+tieth)$", re.I)
_CLOCK = re.compile(r"^(clock|utc|gmt|am|pm)$|[零一二两三四五六七八九十]点|早上|下午|晚上", re.I)
_ZH_NUM = re.compile(r"[零一二两三四五六七八九十百][号]|^[零一二两三四五六七八九十百点]+$")
AGG_CYPHER = ("count(", "avg(", "max(", "min(", "sum(", "reduce(", "size(")
RANKED = re.compile(r"order by [^\n]*\b(desc|asc)\b")  # not the entity lists' "ORDER BY id"
_RELS = re.compile(r"\[\w*:([A-Z_]+)")

with Path(__file__).with_name("reading.toml").open("rb") as _fh:
    _WORDS = tomllib.load(_fh)
LABELS_ZH: dict[str, str] = _WORDS["labels_zh"]
AGG_WORDS: dict[str, tuple[str, str]] = {k: (v[0], v[1]) for k, v in _WORDS["aggregates"].items()}
DAILY_WORDS: dict[str, tuple[str, str]] = {k: (v[0], v[1]) for k, v in _WORDS["daily"].items()}
OPS_ZH: dict[str, str] = _WORDS["ops_zh"]


class ReadEntity(BaseModel):
    id: str
    name: str
    label: str
    negated: bool = False
    used: bool = True


class ReadTime(BaseModel):
    text: str
    start: str | None = None  # ISO, inclusive
    end: str | None = None  # ISO, exclusive


class ReadFields(BaseModel):
    kind: str = Field(description="series | attribute | entities | when | describe | none")
    target: str | None = Field(default=None, description="the concept asked for")
    entities: list[ReadEntity] = Field(default_factory=list)
    measure: str | None = None
    filters: list[str] = Field(default_factory=list)
    relations: list[str] = Field(default_factory=list)
    time: ReadTime | None = None
    aggregate: str | None = None
    description: str = Field(default="", description="the executed query shape, in words")


class Interpretation(BaseModel):
    """The reading an answer executed: ``text`` for people, ``fields`` for programs."""

    text: str
    fields: ReadFields
    confidence: float
    source: str = Field(default="rules", description="rules | model | retrieval")
    evidence: list[str] = Field(default_factory=list, description="what lowered confidence")
    unplaced: list[str] = Field(
        default_factory=list, description="what the question says that the reading does not use"
    )


class Choice(BaseModel):
    text: str
    description: str
    cypher: str
    params: dict[str, Any] = Field(default_factory=dict)
    score: float = 0.0


class Abstention(BaseModel):
    """Why an answer abstained: what it could not place, and readings to choose from
    (the first is the one that ran; ``rows`` are what it found, not an answer)."""

    unplaced: list[str] = Field(default_factory=list)
    choices: list[Choice] = Field(default_factory=list)
    rows: list[dict[str, Any]] = Field(default_factory=list)


def flat_params(params: dict[str, Any]) -> list[Any]:
    """Every parameter value of a query, lists flattened (``_``-keys are internal)."""
    out: list[Any] = []
    for k, v in params.items():
        if k.startswith("_"):
            continue
        out.extend(v if isinstance(v, list | tuple) else [v])
    return out


def _has(values: list[Any], x: Any) -> bool:
    for v in values:
        if isinstance(x, float | int) and isinstance(v, float | int) and not isinstance(v, bool):
            if abs(float(v) - float(x)) <= 1e-9 * max(1.0, abs(float(x))):
                return True
        elif isinstance(v, str) and isinstance(x, str) and v.casefold() == x.casefold():
            return True
    return False


def _iso(ms: int | None) -> str | None:
    if ms is None:
        return None
    d = datetime.fromtimestamp(ms / 1000, UTC)
    return d.date().isoformat() if (d.hour, d.minute, d.second) == (0, 0, 0) else d.isoformat()


def _name(entity: dict[str, Any] | None, fallback: str, zh: bool, label: str, key: str) -> str:
    if label == "Indicator":
        return key  # series are known by their ids ("CN10Y minus CN1Y")
    if entity and zh and entity.get("name_zh"):
        return str(entity["name_zh"])
    return fallback


def _window(frame: Frame) -> ReadTime | None:
    win = frame.units.time
    if win is None:
        return None
    return ReadTime(text=win.text, start=_iso(win.start_ms), end=_iso(win.end_ms))


def _time_text(t: ReadTime | None, zh: bool) -> str:
    if t is None:
        return ""
    if t.start and t.end:
        try:
            a = datetime.fromisoformat(t.start)
            b = datetime.fromisoformat(t.end)
            if (b - a).days == 1 and len(t.start) == 10:
                return t.start if zh else f"on {t.start}"
        except ValueError:
            pass
        return f"{t.start}至{t.end}" if zh else f"from {t.start} to {t.end}"
    if t.start:
        return f"{t.start}起" if zh else f"since {t.start}"
    if t.end:
        return f"{t.end}之前" if zh else f"before {t.end}"
    return t.text


def fields_of(
    frame: Frame, chosen: ReadingCandidate | None, entities: dict[str, dict[str, Any]]
) -> ReadFields:
    zh = bool(_ZH.search(frame.question))
    used = flat_params(chosen.params) if chosen else []
    ents = [
        ReadEntity(
            id=a.key,
            name=_name(entities.get(a.key), a.name, zh, a.label, a.key),
            label=a.label,
            negated=a.key in frame.negated,
            used=chosen is not None and (_has(used, a.key) or a.key in chosen.anchors),
        )
        for a in frame.anchors
    ]
    filters: list[str] = []
    for v in frame.values:
        neg = f"{v.key}={v.label}" in frame.negated
        filters.append(f"{v.key} {'≠' if neg else '='} {v.label}")
    if frame.values_either and len(filters) >= 2:  # "unit = index or category = policy_rate"
        filters = [" or ".join(filters)]
    for c in frame.units.comparisons:
        filters.append(f"{c.op} {c.value:g}{c.unit}")
    for rel, neg in frame.bare_relations:
        filters.append(f"{'no' if neg else 'has'} {rel.lstrip('*')}")
    if frame.prefix:
        filters.append(f"{frame.prefix[0]} starts with {frame.prefix[1]}")
    measure = None
    if chosen is not None and chosen.kind in ("series", "when"):
        if frame.spread:
            measure = "spread"
        elif frame.mom:
            measure = "month-on-month change"
        elif frame.daily:
            measure = f"daily {frame.daily}"
        elif frame.range_agg:
            measure = "range"
        else:
            measure = "value"
    elif chosen is not None and chosen.kind == "attribute":
        measure = frame.properties[0] if frame.properties else "attribute"
    agg = frame.agg
    if frame.most:
        agg = f"{frame.most} members"
    elif frame.top:
        agg = f"top {frame.top[0]}"
    elif frame.rank:
        agg = f"rank {frame.rank}"
    elif frame.last_n:
        agg = f"last {frame.last_n}"
    rels = sorted(set(_RELS.findall(chosen.cypher))) if chosen else []
    rels = [r for r in rels if r not in ("HAS_OBSERVATION", "HAS_DAILY")]
    return ReadFields(
        kind=chosen.kind if chosen else "none",
        target=frame.target,
        entities=ents,
        measure=measure,
        filters=filters,
        relations=rels,
        time=_window(frame),
        aggregate=agg,
        description=chosen.description if chosen else "",
    )


def sentence(frame: Frame, f: ReadFields) -> str:
    """The reading as one short sentence in the question's language."""
    zh = bool(_ZH.search(frame.question))
    named = [e for e in f.entities if e.used] or f.entities
    names = [("非" if zh else "not ") + e.name if e.negated else e.name for e in named]
    when = _time_text(f.time, zh)
    if frame.tail_days and when:  # "the last 4 trading days of august"
        n = frame.tail_days
        when = f"{when}的最后{n}个交易日" if zh else f"the last {n} trading days {when}"
    agg = AGG_WORDS.get(f.aggregate or "", (f.aggregate or "", f.aggregate or ""))[int(zh)]
    conds = [_cond_zh(x) if zh else x for x in f.filters]
    if f.kind in ("series", "when"):
        sep = (" 减 " if zh else " minus ") if frame.spread else ("、" if zh else ", ")
        subject = sep.join(names[:2] if frame.spread else names)
        what = ""
        if frame.daily in DAILY_WORDS:
            what = DAILY_WORDS[frame.daily][int(zh)]
        elif frame.mom:
            what = "环比变化" if zh else "month-on-month changes"
        elif frame.range_agg:
            what = "振幅" if zh else "range"
        if agg:
            what = f"{what}{agg}" if zh else (f"{agg} of {what}" if what else agg)
        if f.kind == "when":
            what = (what + "出现的日期") if zh else f"the day or month of {what or 'the value'}"
        parts = [subject, what, "，".join(conds) if zh else ", ".join(conds), when]
    elif f.kind == "attribute":
        prop = f.measure or ""
        parts = [f"{'、'.join(names)}的{prop}" if zh else f"{prop} of {', '.join(names)}"]
    elif f.kind == "describe":
        parts = [f"{names[0]}是什么" if zh else f"what {names[0]} is"] if names else []
    elif f.kind == "entities":
        tgt = f.target or (named[0].label if named else "")
        tgt_w = LABELS_ZH.get(tgt, tgt) if zh else tgt.lower()
        head = (f"{tgt_w}{agg}" if agg else f"哪些{tgt_w}") if zh else f"{agg or 'which'} {tgt_w}"
        link = (
            ("关联：" if zh else "linked to ") + ("、" if zh else ", ").join(names) if names else ""
        )
        rel = ("（" + "、".join(f.relations) + "）") if zh and f.relations else ""
        rel = rel or (f" by {', '.join(f.relations)}" if f.relations and link else "")
        parts = [head, link + rel if link else "", *conds, when]
    else:
        parts = ["未能读出问题" if zh else "no reading of the question"]
    return ("，" if zh else ", ").join(p for p in parts if p)


def _cond_zh(cond: str) -> str:
    m = re.match(r"^(>=|<=|>|<|=) (.*)$", cond)
    if m:
        return f"{OPS_ZH[m.group(1)]}{m.group(2)}"
    return cond.replace(" ≠ ", "不是").replace(" = ", "为")


def assess(
    frame: Frame,
    chosen: ReadingCandidate | None,
    ranked: Sequence[ReadingCandidate],
    *,
    tokens: Sequence[str],
    rows_found: bool,
    method: str,
    entities: dict[str, dict[str, Any]] | None = None,
    rows_fit: bool | None = None,
    extra: Sequence[str] = (),
    leftover: Sequence[str] = (),
) -> tuple[float, list[str], list[str]]:
    """(confidence, evidence names, what could not be placed, in words). A named entity
    or value the query does not use is accounted for when an entity the query does use
    carries it ("China's CPI": CN_CPI's country is CN; "the US 10Y yield": its category
    is yield)."""
    evidence: list[str] = []
    unplaced: list[str] = []
    if method == "hybrid":
        evidence.append("retrieval")
    if chosen is None:
        if method != "hybrid":
            evidence.append("no_reading")
        unplaced.extend(frame.uncovered)
        return _score(evidence), evidence, unplaced or ["the question's ask"]
    used = flat_params(chosen.params)
    numbers = _unread_numbers(frame)
    words = [w for w in frame.uncovered if w not in numbers]
    evidence.extend(["uncovered_number"] * min(len(numbers), 1))
    evidence.extend(["uncovered_word"] * min(len(words), MAX_UNCOVERED))
    unplaced.extend(frame.uncovered)
    cy = chosen.cypher.lower()
    asks_agg = frame.agg not in (None, "latest") or frame.daily is not None
    # "the latest value of the rate the Fed sets": a value asked, not the indicator
    asks_agg = asks_agg or (frame.agg == "latest" and frame.units.value_word)
    aggregated = any(w in cy for w in AGG_CYPHER) or RANKED.search(cy) is not None
    aggregated = aggregated or (frame.agg == "latest" and "last_value" in cy)
    if asks_agg and chosen.kind not in ("series", "when") and not aggregated:
        evidence.append("unused_aggregate")
        unplaced.append(frame.agg or f"daily {frame.daily}")
    ents = entities or {}
    used_ids = {str(x) for x in used if isinstance(x, str) and x in ents} | set(chosen.anchors)
    carried = [ents[i] for i in used_ids if i in ents]
    carried_values = {
        str(x).casefold()
        for e in carried
        for v in e.values()
        for x in (v if isinstance(v, list | tuple) else [v])
        if isinstance(x, str)
    }
    for a in frame.anchors:
        if _has(used, a.key) or a.key in chosen.anchors or a.key.casefold() in carried_values:
            continue
        evidence.append("unused_entity")
        unplaced.append(a.name)
    for v in frame.values:
        if any(str(e.get(v.key, "")).casefold() == v.label.casefold() for e in carried):
            continue
        if v.key == "frequency" and frame.daily is not None and chosen.kind in ("series", "when"):
            continue  # "daily closes": the measure, read as one value a day
        if not _has(used, v.label) and not _has(used, v.key):
            evidence.append("unused_value")
            unplaced.append(f"{v.key} = {v.label}")
    for c in frame.units.comparisons:
        if not _has(used, c.value) and f"{c.value:g}" not in chosen.cypher:
            evidence.append("unused_number")
            unplaced.append(f"{c.op} {c.value:g}")
    win = frame.units.time
    if win is not None and chosen.kind != "describe":
        reads_window = any(k in chosen.params for k in WINDOW_PARAMS) or any(
            _has(used, x) for x in (win.start_ms, win.end_ms) if x is not None
        )
        if not reads_window and not frame.known_at:
            evidence.append("unused_time")
            unplaced.append(win.text)
    if _negation_words(frame, tokens) and not negation_used(frame, chosen):
        evidence.append("unplaced_negation")
        unplaced.append("a negation")
    if chosen.kind == "describe":
        evidence.append("description")
    if ranked and ranked[0] is not chosen:
        evidence.append("fell_through")
    elif len(ranked) > 1:
        rival = next((c for c in ranked[1:] if c.description != chosen.description), None)
        if rival is not None and chosen.score - rival.score < CLOSE:
            evidence.append("close_competitor")
    if not rows_found and method != "hybrid":
        evidence.append("no_rows")
    if rows_found and rows_fit is False:
        evidence.append("rows_of_another_kind")
        unplaced.append("the kind of answer asked")
    evidence.extend(extra)  # coverage and agreement (kg/cypher/coverage.py)
    unplaced.extend(w for w in leftover if w not in unplaced)
    return _score(evidence), evidence, unplaced


def _unread_numbers(frame: Frame) -> list[str]:
    """Uncovered words that carry a number, a rank or a clock time the frame did not read
    in another form (a digit that is a comparison's number or the window's year, an
    ordinal beside a rank or top-n, number words beside a filled number or date slot)."""
    win = frame.units.time
    nums = {f"{c.value:g}" for c in frame.units.comparisons}
    if win is not None and win.start_ms is not None:
        nums.add(str(datetime.fromtimestamp(win.start_ms / 1000, UTC).year))
    short = win is not None and win.start_ms is not None and win.end_ms is not None
    short = short and (win.end_ms or 0) - (win.start_ms or 0) <= 3_600_000  # a time of day
    short = short or (win is not None and win.point)  # "at 07:00 UTC": read as a point
    ranked = bool(frame.rank or frame.top or frame.last_n or frame.most)
    filled = bool(frame.units.comparisons) or win is not None
    out = []
    for w in frame.uncovered:
        digits = re.findall(r"\d+", w)
        if digits:
            if not all(d in nums or d.lstrip("0") in nums for d in digits):
                out.append(w)
        elif _ORDINALS.search(w):
            if not ranked:
                out.append(w)
        elif _DAY_ORDINALS.match(w):
            if win is None:  # "the eighteenth" with no day read
                out.append(w)
        elif _CLOCK.search(w):
            if not short:
                out.append(w)
        elif _NUM_WORDS.match(w) or _ZH_NUM.search(w):
            if w.lower() == "point" or not filled:
                out.append(w)
    return out


def negation_used(frame: Frame, chosen: ReadingCandidate) -> bool:
    if frame.negated or any(neg for _r, neg in frame.bare_relations):
        return True
    return query_negates(chosen.cypher)


def query_negates(cypher: str) -> bool:
    """Whether a query negates something (not counting the validity test of current facts)."""
    cy = re.sub(r"\w+\.valid_to IS NULL", "", cypher.upper().replace("VALID_TO", "valid_to"))
    return any(w in cy for w in ("NOT ", "<>", "NONE(", "IS NULL", "= 0"))


_CMP_ZH = ("超过", "低于", "高于", "少于", "多于", "大于", "小于", "到", "及")
_CMP_EN = ("more", "less", "above", "below", "over", "under", "greater", "fewer", "higher", "lower")


def _negation_words(frame: Frame, tokens: Sequence[str]) -> bool:
    """A negation word in the question that is not part of a comparison ("不超过10年",
    "no more than 3")."""
    for i, t in enumerate(tokens):
        if not is_negation(t):
            continue
        nxt = tokens[i + 1] if i + 1 < len(tokens) else ""
        if frame.units.comparisons and (t[1:] in _CMP_ZH or nxt in _CMP_EN or nxt in _CMP_ZH):
            continue
        return True
    return False


def _score(evidence: list[str]) -> float:
    return round(max(0.0, 1.0 - sum(PENALTIES[e] for e in evidence)), 4)


def choices(
    ranked: Sequence[ReadingCandidate], frame: Frame, entities: dict[str, dict[str, Any]]
) -> list[Choice]:
    """The closest readings, best first, one per distinct description."""
    out: list[Choice] = []
    seen: set[str] = set()
    for c in ranked:
        if c.description in seen:
            continue
        seen.add(c.description)
        f = fields_of(frame, c, entities)
        out.append(
            Choice(
                text=sentence(frame, f),
                description=c.description,
                cypher=c.cypher,
                params={k: v for k, v in c.params.items() if not k.startswith("_")},
                score=round(c.score, 4),
            )
        )
        if len(out) >= MAX_CHOICES:
            break
    return out
