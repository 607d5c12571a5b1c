"""Figures management speaks in an earnings call, each tied to the metric it is about.

The reader works on the transcript's turns (``kg.extract.calls.transcript_turns``), not on
sentence patterns: in a call most figures have no subject of their own. An analyst asks
about a metric ("how should we think about loan growth?") and the answer says "it was up
50 basis points" or just "about 8% annualized". So, for every figure in a management
turn (a money amount, a percentage, basis points, a range, a spoken band such as
"mid-single digits" or "low teens", a multiple such as "four to five times"):

1. the metric named in the figure's own clause, nearest before it ("our revenue up 6%"),
   or right after it ("$414 million of equity capital", "mid- to high 10s with margin",
   "a 90% increase in production"); a figure that qualifies another noun ("$10 million
   deals", "$1.25 per gallon") is no fact; a split the question asks for is read part by
   part ("about 28% leisure, about 36% business transient" after "your leisure mix?");
2. else, when the clause's subject is a pronoun ("it was up", "We think it lands in"), the
   company trends ("we're trending toward") or the figure stands alone ("Yeah. About $90
   million"), the metric in play: the one the previous management sentence named, else
   the one the answer has named so far, else the one the analyst's question names, when
   exactly one metric is in play there; with two or more in play the figure is dropped
   (precision first), as is a figure with no metric at all.

Dropped as well: figures of the past or a comparison's base ("two years ago", "relative
to"), of another party ("these folks", customers, the market), a metric from the context
with a figure of another quarter, and sentences that ask.

Each fact is the company's (the call's company; with none given, the ticker the call's
title names), names its ``speaker``, its
``kind`` (``guidance`` when the sentence looks forward, else ``actual``) and its period:
the one the sentence names ("for the full year", "next quarter", "the fourth quarter"),
else the call's year for guidance and the call's quarter for what was reported
(``figures.complete_metric`` with the call's title as header: "DD Q1 2021 earnings call").
The evidence span runs from the metric's mention to the figure, so the verifier finds
both in it. Figures an analyst states are his reading, never read here.

Word lists: ``kg/data/calls_metrics.json``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from kg.extract.calls import TITLE_TICKER, Turn
from kg.extract.calls_people import call_partners, call_people, call_places, call_products
from kg.extract.fastpath import HEADER_CHARS, sentence_spans
from kg.extract.figures import complete_metric, header_period, own_period
from kg.extract.types import Candidate, Component, DocContext

RULE = "call_figure"
MAX_GAP_WORDS = 12  # a metric further before its figure than this is no subject of it
# after a figure: "$414 million of equity", "$600 million worth of growth", "in revenue"
# (the figure's own subject); "with margin", "on EBITDA" (a subject when it is a metric)
AFTER = re.compile(
    r"\s*(?P<own>(?:worth\s+)?of|in)?(?P<loose>with|on|for)?\s+(?:the\s+|our\s+|that\s+)?", re.I
)
# a figure right before a noun qualifies it: "33% share", "$10 million deals", "$1.25 per
# gallon"; these words after a figure leave it free
_FREE_AFTER = frozenset(
    "in on for with to from and or versus vs vs. of at by which that this so but is was were "
    "are be annualized range area year-over-year sequentially organically compared plus "
    "higher lower above below over up down roughly approximately about give take "
    "within this next last each a an the we it it's as since".split()
)
# a metric's head followed by one of these is part of another name ("production credit",
# "R&D tax audit", "growth ex-PPP" stays growth)
_NOT_HEAD_BEFORE = frozenset(
    "credit credits tax deal deals business team customers customer story opportunity price prices "
    "opportunities standpoint perspective line lines side".split()
)
# what an elliptic answer's clause may hold before its figure ("Yeah. It's about $90
# million", "up roughly 50 basis points"): no subject of its own
_FILLERS = frozenset(
    "so and but yeah yes well now again i think i'd say would you know it's its it that's "
    "that was is were are about roughly approximately around over nearly almost just up "
    "down by call probably maybe like somewhere in the range of kind sort a little bit "
    "slightly north south closer to more than less under right look okay ok also still "
    "only then there there's".split()
)
# the short clause of a pronoun subject: "it was up", "that's", "It's been running at"
_LINKS = frozenset(
    "it this that they those these which was is were are 's be been being has had have came "
    "come in at ran running grew rose fell increased decreased declined improved expanded "
    "went ended will would should could going to get gets got now lands land landing "
    "comes coming stays stay remains remain sits settles trends trending goes end ends "
    "think see expect".split()
)


@dataclass(frozen=True, slots=True)
class Vocab:
    metric: re.Pattern[str]
    qualifiers: frozenset[str]
    bands: dict[str, tuple[float, float]]
    forward: re.Pattern[str]
    pronouns: frozenset[str]
    change: re.Pattern[str]
    past: re.Pattern[str]  # a figure of the past or a comparison's base
    not_shares: re.Pattern[str]  # "a 3% number": no part of a whole
    money: re.Pattern[str]  # metrics whose bare "45 million" is money
    multiples: re.Pattern[str]  # metrics a "five times" is a figure of


@lru_cache(maxsize=1)
def vocab() -> Vocab:
    raw: dict[str, Any] = json.loads(
        resources.files("kg.data").joinpath("calls_metrics.json").read_text(encoding="utf-8")
    )
    heads = sorted({h.casefold() for h in raw["metric_heads"]}, key=len, reverse=True)
    words = "|".join(re.escape(h).replace(r"\ ", r"[\s-]+") for h in heads)
    cues = "|".join(re.escape(c).replace(r"\ ", r"\s+") for c in raw["forward_cues"])
    change = sorted(raw["change_words"], key=len, reverse=True)
    return Vocab(
        past=_any(raw["past_cues"]),
        not_shares=_any(raw["not_shares"]),
        money=_any(raw["money_metrics"], whole=False),
        multiples=_any(raw["multiple_metrics"], whole=False),
        metric=re.compile(rf"(?<![\w&-])(?:{words})(?![\w&-])", re.I),
        qualifiers=frozenset(q.casefold() for q in raw["qualifiers"]),
        bands={_band_key(k): (float(a), float(b)) for k, (a, b) in raw["spoken_ranges"].items()},
        forward=re.compile(rf"\b(?:{cues})\b", re.I),
        pronouns=frozenset(raw["pronoun_subjects"]),
        change=re.compile(
            r"\b(?P<dir>" + "|".join(re.escape(w) for w in change) + r")\s+"
            r"(?:(?:by|of)\s+)?(?:(?:about|roughly|approximately|around|over|nearly|almost|"
            r"just\s+over|more\s+than|close\s+to)\s+)?$",
            re.I,
        ),
    )


def _any(words: list[str], *, whole: bool = True) -> re.Pattern[str]:
    """Any of ``words`` (spaces match any white space), whole words unless ``whole`` is
    False (then "sales" is found in "water sales" and "salesforce")."""
    alts = "|".join(
        re.escape(w).replace(r"\ ", r"\s+") for w in sorted(words, key=len, reverse=True)
    )
    return re.compile(rf"\b(?:{alts})\b" if whole else rf"(?:{alts})", re.I)


def _band_key(text: str) -> str:
    """'mid- to high 10s' -> 'mid to high 10s'; 'mid-single range' -> 'mid single'."""
    t = re.sub(r"[\s-]+", " ", text.casefold()).strip()
    return re.sub(r"\s+(?:range|area|zone)$", "", t)


# -- spoken figures ------------------------------------------------------------------------
_NUM = r"\d[\d,]*(?:\.\d+)?"
_SCALE = r"(?:\s?(?:million|billion|thousand|trillion|bn)\b|[MBK]\b)"
_UNIT = r"(?:\s?%|\s?percent\b|\s?per\s?cent\b|\s?basis\s+points?\b|\s?bps\b|\s?bp\b)"
_SPELLED = r"(?:one|two|three|four|five|six|seven|eight|nine|ten)"
_AMOUNT = rf"(?:\$\s?{_NUM}{_SCALE}?|{_NUM}(?:-plus)?{_UNIT})"
_BAND = (
    r"(?:low|mid|high)(?:[\s-]+(?:to|-)[\s-]*(?:low|mid|high))?[\s-]+"
    r"(?:(?:single|double)(?:[\s-]+digits?)?|teens|twenties|[123]0s)(?:[\s-]+(?:range|area))?"
)  # a bare "double digits" (10% or 90%?) is no figure
# the spoken figures, one alternative a kind (the group names say which matched)
_KINDS = (
    rf"(?P<low>\$?\s?{_NUM}{_SCALE}?(?:-plus)?{_UNIT}?)\s?(?:to|-|–)\s?"  # a range
    rf"(?P<high>{_AMOUNT}|{_NUM}\s(?:million|billion)(?=\s+(?:in|of)\s))",
    rf"between\s+(?P<low2>\$?\s?{_NUM}{_SCALE}?{_UNIT}?)\s+and\s+(?P<high2>{_AMOUNT})",
    rf"(?P<times>(?:{_NUM}|{_SPELLED})(?:\s?(?:to|or|-)\s?(?:{_NUM}|{_SPELLED}))?\s?(?:times|x)\b)",
    rf"(?P<band>{_BAND})",  # "mid-single digits", "low teens"
    rf"(?P<amount>{_AMOUNT})",
    rf"(?P<bare>{_NUM}\s(?:million|billion))(?=\s+(?:in|of)\s)",  # "45 million in sales"
)
FIGURE = re.compile(r"(?<![\w$.])(?:" + "|".join(_KINDS) + r")(?![\w%])", re.I)
_QUESTIONISH = re.compile(r"\?\s*$")
_CLAUSE = re.compile(r"[;:]|,\s+(?:and|but|so|while|whereas)\s|\s(?:but|whereas|while)\s", re.I)


@dataclass(frozen=True, slots=True)
class Mention:
    start: int  # chunk offsets
    end: int
    name: str

    @property
    def key(self) -> str:
        return self.name.casefold().split()[-1].rstrip("s")


def metrics_in(text: str, start: int = 0, end: int | None = None) -> list[Mention]:
    """The metric names in ``text[start:end]``, with up to two qualifiers before a head
    ("C&I loan growth", "operating margin")."""
    v = vocab()
    out: list[Mention] = []
    for m in v.metric.finditer(text, start, len(text) if end is None else end):
        a = m.start()
        for _ in range(2):
            w = re.search(r"(?:^|(?<=\s))([\w&'-]+)\s+$", text[max(start, a - 30) : a])
            if not w:
                break
            word = w.group(1)
            if word.casefold() in v.qualifiers or re.fullmatch(r"[A-Z][A-Z&]{1,5}", word):
                a -= len(w.group(0))
            else:
                break
        nxt = re.match(r"\s+([\w&'-]+)", text[m.end() : m.end() + 30])
        if nxt and nxt.group(1).casefold() in _NOT_HEAD_BEFORE:
            continue
        if out and re.fullmatch(r"[\s-]+", text[out[-1].end : a]):  # "production costs"
            a = out.pop().start
        out.append(Mention(a, m.end(), " ".join(text[a : m.end()].split())))
    # "our total sports apparel business will be roughly $300 million": a business the
    # company names as its own is a metric (its size); "our business" alone is none
    for m in _OWN_BUSINESS.finditer(text, start, len(text) if end is None else end):
        if not any(o.start <= m.start(1) < o.end for o in out):
            out.append(Mention(m.start(1), m.end(1), " ".join(m.group(1).split())))
    return sorted(out, key=lambda o: o.start)


_OWN_BUSINESS = re.compile(r"\bour\s+(?:total\s+)?((?:[a-z][\w&-]*\s+){1,3}business)\b")


def _in_play(mentions: list[Mention]) -> Mention | None:
    """The one metric a stretch of speech is about; None when none or several."""
    keys = {m.key for m in mentions}
    return mentions[-1] if len(keys) == 1 else None


_WE_TREND = re.compile(
    r"\bwe(?:'re|’re|\s+are|'ll|’ll|\s+will|\s+should)?\s+(?:now\s+)?"
    r"(?:trending|running|tracking|targeting|expecting|expect|landing|heading|moving|sitting|at)"
    r"(?:\s+(?:toward|towards|to|at|around|about|be|in|the|range|of)){0,4}$"
    # "I had put out there a range of 4% to 5%", "we guided to", "we've given guidance of"
    r"|\b(?:i|we)(?:'ve|’ve|\s+had|\s+have)?\s+"
    r"(?:put\s+out(?:\s+there)?|given|gave|guided|provided|said|talked\s+about)"
    r"(?:\s+(?:a|an|our|the|to|of|at|range|guidance|target|number|outlook)){0,4}$",
    re.I,
)


_MOVE_NOUN = re.compile(
    r"\s+(?:increase|decrease|decline|rise|jump|drop|improvement|reduction|growth|expansion|"
    r"contraction)\s+(?:in|of)\s+(?:our\s+|the\s+)?",
    re.I,
)


def _owned(word: str, rest: str) -> bool:
    """Whether "of ..." / "in ..." after a figure names what the figure is of ("of equity",
    "in water sales"), not when ("in 2021", "in the quarter", "of this year")."""
    return word.casefold().endswith("of") and not re.match(
        r"(?:this|last|next|the)?\s*(?:(?:19|20)\d{2}|year|quarter|month|\d)", rest, re.I
    )


def _clause_start(sent: str, fig: re.Match[str]) -> int:
    """Where the clause of the figure at ``fig`` starts: after a clause break or the
    previous figure of the sentence."""
    lo = 0
    for c in _CLAUSE.finditer(sent, 0, fig.start()):
        lo = c.end()
    prev = list(FIGURE.finditer(sent, lo, fig.start()))
    return max(lo, prev[-1].end()) if prev else lo


# an earlier "28% leisure," in the same sentence: the figure lists parts of a whole
_SHARE_BEFORE = re.compile(r"\d%\s+([a-z][a-z-]+(?:\s+[a-z][a-z-]+){0,2})\s*,")


def _subject(
    sent: str, at: int, fig: re.Match[str], mentions: list[Mention], asked_text: str = ""
) -> tuple[Mention | None, bool]:
    """(the metric of the figure at ``fig`` in ``sent`` (sentence at chunk offset ``at``),
    whether the clause leaves it to the context: a pronoun subject or no subject)."""
    lo = _clause_start(sent, fig)
    tail = AFTER.match(sent, fig.end())
    after = [m for m in mentions if tail and m.start == at + tail.end()]
    if tail and tail.group("own") and (after or _owned(tail.group("own"), sent[tail.end() :])):
        return (after[0] if after else None), False  # "$414 million of equity"
    moved = _MOVE_NOUN.match(sent, fig.end())  # "a 90% increase in production"
    if moved:
        of = [m for m in mentions if m.start == at + moved.end()]
        return (of[0] if of else None), False
    nxt = re.match(r"\s*([\w'’-]+|\S)", sent[fig.end() :])
    if nxt and nxt.group(1)[0].isalpha() and nxt.group(1).casefold() not in _FREE_AFTER:
        qualified = [m for m in mentions if m.start == at + fig.end() + nxt.start(1)]
        if qualified:
            return qualified[0], False  # "33% share"
        # "about 28% leisure, about 36% business transient" when asked about the leisure
        # mix: a share of what the question named
        part = re.match(r"\s+([a-z][a-z-]+(?:\s+[a-z][a-z-]+){0,2})(?=\s*(?:[,.;]|\band\b|$))",
                        sent[fig.end() :])  # fmt: skip
        if (
            part
            and fig.group("amount")
            and re.search(r"%|percent", fig.group("amount"))
            and (
                # the question names the first part; its siblings in the sentence follow
                re.search(rf"\b{re.escape(part.group(1).split()[0])}\b", asked_text, re.I)
                or any(
                    re.search(rf"\b{re.escape(m.group(1).split()[0])}\b", asked_text, re.I)
                    for m in _SHARE_BEFORE.finditer(sent[: fig.start()])
                )
            )
            and not vocab().not_shares.search(part.group(1))
        ):
            a = at + fig.end() + part.start(1)
            return Mention(a, a + len(part.group(1)), part.group(1)), False
        return None, False  # "$10 million deals", "$1.25 per gallon"
    if after and tail and tail.group("loose"):
        return after[0], False
    before = [m for m in mentions if at + lo <= m.start and m.end <= at + fig.start()]
    if before:
        near = before[-1]
        gap = sent[near.end - at : fig.start()]
        if len(gap.split()) <= MAX_GAP_WORDS:
            return near, False
        return None, False
    clause = sent[lo : fig.start()].strip(" ,.")
    words = re.findall(r"[\w'’-]+", clause.casefold().replace("’", "'"))
    if all(w in _FILLERS for w in words):  # elliptic: "Yeah. About $90 million"
        return None, True
    # "it was up 50 basis points", "We think it lands in the low teens": the words after
    # the clause's last pronoun only link it to the figure
    pronouns = [i for i, w in enumerate(words) if w in vocab().pronouns]
    if pronouns and all(w in _FILLERS or w in _LINKS for w in words[pronouns[-1] :]):
        return None, True
    # "we're trending toward four to five times": the company's figure of the metric in play
    return None, bool(_WE_TREND.search(clause))


def _props(fig: re.Match[str], sent: str, metric: str) -> dict[str, str | float] | None:
    v = vocab()
    props: dict[str, str | float] = {}
    if fig.group("times"):
        ends = [_spelled(n) for n in re.findall(rf"{_NUM}|{_SPELLED}", fig.group("times"), re.I)]
        if not vocab().multiples.search(metric) or None in ends:
            return None
        props.update(low_value=ends[0], high_value=ends[-1], unit="x", raw=fig.group("times"))
        if len(ends) == 1:
            props.update(value=ends[0], measure="level")
            del props["low_value"], props["high_value"]
        else:
            props["measure"] = "range"
        return props
    if fig.group("band"):
        ends = v.bands.get(_band_key(fig.group("band")))
        if ends is None:
            return None
        props.update(low_value=ends[0], high_value=ends[1], unit="%", raw=fig.group("band"))
        props["measure"] = "range"
        return props
    money = "$" if vocab().money.search(metric) else ""
    if fig.group("bare"):  # "45 million in water sales": money as its subject says
        if not money:
            return None
        props["level"] = money + fig.group("bare")
        return props
    low, high = fig.group("low") or fig.group("low2"), fig.group("high") or fig.group("high2")
    if low and high:
        if re.fullmatch(rf"{_NUM}\s(?:million|billion)", high.strip()):
            if not money:
                return None
            low, high = money + low.lstrip("$ "), money + high.strip()
        props.update(low=low.strip(), high=high.strip())
        return props
    raw = re.sub(r"-plus\b", "", fig.group("amount"), flags=re.I)  # "8-plus percent"
    ch = v.change.search(sent[max(0, fig.start() - 60) : fig.start()])
    moved = _MOVE_NOUN.match(sent, fig.end())
    if moved:
        props.update(chg=raw, dir=moved.group(0).split()[0].casefold())
    elif ch:
        props.update(chg=raw, dir=ch.group("dir").casefold())
    else:
        props["level"] = raw
    return props


_WORDS = {
    w: float(i)
    for i, w in enumerate("zero one two three four five six seven eight nine ten".split())
}


def _spelled(n: str) -> float | None:
    try:
        return float(n.replace(",", ""))
    except ValueError:
        return _WORDS.get(n.casefold())


# the periods a speaker names relative to the call
_WHEN = {
    name: re.compile(pattern, re.I)
    for name, pattern in (
        ("next_quarter", r"\bnext\s+quarter\b"),
        ("next_year", r"\bnext\s+(?:fiscal\s+)?year\b"),
        ("this_year", r"\b(?:for|in|over|through)\s+the\s+(?:full[\s-]+|fiscal\s+|whole\s+)?"
         r"year\b|\bfull[\s-]+year\b|\b(?:this|the\s+current)\s+(?:fiscal\s+)?year\b"),
        ("this_quarter", r"\b(?:this|the\s+current)\s+quarter\b"),
        ("bare_quarter", r"\b(first|second|third|fourth)[\s-]+quarter\b(?!\s+of)"),
        ("any", r"\b(?:quarter|year|Q[1-4]|(?:19|20)\d{2}|month)\b"),
    )
}  # fmt: skip
_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4}


# a clause whose subject is another party: its figure is not the company's
_THIRD_PARTY = re.compile(
    r"\b(?:these|those)\s+(?:folks|guys|people|companies|customers|clients|businesses|deals)\b|"
    r"\b(?:our\s+)?(?:customers|clients|competitors|peers|consumers|tenants|the\s+industry|"
    r"the\s+market|the\s+economy)\b",
    re.I,
)


def _other_quarter(sent: str, header: str) -> bool:
    """Whether a sentence names a quarter (without its year) other than the call's."""
    quarter, _ = header_period(header)
    bare = _WHEN["bare_quarter"].search(sent)
    return bool(bare and quarter and _ORDINALS[bare.group(1).casefold()] != int(quarter[-1]))


