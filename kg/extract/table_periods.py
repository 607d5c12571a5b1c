"""Column headers -> reporting periods ("Three Months Ended June 30, 2024" -> 2024-04-01..06-30).

A table's header cells name periods in many ways: a bare fiscal year ("2024", "Fiscal
2023", "FY23"), a quarter ("Q2 2024", "second quarter of fiscal 2024", "2024年第一季度"),
a span ("Year Ended December 31, 2022", "Six Months Ended ..."), or an instant ("December
31, 2022", "As of ..."). The fiscal year end comes from the header or the caption ("years
ended September 30") and is December 31 otherwise, in which case the period says so
(``basis="calendar_assumed"``). Anything else is no period: the caller drops the cell.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, timedelta

MONTHS = {m.lower(): i for i, m in enumerate(calendar.month_name) if m}
MONTHS.update({m.lower(): i for i, m in enumerate(calendar.month_abbr) if m})
MONTHS["sept"] = 9
# "years ended June 30" in a filing's text: its fiscal year end (tables and their captions)
FYE_PHRASE = re.compile(
    r"\b(?:fiscal\s+)?years?\s+ended\s+(" + "|".join(calendar.month_name[1:]) + r")\s+(\d{1,2})\b",
    re.I,
)
_MONTH = (
    r"(?P<month>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_YEAR4 = r"(?P<year>(?:19|20|21)\d{2})"
_DATE = re.compile(_MONTH + r"\s+(?P<day>\d{1,2})(?:st|nd|rd|th)?\s*,?\s*" + _YEAR4 + r"?", re.I)
# the English ways a header names a period, one pattern each (all case-blind)
_SPAN, _YEAR_ENDED, _INSTANT, _FY, _QUARTER, _HALF = (
    re.compile(pattern, re.I)
    for pattern in (
        # "Six Months Ended", "13 weeks ended", "Quarter Ended"
        r"(?P<n>three|six|nine|twelve|3|6|9|12|thirteen|twenty-six|thirty-nine|fifty-two|13|26|39|52)"
        r"[\s-]+(?P<what>months?|weeks?)\s+(?:period\s+)?ended|(?P<qe>quarters?)\s+ended",
        r"\b(?:fiscal\s+)?years?\s+ended\b|\bfiscal\s+years?\b",
        r"\b(?:as\s+of|at|balance\s+at)\b",
        # "FY24", "Fiscal 2024", "2024", "'24"
        r"(?:\b(?:FY|fiscal(?:\s+year)?|F)\s*'?(?P<fy>(?:19|20|21)\d{2}|\d{2})\b)|\b"
        + _YEAR4
        + r"\b|(?<![\d.,$])'(?P<yy>\d{2})\b",
        r"\bQ(?P<q1>[1-4])\b|\b(?P<q2>[1-4])Q\b|"
        r"\b(?P<q3>first|second|third|fourth|1st|2nd|3rd|4th)\s+(?:fiscal\s+)?quarter|第(?P<q4>[一二三四1-4])季度",
        r"\bH(?P<h1>[12])\b|\b(?P<h2>first|second)\s+half|(?P<h3>上|下)半年",
    )
)
_ZH_YEAR = re.compile(r"(?P<year>(?:19|20|21)\d{2})\s*年")
_ZH_DATE = re.compile(
    r"(?P<year>(?:19|20|21)\d{2})\s*年\s*(?P<month>\d{1,2})\s*月\s*(?P<day>\d{1,2})\s*日"
)
_ZH_RANGE = re.compile(r"(?P<year>(?:19|20|21)\d{2})\s*年\s*1?\s*[-至到]\s*(?P<month>\d{1,2})\s*月")
# a quarter named by its ordinal ("third quarter", "3rd quarter"): its number
QUARTER_ORDINALS = {
    "first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4,
}  # fmt: skip
_ZH_Q = {"一": 1, "二": 2, "三": 3, "四": 4}
_SPAN_MONTHS = {
    "three": 3, "3": 3, "six": 6, "6": 6, "nine": 9, "9": 9, "twelve": 12, "12": 12,
    "thirteen": 3, "13": 3, "twenty-six": 6, "26": 6, "thirty-nine": 9, "39": 9,
    "fifty-two": 12, "52": 12,
}  # fmt: skip
_CHANGE_PAIR = re.compile(
    r"(?P<a>(?:19|20|21)\d{2}|'\d{2}|FY\s*\d{2,4})\s*(?:vs\.?|versus|compared\s+(?:to|with)|over|/|-|to)\s*"
    r"(?P<b>(?:19|20|21)\d{2}|'\d{2}|FY\s*\d{2,4})",
    re.I,
)


@dataclass(frozen=True, slots=True)
class FiscalYearEnd:
    month: int = 12
    day: int = 31
    stated: bool = False  # False: December 31 assumed
    # 1: "fiscal 2024" ends in 2025 (a retailer's year ending late January or early
    # February, named by the calendar year it mostly covers); 0: named by its end's year
    label_offset: int = 0


@dataclass(frozen=True, slots=True)
class Period:
    label: str  # normalized: FY2023, 2024-Q2, 6M to 2024-06-30, 2022-12-31
    end: date
    start: date | None  # None for an instant (balance) figure
    fiscal_year: int | None = None
    quarter: int | None = None
    basis: str = "stated"  # stated | calendar_assumed (fiscal year end not given)

    @property
    def instant(self) -> bool:
        return self.start is None


def _last_day(year: int, month: int) -> int:
    return calendar.monthrange(year, month)[1]


def _safe_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, min(day, _last_day(year, month)))
    except ValueError:
        return None


def _add_months(d: date, months: int) -> date:
    m0 = d.month - 1 + months
    year, month = d.year + m0 // 12, m0 % 12 + 1
    return date(year, month, min(d.day, _last_day(year, month)))


def span_start(end: date, months: int) -> date:
    """First day of the ``months``-long span ending on ``end`` (month ends align)."""
    if end.day == _last_day(end.year, end.month):
        first = _add_months(end.replace(day=1), -(months - 1))
        return first
    return _add_months(end, -months) + timedelta(days=1)


def _year(text: str) -> int | None:
    y = int(text)
    if y < 100:
        y += 2000 if y < 70 else 1900
    return y if 1900 <= y <= 2199 else None


def fiscal_year_end(context: str) -> FiscalYearEnd:
    """The fiscal year end a caption states ("years ended September 30" -> 9/30)."""
    m = re.search(
        r"(?:years?|fiscal\s+year)\s+end(?:ed|ing|s)?\s+(?:on\s+)?" + _MONTH + r"\s+(\d{1,2})",
        context,
        re.I,
    )
    if m:
        month = MONTHS.get(m.group("month").lower().rstrip("."), 12)
        offset = 1 if _LABEL_NEXT.search(context) else 0
        return FiscalYearEnd(month, int(m.group(m.lastindex or 0)), True, offset)
    return FiscalYearEnd()


# ``tables.fiscal_note``'s words for a filing whose "fiscal 2024" ends in 2025
_LABEL_NEXT = re.compile(
    r"\bfiscal\s+((?:19|20|21)\d{2})\s+ends\s+in\s+((?:19|20|21)\d{2})\b", re.I
)


def _fy_period(year: int, fye: FiscalYearEnd) -> Period | None:
    end = _safe_date(year + fye.label_offset, fye.month, fye.day)
    if end is None:
        return None
    basis = "stated" if fye.stated else "calendar_assumed"
    return Period(f"FY{year}", end, span_start(end, 12), year, None, basis)


def _quarter_period(year: int, q: int, fye: FiscalYearEnd, fiscal: bool) -> Period | None:
    if fiscal or fye.stated:
        fy_end = _safe_date(year + fye.label_offset, fye.month, fye.day)
        if fy_end is None:
            return None
        end = _add_months(fy_end.replace(day=1), -3 * (4 - q))
        end = end.replace(day=_last_day(end.year, end.month))
    else:
        end = date(year, 3 * q, _last_day(year, 3 * q))
    basis = "stated" if fye.stated else "calendar_assumed"
    return Period(f"{year}-Q{q}", end, span_start(end, 3), year, q, basis)


def parse_period(header: str, fye: FiscalYearEnd | None = None) -> Period | None:
    """The period a column header names, or None (never a guess from the column index)."""
    fye = fye or FiscalYearEnd()
    text = " ".join(header.split())
    if not text:
        return None
    zd = _ZH_DATE.search(text)
    if zd:
        end = _safe_date(int(zd["year"]), int(zd["month"]), int(zd["day"]))
        return Period(end.isoformat(), end, None) if end else None
    zr = _ZH_RANGE.search(text)
    if zr and 1 <= int(zr["month"]) <= 12:
        end = date(int(zr["year"]), int(zr["month"]), _last_day(int(zr["year"]), int(zr["month"])))
        months = int(zr["month"])
        return Period(f"{months}M to {end.isoformat()}", end, span_start(end, months), end.year)
    span = _SPAN.search(text)
    d = _DATE.search(text)
    year_m = _FY.search(text)
    year = None
    if d and d.group("year"):
        year = int(d.group("year"))
    elif year_m:
        raw = year_m.group("fy") or year_m.group("year") or year_m.group("yy")
        year = _year(raw) if raw else None
    if year is None:
        zy = _ZH_YEAR.search(text)
        year = int(zy["year"]) if zy else None
    if year is None:
        return None
    if d:
        month = MONTHS.get(d.group("month").lower().rstrip("."), 0)
        end = _safe_date(year, month, int(d.group("day"))) if month else None
        if end is None:
            return None
        if span:
            months = 3 if span.group("qe") else _SPAN_MONTHS[span.group("n").lower()]
            return Period(f"{months}M to {end.isoformat()}", end, span_start(end, months), year)
        if _YEAR_ENDED.search(text):
            return Period(f"FY{year}", end, span_start(end, 12), year)
        return Period(end.isoformat(), end, None)  # an instant: balance at a date
    q = _QUARTER.search(text)
    if q:
        raw = q.group("q1") or q.group("q2") or q.group("q3") or q.group("q4")
        quarter = QUARTER_ORDINALS.get(raw.lower()) or _ZH_Q.get(raw) or int(raw)
        fiscal = bool(re.search(r"fiscal|\bFY", text, re.I)) or fye.stated
        return _quarter_period(year, quarter, fye, fiscal)
    h = _HALF.search(text)
    if h:
        half = (
            1
            if (
                h.group("h1") == "1"
                or (h.group("h2") or "").lower() == "first"
                or h.group("h3") == "上"
            )
            else 2
        )
        fy = _fy_period(year, fye)
        if fy is None or fy.start is None:
            return None
        end = _add_months(fy.start.replace(day=1), 6 * half - 1)
        end = end.replace(day=_last_day(end.year, end.month))
        return Period(f"{year}-H{half}", end, span_start(end, 6), year, None, fy.basis)
    if span:  # "Three months ended" + a bare year: the quarter's end is not known
        return None
    return _fy_period(year, fye)


def change_pair(header: str, fye: FiscalYearEnd | None = None) -> tuple[Period, Period] | None:
    """'2022 vs. 2021' / 'Change 2023/2022' -> (current, prior) fiscal periods."""
    m = _CHANGE_PAIR.search(header)
    if not m:
        return None
    a, b = parse_period(m.group("a"), fye), parse_period(m.group("b"), fye)
    if not a or not b or a.end == b.end:
        return None
    return (a, b) if a.end > b.end else (b, a)


_MON_RE = r"(?P<{g}>[A-Za-z]{{3,9}})\.?"
_RANGE = re.compile(
    r"^\s*" + _MON_RE.format(g="m1") + r"\s+(?P<d1>\d{1,2})(?:,\s*(?P<y1>(?:19|20)\d{2}))?"
    r"\s*(?:-|–|—|to|through)\s*(?:" + _MON_RE.format(g="m2") + r"\s+)?(?P<d2>\d{1,2}),?\s*"
    r"(?P<y2>(?:19|20)\d{2})\s*$"
)
_MONTH_YEAR = re.compile(r"^\s*" + _MON_RE.format(g="m") + r",?\s+(?P<y>(?:19|20)\d{2})\s*$")


_ISO_SPAN = re.compile(
    r"^\s*(?P<y>\d{4})-(?P<m>\d{2})(?:-(?P<d>\d{2})\s+to\s+(?P<e>\d{4}-\d{2}-\d{2}))?\s*$"
)


def _days(start: date, end: date) -> Period:
    return Period(f"{start.isoformat()} to {end.isoformat()}", end, start)


def _month(year: int, month: int) -> Period:
    return _days(date(year, month, 1), date(year, month, _last_day(year, month)))


def parse_span(text: str) -> Period | None:
    """A row label naming a stretch of days (an issuer-purchases table's "October 2024",
    "Nov. 3 - Nov. 30, 2024", "Dec. 29, 2024 - Feb. 1, 2025", "Oct. 1-31, 2024"): its first
    and last day, labelled "2024-11-03 to 2024-11-30"; None for anything else."""
    iso = _ISO_SPAN.match(text or "")
    if iso:  # our own label, or a year-month ("2024-10")
        y, mo = int(iso.group("y")), int(iso.group("m"))
        if not 1 <= mo <= 12:
            return None
        if not iso.group("d"):
            return _month(y, mo)
        try:
            start, end = date.fromisoformat(iso.group(0)[:10]), date.fromisoformat(iso.group("e"))
        except ValueError:
            return None
        return _days(start, end)
    m = _MONTH_YEAR.match(text or "")
    if m and (mon := MONTHS.get(m.group("m").lower())):
        return _month(int(m.group("y")), mon)
    m = _RANGE.match(text or "")
    if not m:
        return None
    m1 = MONTHS.get(m.group("m1").lower())
    m2 = MONTHS.get((m.group("m2") or m.group("m1")).lower())
    y2 = int(m.group("y2"))
    y1 = int(m.group("y1") or y2)
    if not m1 or not m2:
        return None
    s, e = _safe_date(y1, m1, int(m.group("d1"))), _safe_date(y2, m2, int(m.group("d2")))
    if s is None or e is None or not s < e or (e - s).days > 120:
        return None
    return _days(s, e)
