"""Trigger patterns -> parsing units (FinQA, "Unit Mapping").

The regexes live in ``triggers.toml``; this module compiles them and turns a question
into the units the synthesizer combines: an aggregation (RETURN), comparisons and a
time window (WHERE). Times are UTC epoch milliseconds, as stored in the graph.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any

from kg.cypher.lexicon import _normalize, triggers
from kg.graph.quantities import canonical_unit

DAY = timedelta(days=1)
_MONTHS = {m: i for i, m in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split(), 1)}
_NUMBER = re.compile(
    r"(?P<n>-?\d+(?:\.\d+)?|[一二两三四五六七八九十]|\b(?:one|two|three|four|five|six|seven|eight|nine|ten)\b)"
    r"\s*(?P<unit>%|percent|bp|bps|个基点|基点)?"
)
_WORD_NUMS = {
    **{w: i for i, w in enumerate("zero one two three four five six seven eight nine ten".split())},
    **{w: i for i, w in enumerate("零一二三四五六七八九十")},
    "两": 2,
}


# "(不含4%)", "(exclusive)" right after an inclusive bound: the bound is excluded.
_EXCLUSIVE = re.compile(r"\s*[（(]\s*(?:不含|不包括|excl|exclusive|strictly)", re.I)


def _num(text: str) -> float:
    return float(_WORD_NUMS[text]) if text in _WORD_NUMS else float(text)


@dataclass(frozen=True, slots=True)
class TimeWindow:
    kind: str
    start_ms: int | None  # inclusive
    end_ms: int | None  # exclusive
    text: str

    @property
    def point(self) -> bool:
        """An ``as of`` time: facts valid then, values up to then."""
        return self.kind == "as_of"


@dataclass(frozen=True, slots=True)
class Comparison:
    op: str  # > >= < <= =
    value: float
    pos: int  # character offset of the trigger in the normalized question
    unit: str = ""


@dataclass(frozen=True, slots=True)
class Units:
    aggregation: str | None
    comparisons: tuple[Comparison, ...]
    time: TimeWindow | None
    value_word: bool


@cache
def _compiled() -> dict[str, Any]:
    t = triggers()

    def comp(pats: list[str]) -> list[re.Pattern[str]]:
        return [re.compile(p, re.IGNORECASE) for p in pats]

    return {
        "aggregations": [(a["op"], comp(a["patterns"])) for a in t["aggregations"]],
        "comparisons": [(c["op"], comp(c["patterns"])) for c in t["comparisons"]],
        "comparisons_after": [(c["op"], comp(c["patterns"])) for c in t["comparisons_after"]],
        "comparisons_sign": [(c["op"], comp(c["patterns"])) for c in t["comparisons_sign"]],
        "times": [(x["kind"], comp(x["patterns"])) for x in t["times"]],
        "dates": comp(t["dates"]["patterns"]),
        "range": re.compile(t["range"]["between"], re.IGNORECASE),
        "range_gap": int(t["range"]["max_gap"]),
        "day_only": comp(t["range"]["day_only"]),
        "day_first": comp(t["range"]["day_first"]),
        "time_units": comp(t["time_units"]["patterns"]),
        "value_words": comp(t["value_words"]["patterns"]),
    }


def _ms(d: datetime) -> int:
    return int(d.timestamp() * 1000)


def _day(d: datetime) -> datetime:
    return d.replace(hour=0, minute=0, second=0, microsecond=0)


def _month(g: dict[str, str | None]) -> int:
    if g.get("m"):
        return int(str(g["m"]))
    return _MONTHS[str(g["mon"])[:3].lower()]


def _date(m: re.Match[str], name: str = "a", now: datetime | None = None) -> datetime | None:
    """The day (or time) a match names; month-day without a year is the latest such day
    not after ``now``."""
    g = m.groupdict()
    try:
        d: datetime | None = None
        if g.get(name):
            text = g[name].upper().replace(" ", "T").rstrip("Z")
            d = datetime.fromisoformat(text)
            d = d.replace(tzinfo=UTC) if d.tzinfo is None else d.astimezone(UTC)
        elif g.get("y") and g.get("d"):
            d = datetime(int(g["y"]), _month(g), int(g["d"]), tzinfo=UTC)
        elif g.get("d") and now is not None and (g.get("m") or g.get("mon")):
            d = datetime(now.year, _month(g), int(g["d"]), tzinfo=UTC)
            if d > now:
                d = d.replace(year=now.year - 1)
        if d is not None and g.get("hm"):
            hh, mm = g["hm"].split(":")
            d = d.replace(hour=int(hh), minute=int(mm))
        return d
    except (ValueError, KeyError):
        return None
    return None


# Time kinds that name one day relative to now: they are day mentions too, so ranges
# and comparisons work with them ("from Monday's open to Friday's close", "周一到周三").
_RELATIVE_DAY_KINDS = ("weekday", "yesterday", "day_before_yesterday", "days_ago", "today")


def _relative_day(kind: str, m: re.Match[str], today: datetime) -> datetime | None:
    if kind == "weekday":
        want = _WEEKDAYS[m.group("wd").lower()]
        return today - ((today.weekday() - want) % 7 or 7) * DAY
    if kind == "yesterday":
        return today - DAY
    if kind == "day_before_yesterday":
        return today - 2 * DAY
    if kind == "days_ago":
        return today - _days_back(m.group("n")) * DAY
    if kind == "today":
        return today
    return None


def _days_back(n: str) -> int:
    return 3 if n == "大" else int(_num(n.lower()))  # "大前天": three days ago


def day_mentions(
    text: str, now: datetime, *, relative: bool = True
) -> list[tuple[int, int, datetime]]:
    """(start, end, day) of every day the normalized text names, in order, no overlaps:
    dates, and weekdays or days counted back from now."""
    found: list[tuple[int, int, datetime]] = []
    for p in _compiled()["dates"]:
        for m in p.finditer(text):
            if any(m.start() < e and s < m.end() for s, e, _ in found):
                continue
            d = _date(m, now=now)
            if d is not None:
                found.append((m.start(), m.end(), _day(d)))
    for kind, pats in _compiled()["times"] if relative else ():
        if kind not in _RELATIVE_DAY_KINDS:
            continue
        for p in pats:
            for m in p.finditer(text):
                if any(m.start() < e and s < m.end() for s, e, _ in found):
                    continue
                d = _relative_day(kind, m, _day(now))
                if d is not None:
                    found.append((m.start(), m.end(), d))
    return sorted(found)


def _range(text: str, now: datetime) -> tuple[datetime, datetime, str] | None:
    """Two day mentions joined by a connector ("from Nov 16 to Nov 20", "11月16日到18日")."""
    days = day_mentions(text, now)
    c = _compiled()
    for k, (s1, e1, d1) in enumerate(days):
        for p in c["day_first"]:  # "16-20 November": the first end is a day of its month
            m = p.search(text[:s1])
            if m:
                try:
                    d0 = d1.replace(day=int(m.group("d")))
                except ValueError:
                    continue
                if d0 < d1:
                    return d0, d1, text[m.start() : e1]
        for p in c["day_only"]:
            m = p.match(text, e1)
            if m:
                try:
                    d2 = d1.replace(day=int(m.group("d")))
                except ValueError:
                    continue
                if d2 > d1:
                    return d1, d2, text[s1 : m.end()]
        if k + 1 < len(days):
            s2, e2, d2 = days[k + 1]
            gap = text[e1:s2]
            if len(gap) <= c["range_gap"] and c["range"].search(gap) and d2 != d1:
                # "周五收盘比周四收盘": the later day named first; the range runs forward
                return min(d1, d2), max(d1, d2), text[s1:e2]
    return None


_CN_MONTHS = {w: i for i, w in enumerate("一 二 三 四 五 六 七 八 九 十 十一 十二".split(), 1)}
_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4}


def _month_start(year: int, month: int) -> datetime:
    return datetime(year, month, 1, tzinfo=UTC)


def _month_span(kind: str, g: dict[str, Any], now: datetime) -> tuple[datetime, datetime] | None:
    """[start, end) of months named without a year: the latest such span that has begun by
    now (a month range, one month, a quarter or half of the current year)."""
    if kind == "month_range":
        if g.get("ma"):
            a, b = _MONTHS[g["ma"][:3].lower()], _MONTHS[g["mb"][:3].lower()]
        elif g.get("a"):
            a, b = int(g["a"]), int(g["b"])
        else:
            a, b = _CN_MONTHS[g["ca"]], _CN_MONTHS[g["cb"]]
    elif kind == "month_noyear":
        if g.get("mon"):
            a = _MONTHS[g["mon"][:3].lower()]
        elif g.get("m"):
            a = int(g["m"])
        else:
            a = _CN_MONTHS[g["cm"]]
        b = a
    else:
        if g.get("q") or g.get("qw") or g.get("cq"):
            q = int(g["q"]) if g.get("q") else _ORDINALS.get(g.get("qw") or "", 0)
            q = q or _CN_MONTHS.get(g.get("cq") or "", 0)
            a, b = 3 * q - 2, 3 * q
        else:
            first = g.get("h") == "1" or g.get("hw") == "first" or g.get("ch") == "上"
            a, b = (1, 6) if first else (7, 12)
    if not (1 <= a <= 12 and 1 <= b <= 12 and a <= b):
        return None
    year = now.year if _month_start(now.year, a) <= now else now.year - 1
    end = _month_start(year + 1, 1) if b == 12 else _month_start(year, b + 1)
    return _month_start(year, a), end


def _year_word(w: str | None, now: datetime) -> int | None:
    """The year a word names: 去年 / last year, 今年 / this year, 前年, 2023(年)."""
    if not w:
        return None
    w = w.strip().rstrip("年").strip()
    rel = {"去": -1, "last year": -1, "今": 0, "this year": 0, "前": -2}
    return now.year + rel[w] if w in rel else int(w)


def _month_years(g: dict[str, Any], now: datetime) -> tuple[datetime, datetime] | None:
    """[start, end) of a month range whose ends may name their years (``month_years``):
    a missing year is the latest that keeps the range in order and begun by now."""
    if g.get("ma"):
        a, b = _MONTHS[g["ma"][:3].lower()], _MONTHS[g["mb"][:3].lower()]
    else:
        a = int(g["a"]) if g.get("a") else _CN_MONTHS.get(g.get("ca") or "", 0)
        b = int(g["b"]) if g.get("b") else _CN_MONTHS.get(g.get("cb") or "", 0)
    if not (1 <= a <= 12 and 1 <= b <= 12):
        return None
    ya, yb = _year_word(g.get("ya"), now), _year_word(g.get("yb"), now)
    if yb is None and ya is not None:
        yb = ya if a <= b else ya + 1
    if yb is None:
        yb = now.year if _month_start(now.year, b) <= now else now.year - 1
    if ya is None:
        ya = yb if a <= b else yb - 1
    start, last = _month_start(ya, a), _month_start(yb, b)
    if last < start or start > now:
        return None
    return start, _month_start(yb + 1, 1) if b == 12 else _month_start(yb, b + 1)


_WEEKDAYS = {
    **{
        d: i
        for i, d in enumerate("monday tuesday wednesday thursday friday saturday sunday".split())
    },
    **{d: i for i, d in enumerate("一二三四五六日")},
    "天": 6,
    **{d: i for i, d in enumerate("mon tue wed thu fri sat sun".split())},
    "tues": 1,
    "thur": 3,
    "thurs": 3,
}


def time_window(question: str, now: datetime) -> TimeWindow | None:
    text = _normalize(question)
    today = _day(now)
    for kind, pats in _compiled()["times"]:
        if kind == "date":
            days = day_mentions(text, now, relative=False)
            if days:
                s, e, a = days[0]
                return TimeWindow(kind, _ms(a), _ms(a + DAY), text[s:e])
            continue
        if kind == "between":
            r = _range(text, now)
            if r:
                return TimeWindow(kind, _ms(r[0]), _ms(r[1] + DAY), r[2])
        for p in pats:
            m = p.search(text)
            if not m:
                continue
            if kind == "between":
                g = m.groupdict()
                if g.get("ma") and g.get("mb") and (g.get("y") or g.get("ya")):
                    # "between January and October 2026", "from the July 2024 release to the
                    # September 2024 release": the months from the first to the last
                    ya, yb = int(g.get("ya") or g["y"]), int(g.get("yb") or g["y"])
                    a = datetime(ya, _MONTHS[g["ma"][:3]], 1, tzinfo=UTC)
                    last = datetime(yb, _MONTHS[g["mb"][:3]], 1, tzinfo=UTC)
                    b = (last + 32 * DAY).replace(day=1)
                    return TimeWindow(kind, _ms(a), _ms(b), m.group())
                a, b = _date(m, "a"), _date(m, "b")
                if a and b:
                    return TimeWindow(kind, _ms(a), _ms(b + DAY), m.group())
            elif kind == "month_years":
                span = _month_years(m.groupdict(), now)
                if span is not None:
                    return TimeWindow(kind, _ms(span[0]), _ms(span[1]), m.group())
            elif kind == "since":
                days = [d for d in day_mentions(text, now) if 0 <= d[0] - m.end() <= 2]
                if days:
                    s, e, a = days[0]
                    return TimeWindow(kind, _ms(a), None, text[m.start() : e])
            elif kind == "as_of":
                a = _date(m, now=now)
                if a is None and m.groupdict().get("hm"):  # "at 03:00 UTC on Nov 19"
                    days = day_mentions(text, now)
                    if days:
                        hh, mm = m.group("hm").split(":")
                        a = days[0][2].replace(hour=int(hh), minute=int(mm))
                if a:
                    has_time = a != _day(a) or bool(m.groupdict().get("hm"))
                    end = a + (timedelta(milliseconds=1) if has_time else DAY)
                    return TimeWindow(kind, None, _ms(end), m.group())
            elif kind == "month":
                try:
                    a = datetime(int(m.group("y")), _month(m.groupdict()), 1, tzinfo=UTC)
                except (ValueError, KeyError):
                    continue
                b = (a + 32 * DAY).replace(day=1)
                return TimeWindow(kind, _ms(a), _ms(b), m.group())
            elif kind == "clock_range":  # two clock times of the day the text names
                days = day_mentions(text, now)
                if days:
                    (h1, m1), (h2, m2) = (map(int, m.group(g).split(":")) for g in ("h1", "h2"))
                    day = days[0][2]
                    a = day.replace(hour=h1, minute=m1)
                    b = day.replace(hour=h2, minute=m2) + timedelta(milliseconds=1)
                    if a < b:
                        return TimeWindow(kind, _ms(a), _ms(b), m.group())
            elif kind == "month_tail":  # "the last 5 trading days of august": its month
                span = _month_span("month_noyear", m.groupdict(), now)
                if span is not None:
                    return TimeWindow(kind, _ms(span[0]), _ms(span[1]), m.group())
            elif kind in ("month_range", "month_noyear", "quarter"):
                span = _month_span(kind, m.groupdict(), now)
                if span is None:
                    continue
                return TimeWindow(kind, _ms(span[0]), _ms(span[1]), m.group())
            elif kind == "year":
                y = int(m.group("y"))
                a, b = datetime(y, 1, 1, tzinfo=UTC), datetime(y + 1, 1, 1, tzinfo=UTC)
                return TimeWindow(kind, _ms(a), _ms(b), m.group())
            elif kind == "days_ago":
                n = _days_back(m.group("n"))
                return TimeWindow(kind, _ms(today - n * DAY), _ms(today - (n - 1) * DAY), m.group())
            elif kind == "day_before_yesterday":
                return TimeWindow(kind, _ms(today - 2 * DAY), _ms(today - DAY), m.group())
            elif kind == "weekday":
                want = _WEEKDAYS[m.group("wd").lower()]
                back = (today.weekday() - want) % 7 or 7
                a = today - back * DAY
                return TimeWindow(kind, _ms(a), _ms(a + DAY), m.group())
            elif kind == "last_days":
                n = int(_num(m.group("n").lower()))
                return TimeWindow(kind, _ms(now - n * DAY), None, m.group())
            elif kind == "last_week":
                return TimeWindow(kind, _ms(now - 7 * DAY), None, m.group())
            elif kind == "prev_week":  # on a weekend, the trading week just ended
                monday = today - today.weekday() * DAY
                if today.weekday() >= 5:
                    return TimeWindow(kind, _ms(monday), _ms(today), m.group())
                return TimeWindow(kind, _ms(monday - 7 * DAY), _ms(monday), m.group())
            elif kind == "this_week":
                return TimeWindow(kind, _ms(today - today.weekday() * DAY), None, m.group())
            elif kind == "last_month":
                first = today.replace(day=1)
                prev = (first - DAY).replace(day=1)
                return TimeWindow(kind, _ms(prev), _ms(first), m.group())
            elif kind == "past_month":
                return TimeWindow(kind, _ms(now - 30 * DAY), None, m.group())
            elif kind == "this_month":
                return TimeWindow(kind, _ms(today.replace(day=1)), None, m.group())
            elif kind == "this_year":
                return TimeWindow(kind, _ms(today.replace(month=1, day=1)), None, m.group())
            elif kind == "yesterday":
                return TimeWindow(kind, _ms(today - DAY), _ms(today), m.group())
            elif kind == "today":
                return TimeWindow(kind, _ms(today), None, m.group())
    return None


# Windows whose phrases hold words that also ask a fold or a period ("the FIRST half",
# "LAST month", "the LAST 4 trading days of august"): inside the phrase they are the window's.
_WORDY_WINDOWS = frozenset(
    {"month_tail", "month_range", "quarter", "last_days", "prev_week", "last_week"}
    | {"last_month", "past_month"}
)


def untimed(text: str) -> str:
    """``text`` with every phrase of a window that holds a fold or period word
    blanked (same length), so "first", "last" and "month" there ask nothing of their own."""
    out = list(text)
    for kind, pats in _compiled()["times"]:
        if kind in _WORDY_WINDOWS:
            for p in pats:
                for m in p.finditer(text):
                    out[m.start() : m.end()] = " " * (m.end() - m.start())
    return "".join(out)


def aggregation(question: str, skip: tuple[str, ...] = ()) -> str | None:
    text = _normalize(question)
    for op, pats in _compiled()["aggregations"]:
        if op not in skip and any(p.search(text) for p in pats):
            return op
    return None


_MONTH_WORD = re.compile(
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\b|\bq[1-4]\b|[一二三四五六七八九十]+月|\d+月"
)


def _compared_before(text: str, at: int) -> bool:
    """Whether a comparison trigger ends just before position ``at`` ("less than 10 ...")."""
    for _op, pats in _compiled()["comparisons"]:
        for p in pats:
            if any(at - m.end() <= 2 for m in p.finditer(text, max(0, at - 40), at)):
                return True
    return False


def comparisons(question: str) -> list[Comparison]:
    """Comparison triggers followed (within a few characters) by a number."""
    text = _normalize(question)
    out: list[Comparison] = []
    taken: set[int] = set()
    for op, pats in _compiled()["comparisons_after"]:  # "1.0% or above" before "at 1.0"
        for p in pats:
            for m in p.finditer(text):
                if m.start() in taken:
                    continue
                if op == "=" and _compared_before(text, m.start()):
                    continue  # "less than 10 years tenor": the comparison word says how
                taken.add(m.start())
                if op in (">=", "<=") and _EXCLUSIVE.match(text, m.end()):
                    op = op[0]  # "4%以上（不含4%）": the bound itself excluded
                out.append(Comparison(op, _num(m.group("n")), m.start(), ""))
    for op, pats in _compiled()["comparisons_sign"]:  # "closed negative", "为负": against 0
        for p in pats:
            for m in p.finditer(text):
                if any(c.pos <= m.start() < c.pos + 12 for c in out) or m.start() in taken:
                    continue
                taken.update(range(m.start(), m.end()))
                out.append(Comparison(op, 0.0, m.start(), ""))
    for op, pats in _compiled()["comparisons"]:
        for p in pats:
            for m in p.finditer(text):
                num = _NUMBER.search(text, m.end(), min(len(text), m.end() + 12))
                if not num or num.start() in taken:
                    continue
                after = text[num.end("n") : num.end("n") + 1]
                if after.isdigit():
                    continue  # a number cut by the search window ("... 10Y" read as "1")
                if not num.group("unit") and after.isascii() and after.isalpha():
                    if not re.match(r"(?:y|yr|yrs|years?)\b", text[num.end("n") :]):
                        continue  # part of a name ("over 2s"), not a threshold ("10y" is)
                if not num.group("unit") and any(
                    p.match(text, num.end()) for p in _compiled()["time_units"]
                ):
                    continue  # a span of time ("over the past 7 days"), not a threshold
                if (
                    re.fullmatch(r"\d{4}", num.group("n"))
                    and text[num.end() : num.end() + 1] == "-"
                ):
                    continue  # a date, not a threshold
                if re.fullmatch(r"(?:19|20)\d\d", num.group("n")) and _MONTH_WORD.search(
                    text, m.end(), num.start()
                ):
                    continue  # "over August 2024": the year of a month, not a threshold
                taken.add(num.start())
                value = _num(num.group("n"))
                unit = (num.group("unit") or "").strip()
                if canonical_unit(unit) == "bp":  # the shared unit names (kg.graph.quantities)
                    value, unit = value / 100.0, "%"
                out.append(Comparison(op, value, m.start(), unit))
    return sorted(out, key=lambda c: c.pos)


def value_word(question: str) -> bool:
    text = _normalize(question)
    return any(p.search(text) for p in _compiled()["value_words"])


def parse(question: str, now: datetime) -> Units:
    return Units(
        aggregation(question),
        tuple(comparisons(question)),
        time_window(question, now),
        value_word(question),
    )