def _period_hint(sent: str, header: str, forward: bool) -> str:
    """The period a sentence leaves to the call: next quarter / next year, or the call's
    year for guidance that names no period; "" to let ``complete_metric`` read it."""
    quarter, year = header_period(header)
    if not year:
        return ""
    y = int(year[2:])
    if _WHEN["next_quarter"].search(sent) and quarter:
        q = int(quarter[-1])
        return f"{y + (q == 4)}-Q{q % 4 + 1}"
    if _WHEN["next_year"].search(sent):
        return f"FY{y + 1}"
    # a fourth-quarter call is held after its year ended: the year it looks forward to, or
    # calls "the current fiscal year", is the next one ("$16 million within the current
    # fiscal year" on a Q4 2020 call is fiscal 2021)
    after_year = bool(quarter) and quarter.endswith("Q4")
    if _WHEN["this_year"].search(sent):
        current = re.search(r"\bthe\s+current\s+(?:fiscal\s+)?year\b", sent, re.I)
        return f"FY{y + 1}" if after_year and (forward or current) else year
    if _WHEN["this_quarter"].search(sent) and quarter:
        return quarter
    bare = _WHEN["bare_quarter"].search(sent)
    if bare and quarter and not forward and not own_period(sent):
        n = _ORDINALS.get(bare.group(1).casefold(), 0)
        if n > int(quarter[-1]):  # "we ended the fourth quarter at" on a Q1 call: last year's
            return f"{y - 1}-Q{n}"
    if forward and not own_period(sent) and not re.search(r"\bquarter\b|\bQ[1-4]\b", sent):
        return f"FY{y + 1}" if after_year else year
    return ""


_FIGURE_KEYS = ("value", "low_value", "high_value")


def _guidance_of_the_year(text: str, ctx: DocContext, known: list[Candidate]) -> None:
    """Guidance the sentence patterns read ("services is expected to grow 6% to 7%") whose
    evidence names no period (it came from the header) is the year's, not the call's
    quarter: FY of the call, the next one on a fourth-quarter call (``_period_hint``).
    Changed in place."""
    header = f"{ctx.title}\n{text[:HEADER_CHARS]}"
    quarter, _ = header_period(header)
    for c in known:
        if (
            c.relation == "DISCLOSES"
            and quarter
            and c.props.get("period") == quarter
            and c.props.get("period_source") == "header"  # the sentence named no period
            and vocab().forward.search(text[c.start : c.end])
            and not re.search(r"\bquarter\b|\bQ[1-4]\b", text[c.start : c.end], re.I)
        ):
            c.props["period"] = _period_hint("", header, True) or c.props["period"]


def _numbers(
    props: dict[str, str | float], keys: tuple[str, ...] = (*_FIGURE_KEYS, "change_value")
) -> set[float]:
    """The numbers a fact's ``keys`` hold, rounded so that two readings of one figure meet."""
    return {round(float(x), 6) for k in keys if isinstance(x := props.get(k), int | float)}


def call_figures(
    text: str,
    ctx: DocContext,
    turns: list[Turn],
    start: int = 0,
    end: int | None = None,
    known: list[Candidate] | None = None,
) -> list[Candidate]:
    """The management figures of the chunk ``text`` (``[start, end)`` of the document whose
    ``turns`` are given), each with its metric resolved; see the module. A figure that a
    ``known`` metric fact (the sentence patterns') already reads in the same sentence is
    left to it: one reading per figure. The officers management introduces as the
    company's (``calls_people``) come with them: the pipeline reads a call through this
    one entry."""
    _guidance_of_the_year(text, ctx, known or [])
    read = [
        (
            c.start,
            c.end,
            _numbers(c.props),
            str(c.props.get("period", "")),
            c.tail.casefold().split(),
        )
        for c in known or ()
        if c.relation == "DISCLOSES"
    ]
    end = start + len(text) if end is None else end
    header = f"{ctx.title}\n{text[:HEADER_CHARS]}"
    day = ctx.event_time.date().isoformat() if ctx.event_time else ""
    v = vocab()
    # the call's company: the document's, else the ticker its title names ("ABM Q2 2021
    # earnings call"), which the chunk holds; with neither the verifier drops "we"
    titled = TITLE_TICKER.match(ctx.title or "")
    company = ctx.main_entity or (titled.group(1) if titled else "we")
    out: list[Candidate] = []
    asked: list[Mention] = []
    asked_text = ""
    for turn in turns:
        if turn.end <= start or turn.start >= end:
            continue
        a, b = max(turn.start, start) - start, min(turn.end, end) - start
        if turn.role == "analyst":
            asked, asked_text = metrics_in(text, a, b), text[a:b]
            continue
        if turn.role != "management":
            continue
        carried: Mention | None = None  # the metric the turn's previous sentence was about
        named: set[str] = set()  # the metrics the turn named so far
        carried_past = False
        turn_last: Mention | None = None
        for sa, sb in sentence_spans(text[a:b]):
            sa, sb = a + sa, a + sb
            sent = text[sa:sb]
            mentions = metrics_in(text, sa, sb)
            if _QUESTIONISH.search(sent):
                carried, carried_past = _in_play(mentions), False
                named |= {m.key for m in mentions}
                continue
            own_keys = {m.key for m in mentions}
            for fig in FIGURE.finditer(sent):
                metric, open_ = _subject(sent, sa, fig, mentions, asked_text)
                if metric is None and open_ and not own_keys:
                    asked_one = _in_play(asked)
                    if carried is not None:
                        metric = carried
                    elif len(named) == 1 and turn_last is not None:
                        metric = turn_last  # the one metric the answer is about so far
                    elif asked_one and named <= {asked_one.key}:
                        metric = asked_one
                if metric is None or _THIRD_PARTY.search(
                    sent[_clause_start(sent, fig) : fig.start()]
                ):
                    continue  # no metric, or another party's figure ("These folks drive ...")
                if metric.start < sa and _other_quarter(sent, header):
                    continue  # a metric in play, a figure of another quarter: too loose
                props = _props(fig, sent, metric.name)
                lead = sent[max(0, fig.start() - 80) : fig.start()]
                past = v.past.search(lead) and not re.search(r"\bnow\b|\btoday\b", lead[-40:])
                if (
                    metric.start < sa
                    and carried_past
                    and re.search(r"\b(?:was|were)\b", lead[-40:])
                ):
                    past = True  # the sentence the metric came from spoke of the past
                if props is None or past:
                    continue
                forward = bool(v.forward.search(sent))
                # a sentence may name two periods ("ended the fourth quarter at five times
                # and this quarter at 5.1 times"): the figure's clause speaks first
                rest = re.split(r"\band\b|[,;]", sent[fig.end() : fig.end() + 40])[0]
                own = sent[_clause_start(sent, fig) : fig.end()] + rest
                said = own if _WHEN["any"].search(own) else sent
                if hint := _period_hint(said, header, forward):
                    props["period"] = hint
                complete_metric(props, metric.name, said, header, day)
                if not props.get("period") or not (
                    isinstance(props.get("value"), float) or "low_value" in props
                ):
                    continue
                props["kind"] = "guidance" if forward else "actual"
                props["speaker"] = turn.speaker
                if re.search(
                    r"\bannuali[sz]ed\s+basis\b|\brun[\s-]rate\b", sent[fig.end() : fig.end() + 60]
                ):
                    props["measure"] = "annualized"  # "$17 million on an annualized basis"
                if props.get("unit") == "%" and re.match(r"\s+of\s", sent[fig.end() :]):
                    props["measure"] = "share"  # "90% of the backlog": a part, not the level
                if metric.start < sa:
                    props["subject_from"] = "context"
                span_start = min(metric.start, sa)
                mine = _numbers(props, _FIGURE_KEYS)
                words = metric.name.casefold().split()
                if any(
                    mine & nums
                    and ((ka < sb and sa < kb) or (per == props["period"] and set(w) & set(words)))
                    for ka, kb, nums, per, w in read
                ):  # the same figure read by the sentence patterns: theirs stands
                    continue
                out.append(
                    Candidate(
                        company,
                        ctx.main_type,
                        "DISCLOSES",
                        metric.name,
                        "FinMetric",
                        span_start,
                        sb,
                        Component.PATTERN,
                        RULE,
                        None,
                        props,
                        0.85,
                    )
                )
            carried = _in_play(mentions)  # the previous sentence's metric, or none
            carried_past = bool(v.past.search(sent))
            named |= {m.key for m in mentions}
            turn_last = mentions[-1] if mentions else turn_last
    return out + [
        c
        for reader in (call_people, call_places, call_products, call_partners)
        for c in reader(text, ctx, turns, start, end)
    ]
