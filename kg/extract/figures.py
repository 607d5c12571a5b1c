"""Figures and periods of sentence facts: "$4.2 billion" -> 4.2e9 USD, "up 80 basis points"
-> 80 bp, "the third quarter of 2024" -> 2024-Q3, "the quarter" -> the document's quarter.

A metric fact from a sentence keeps what a table fact keeps: ``value`` in base units,
``unit``, ``scale``, ``raw`` (the figure as written) and ``period`` (normalised by
``table_periods.parse_period``). A figure without a unit, or a fact whose period is found
neither in its sentence nor in the document's header, is no fact: the caller drops it and
counts the reason (``unit_unknown`` / ``period_unknown``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from kg.extract.table_periods import MONTHS, QUARTER_ORDINALS, parse_period, parse_span
from kg.graph.quantities import currency_of, figure_currencies
from kg.graph.quantities import scale as scale_factor


def alternatives(words: list[str], *, bounded: bool = False) -> str:
    """Vocabulary words as regex alternatives, in their order (longest first): a space
    matches any run of whitespace; ``bounded``: a word ending in a Latin letter ends at a
    word boundary ("yen" is not the start of "yenta")."""
    out = []
    for w in words:
        end = r"\b" if bounded and w[-1:].isascii() and w[-1:].isalpha() else ""
        out.append(re.escape(w).replace(r"\ ", r"\s+") + end)
    return "|".join(out)


# The currencies come from the shared vocabulary (kg/data/quantity_vocab.json): signs and
# codes before the number ("$4.2 billion", "EUR 640 million"), words after it ("3.2
# billion euros", "120亿元").
_CUR_BEFORE, _CUR_AFTER = figure_currencies()
FIGURE = re.compile(
    rf"(?P<cur>{alternatives(_CUR_BEFORE)})?\s?"
    r"(?P<num>\d[\d,]*(?:\.\d+)?)\s?"
    r"(?P<scale>trillion|billion|million|thousand|bn|mn|mln|tn|crore|lakh|万亿|亿|万|[bmk](?![a-z]))?"
    r"\s?(?P<unit>%|percent(?:age points?)?|per\s?cent|个?百分点|basis\s+points?|bps?|个基点|"
    + alternatives(_CUR_AFTER, bounded=True)
    + r"|cents?|shares|employees|people|workers|jobs|positions|stores|customers|subscribers|"
    r"homes|restaurants|engines|aircraft|closings|orders|locations|members|accounts|users|tons|"
    r"barrels)?",
    re.I,
)
_PER_SHARE = re.compile(r"per\s+(?:diluted\s+|basic\s+|common\s+)?share|\bEPS\b|a\s+share", re.I)


@dataclass(frozen=True, slots=True)
class Figure:
    value: float  # base units (dollars, not millions; percent points for %)
    unit: str  # USD, EUR, CNY, USD/share, %, bp, shares, count
    scale: str  # billion, million, 亿 ... ("" when none)
    raw: str


def parse_figure(
    raw: str, *, scale_hint: str = "", per_share: bool = False, context: str = ""
) -> Figure | None:
    """The number of a figure with its unit; None when it has no unit (a bare "4,100").
    Currency signs and scale words are read through ``kg.graph.quantities``; ``context`` (the
    sentence) decides an ambiguous sign ("¥": yen or yuan)."""
    m = FIGURE.search(raw or "")
    if not m:
        return None
    try:
        num = Decimal(m.group("num").replace(",", ""))
    except InvalidOperation:
        return None
    cur = (m.group("cur") or "").casefold()
    scale = (m.group("scale") or "").casefold() or scale_hint.casefold()
    unit_word = (m.group("unit") or "").casefold()
    if unit_word in ("%", "percent", "per cent", "percentage point", "percentage points"):
        unit = "%"
        scale = ""
    elif "百分点" in unit_word:
        unit = "%"
        scale = ""
    elif unit_word.startswith("basis") or unit_word in ("bp", "bps", "个基点"):
        unit, scale = "bp", ""
    elif unit_word.startswith("cent"):  # "18 cents a share"
        num, unit, scale = num / 100, "USD", ""
        if per_share:
            unit += "/share"
    elif cur or currency_of(unit_word):  # "$4.2 billion", "3.2 billion euros", "120亿元"
        unit = currency_of(cur or unit_word, f"{raw} {context}") or "USD"
        if per_share and not scale:
            unit += "/share"
    elif unit_word == "shares":
        unit = "shares"
    elif unit_word:
        unit = "count"
    else:
        return None
    value = num * Decimal(str(scale_factor(scale) or 1.0)) if scale else num
    return Figure(float(value), unit, scale, raw.strip())


def _bare(raw: str, unit: str) -> Figure | None:
    m = re.search(r"\d[\d,]*(?:\.\d+)?", raw)
    if not m:
        return None
    sc = re.search(r"thousand|million", raw)
    mult = Decimal(str(scale_factor(sc.group(0)) or 1.0)) if sc else Decimal(1)
    value = float(Decimal(m.group(0).replace(",", "")) * mult)
    return Figure(value, unit, sc.group(0) if sc else "", raw)


def scale_of(raw: str) -> str:
    m = FIGURE.search(raw or "")
    return (m.group("scale") or "") if m else ""


# Periods named relative to the document ("the quarter", "this year") take the header's.
RELATIVE_QUARTER = re.compile(
    r"\b(?:the|this|our)\s+(?:fiscal\s+)?quarter\b|\bQ-?o-?Q\b|\bsequential", re.I
)
RELATIVE_YEAR = re.compile(
    r"\b(?:the|this)\s+(?:full[\s-]+|fiscal\s+)?year\b(?![\s-]*(?:ago|earlier|over|before))|"
    r"\bfull[\s-]+year\b|\byear[\s-]to[\s-]date\b",
    re.I,
)
_HALF_ONLY = re.compile(r"\b(?P<h>first|second)\s+half\b|\b(?P<n>[12])H\b|\bH(?P<n2>[12])\b", re.I)
PERIOD_TEXT = re.compile(
    r"(?:as\s+of|at)\s+[A-Z][a-z]+\.?\s+\d{1,2},?\s+\d{4}|"
    r"(?:(?:three|six|nine|twelve)\s+months|(?:fiscal\s+)?(?:year|quarter)s?)\s+ended\s+"
    r"[A-Z][a-z]+\.?\s+\d{1,2},?\s+\d{4}"
    r"|(?:fiscal\s+)?(?:first|second|third|fourth|1st|2nd|3rd|4th)[\s-]+quarter(?:\s+of)?"
    r"(?:\s+(?:fiscal|FY))?\s*(?:year\s+)?'?\d{2,4}"
    r"|\b(?:fiscal|FY)\s*'?\d{2,4}\s+(?:first|second|third|fourth)[\s-]+quarter"
    r"|\bQ[1-4]\s*(?:FY|F)?\s*'?\d{2,4}\b|\b(?:FY|F)\s?'?\d{2,4}\s*Q[1-4]\b"
    r"|\b[12]H\s?\d{2,4}\b|\bH[12]\s*\d{2,4}\b|(?:first|second)\s+half\s+(?:of\s+)?\d{4}"
    r"|\bfiscal(?:\s+year)?\s+'?\d{2,4}\b|\bFY\s?'?\d{2,4}\b"
    r"|\d{4}年(?:第?[一二三四]季度|上半年|下半年|前三季度)?"
    r"|\b(?:in|for|during)\s+(?:calendar\s+)?(?:19|20)\d{2}\b",
    re.I,
)
_QUARTER_ONLY = re.compile(
    r"\b(?:(?P<ord>first|second|third|fourth)[\s-]+quarter|Q(?P<q>[1-4]))\b", re.I
)


def normalise_period(text: str) -> str:
    """A period's canonical label (FY2023, 2024-Q3, 3M to 2024-06-30, 2024-H1), or the text
    itself (casefolded, whitespace collapsed) when it names none ``parse_period`` reads."""
    t = " ".join((text or "").split())
    if (span := parse_span(t)) is not None:  # "Nov. 3 - Nov. 30, 2024", "October 2024"
        return span.label
    t = re.sub(r"\b(?:in|for|during)\s+(?=(?:calendar\s+)?\d{4})", "", t, flags=re.I)
    t = re.sub(r"\b(?P<a>FY|F)\s?'?(?P<y>\d{2,4})\s*Q(?P<q>[1-4])\b", r"Q\g<q> FY\g<y>", t)
    t = re.sub(r"\b(?P<h>[12])H\s?(?P<y>\d{2,4})\b", r"H\g<h> \g<y>", t)
    t = re.sub(r"'(\d{2})\b", r"20\1", t)
    t = re.sub(r"\bQ([1-4])\s*(?:FY|F)\s*(\d{2,4})\b", r"Q\1 fiscal \2", t)
    p = parse_period(t)
    return p.label if p else t.casefold()


_HEAD_Q = re.compile(
    r"\b(?:Q(?P<q>[1-4])|(?P<q2>[1-4])Q|(?P<ord>first|second|third|fourth)[\s-]+quarter)\b", re.I
)
_HEAD_Y = re.compile(
    r"\b(?:FY|F|fiscal(?:\s+year)?)\s*'?(?P<fy>\d{4}|\d{2})\b|\b(?P<y>(?:19|20)\d{2})\b", re.I
)
_HEAD_BARE_Y = re.compile(r"\b(?P<y>(?:19|20)\d{2})\b")
HEADER_LINES = 3
HEADER_WINDOW = 300  # characters of the first lines read


def header_period(
    header: str,
    *,
    lines: int | None = HEADER_LINES,
    chars: int | None = HEADER_WINDOW,
    bare_year: bool = False,
) -> tuple[str, str]:
    """(quarter, year) the first lines of a document name: an earnings call's "Q3 2024",
    "3Q 2025", "Q2 Fiscal 2026", "Q4 and Full-Year 2024", a report's "fiscal 2025"; ""
    where none. Only the title and the first lines: a year in the body is no header.

    The critic (``verify``) reads the whole header it is given (``lines``/``chars`` None)
    and only a bare four-digit year (``bare_year``: "FY2024" or "FY24" is then no year)."""
    kept = [ln for ln in header.splitlines() if ln.strip()][:lines]
    head = " ".join(kept)[:chars]
    y = (_HEAD_BARE_Y if bare_year else _HEAD_Y).search(head)
    if not y:
        return "", ""
    raw = y.groupdict().get("fy") or y.group("y")
    year = int(raw) + (2000 if len(raw) == 2 else 0)
    q = _HEAD_Q.search(head)
    if not q:
        return "", f"FY{year}"
    n = int(q.group("q") or q.group("q2") or 0) or QUARTER_ORDINALS[q.group("ord").casefold()]
    return f"{year}-Q{n}", f"FY{year}"


_FORWARD = re.compile(r"\b(?:expect|anticipat|guid|outlook|forecast|project|target)", re.I)


_DATELINE = re.compile(
    r"\b(?P<mon>Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\.?\s+(?P<d>\d{1,2}),?\s+"
    r"\(?(?P<y>(?:19|20)\d{2})\b|(?P<zy>(?:19|20)\d{2})年(?P<zm>\d{1,2})月(?P<zd>\d{1,2})日"
)


def header_date(header: str) -> str:
    """The dateline of a document's first lines ("MINNEAPOLIS, Oct. 28, 2025 --") as
    YYYY-MM-DD, "" when none: the document's day when the record carries no time."""
    lines = [ln for ln in header.splitlines() if ln.strip()][:HEADER_LINES]
    m = _DATELINE.search(" ".join(lines)[:400])
    if not m:
        return ""
    if m.group("zy"):
        return f"{m.group('zy')}-{int(m.group('zm')):02d}-{int(m.group('zd')):02d}"
    mon = MONTHS[m.group("mon")[:3].casefold()]
    return f"{m.group('y')}-{mon:02d}-{int(m.group('d')):02d}"


def _doc_year(doc_date: str) -> int | None:
    m = re.match(r"(\d{4})-(\d{2})", doc_date or "")
    return int(m.group(1)) if m else None


def sentence_period(sentence: str, header: str, doc_date: str = "") -> tuple[str, str]:
    """(period label, source): the sentence's own period; a quarter named without its year
    ("the fourth quarter") in the header's year (the next one for a guided quarter before
    the header's); a relative one ("the quarter", "full year") resolved against the
    document header; else the header's period; ("", "none") when neither names one."""
    own = own_period(sentence)
    if own:
        label = normalise_period(own)
        if re.search(r"\d{4}", label):
            return label, "sentence"
    quarter, year = header_period(header)
    bare = next(  # "up 150 basis points from the second quarter": the comparison's quarter
        (q for q in _QUARTER_ONLY.finditer(sentence) if not _compared(sentence, q.start())), None
    )
    if bare:
        n = QUARTER_ORDINALS.get((bare.group("ord") or "").casefold(), int(bare.group("q") or 0))
        y = int(year[2:]) if quarter else None  # a call's header names its quarter
        if y is None and (dy := _doc_year(doc_date)) is not None:
            y = dy if 3 * n < int(doc_date[5:7]) else dy - 1
        if y is None and year:
            y = int(year[2:])
        if y is not None:
            if quarter and n < int(quarter[-1]) and _FORWARD.search(sentence):
                y += 1
            return f"{y}-Q{n}", "header" if year else "document_date"
        return f"Q{n}", "sentence_no_year"  # the quarter is stated, its year nowhere
    half = _HALF_ONLY.search(sentence)
    if half and (year or _doc_year(doc_date)):
        n = (
            1
            if (half.group("h") or "").casefold() == "first"
            or "1" in ((half.group("n") or "") + (half.group("n2") or ""))
            else 2
        )
        return (
            f"{year[2:] if year else _doc_year(doc_date)}-H{n}",
            "header" if year else "document_date",
        )
    if RELATIVE_YEAR.search(sentence) and year:
        return year, "header"
    if quarter:
        return quarter, "header"
    if year:
        return year, "header"
    if (dy := _doc_year(doc_date)) is not None and (q := _header_quarter(header)):
        # a story on results names the quarter without its year ("JPMorgan's main businesses
        # lukewarm in first quarter"): the latest such quarter before the story's day
        return f"{dy if 3 * q < int(doc_date[5:7]) else dy - 1}-Q{q}", "header_document_date"
    return "", "none"


def _header_quarter(header: str) -> int:
    """The quarter a document's first lines name without a year ("first-quarter profit"), 0
    when none or more than one."""
    lines = [ln for ln in header.splitlines() if ln.strip()][:HEADER_LINES]
    found = {
        int(m.group("q") or m.group("q2") or 0) or QUARTER_ORDINALS[m.group("ord").casefold()]
        for m in _HEAD_Q.finditer(" ".join(lines)[:HEADER_WINDOW])
    }
    return found.pop() if len(found) == 1 else 0


def per_share(metric: str, raw: str = "") -> bool:
    return bool(_PER_SHARE.search(metric) or _PER_SHARE.search(raw))


# The figure a metric fact states, most specific first: the level reached ("to $25.3
# billion"), then the amount stated; a change ("up 12%", "an increase of $2.1 million")
# only when no level is given.
_LEVEL_KEYS = ("value", "value2", "level", "level2", "vals", "amount", "amount2", "val")
FIGURE_PROPS = (*_LEVEL_KEYS, "low", "high", "chg", "pct", "count")
_CHANGE_KEYS = ("chg", "pct", "cmp", "change")
DATED_KINDS = frozenset({"dividend", "buyback", "price_move", "capital_return", "layoffs"})
DAY_KINDS = frozenset(
    {"dividend", "price_move", "layoffs"}
)  # the document's day before the header's
_MOVE_WORDS = re.compile(
    r"^(?:grew|increased|decreased|rose|fell|declined|jumped|dropped|climbed|surged|slipped|"
    r"up|down|improved|expanded|contracted|slid|dipped|tumbled|plunged|soared|advanced|eased|"
    r"sank|edged\s+(?:up|down|higher|lower))$",
    re.I,
)


def complete_metric(
    props: dict[str, str | float], metric: str, sentence: str, header: str, doc_date: str = ""
) -> list[dict[str, str | float]]:
    """Add ``value`` (base units), ``unit``, ``scale``, ``raw``, ``measure`` and a
    normalised ``period`` to a metric fact's properties, in place. Nothing is guessed: a
    figure without a unit gets no ``unit`` and a fact with no period in its sentence or
    the header gets none (the verifier then drops it and counts why). Events of a day
    (``kind`` dividend, buyback, price_move) take the document's date (``doc_date``).
    Returns the prior-period facts the sentence states beside it ("compared to $931 million
    in the third quarter of 2024", "down from 14% a year ago"), each with its own period."""
    if props.get("unit") and isinstance(props.get("value"), float):
        return []  # already complete (a table or XBRL fact)
    share = per_share(metric, sentence)
    low, high = props.get("low"), props.get("high")
    if low and high:
        hi = parse_figure(str(high), per_share=share, context=sentence)
        lo = parse_figure(
            str(low), scale_hint=scale_of(str(high)), per_share=share, context=sentence
        )
        if hi and lo is None:  # "3 to 5%", "$16.5 to $16.9 billion", "88 and 94 cents"
            lo = _bare(str(low), hi.unit)
            if lo is not None and "cent" in str(high):
                lo = Figure(float(Decimal(str(lo.value)) / 100), hi.unit, "", lo.raw)
            if lo is not None and hi.scale and not scale_of(str(low)):
                lo = Figure(lo.value * (scale_factor(hi.scale) or 1.0), hi.unit, hi.scale, lo.raw)
        if hi and lo:
            props.update(
                low_value=lo.value, high_value=hi.value, unit=hi.unit, scale=hi.scale,
                raw=f"{low} to {high}", measure="range",
            )  # fmt: skip
    else:
        level_key = next((k for k in _LEVEL_KEYS if props.get(k)), "")
        moved = bool(_MOVE_WORDS.match(str(props.get("dir", ""))))
        is_change = level_key == "amount" and moved and not props.get("level")
        fig = (
            parse_figure(str(props[level_key]), per_share=share, context=sentence)
            if level_key
            else None
        )
        preset = str(props.get("unit") or "")
        if fig is None and level_key and preset:  # "headcount was 12,500": the row's unit
            fig = _bare(str(props[level_key]), preset)
        if fig is None and props.get("count"):
            fig = parse_figure(str(props["count"]), context=sentence) or _bare(
                str(props["count"]), preset or "count"
            )
        if fig is None:
            key = next((k for k in _CHANGE_KEYS if props.get(k)), "")
            fig = parse_figure(str(props[key]), per_share=share, context=sentence) if key else None
            is_change = fig is not None
        if fig is not None:
            raw = props.get(level_key) if level_key and not is_change else fig.raw
            props.update(value=fig.value, unit=fig.unit, scale=fig.scale, raw=str(raw))
            props["measure"] = "change" if is_change else "level"
            for key in _CHANGE_KEYS:
                chg = parse_figure(str(props.get(key, "")), context=sentence)
                if chg is not None and props["measure"] == "level":
                    props.update(change_value=chg.value, change_unit=chg.unit)
                    break
    stated = " ".join(
        str(props.get(k, "")) for k in ("period", "period2", "period3") if props.get(k)
    )
    if props.get("years"):  # a "respectively" list: this item's year
        md, basis = props.get("md", ""), str(props.get("basis") or "year")
        stated = f"{basis} ended {md}, {props['years']}" if md else f"fiscal {props['years']}"
    label, source = "", "none"
    if stated and re.search(r"\d{4}", normalise_period(stated)):
        label, source = normalise_period(stated), "sentence"
    elif props.get("kind") in DAY_KINDS and doc_date and not own_period(stated or sentence):
        label, source = doc_date, "document_date"  # an event of the day it is reported
    else:
        label, source = sentence_period(stated or sentence, header, doc_date)
        if not label and stated:
            label, source = sentence_period(sentence, header, doc_date)
    if not label and doc_date and props.get("kind") in DATED_KINDS:
        label, source = doc_date, "document_date"
    if label:
        props["period"], props["period_source"] = label, source
    elif props.get("kind") in DAY_KINDS:  # a move or declaration of the day reported:
        props.pop("period", None)  # the triple's event_time is its date
        props["period_source"] = "event_time"
    else:
        props.pop("period", None)
    priors = _priors(props, sentence, metric) if label and props.get("measure") == "level" else []
    _trim(props)
    return priors


# a prior figure: the currencies of FIGURE (the shared vocabulary), before or after it
_SIGN_RE = rf"(?:(?:{alternatives(_CUR_BEFORE)})\s?)?"
_FIG_RE = (
    _SIGN_RE + r"\d[\d,]*(?:\.\d+)?"
    r"(?:\s?(?:billion|million|thousand|bn|m)\b)?"
    r"(?:\s?%|\s?percent|\s?basis\s+points|\s?bps?\b|\s(?:"
    + alternatives(_CUR_AFTER, bounded=True)
    + r"))?"
)
# ", or $1.04 per diluted share" / ", or 9 cents a share" after a figure: the same fact per
# share; after a prior figure the words "per share" may be left out (", or $1.43, a year
# earlier" beside ", or $1.04 per diluted share")
_EPS_RE = (
    r",?\s+or\s+(?P<eps>" + _SIGN_RE + r"\d+(?:\.\d+)?(?:\s?cents)?)"
    r"(?P<eps_unit>\s+(?:a|per)\s+(?P<diluted>diluted\s+|basic\s+)?share)?"
)
COMPANION = re.compile(_EPS_RE, re.I)
PRIOR = re.compile(
    r"(?P<kw>compared\s+(?:to|with)|versus|vs\.?|against|(?:up|down)\s+from|from)\s+"
    r"(?:an?\s+(?:net\s+)?(?:profit|loss|income|gain)\s+of\s+)?(?:approximately\s+|about\s+)?(?P<fig>"
    + _FIG_RE
    + r")(?:"
    + _EPS_RE
    + r")?(?:\s*,?\s*(?P<when>"
    r"in\s+the\s+(?:prior[\s-]year|year[\s-]ago|same|comparable)\s+(?:period|quarter)"
    r"(?:\s+(?:of\s+)?last\s+year|\s+a\s+year\s+ago)?|a\s+year\s+(?:ago|earlier)|last\s+year|"
    r"(?:in\s+)?the\s+prior[\s-]year(?:\s+(?:period|quarter))?|"
    r"(?:in\s+)?(?:the\s+)?(?:first|second|third|fourth)[\s-]+quarter(?:\s+of\s+"
    r"(?:last\s+year|(?:fiscal\s+)?\d{4}))?|in\s+(?:fiscal\s+)?\d{4}|in\s+Q[1-4](?:\s+\d{4})?))?",
    re.I,
)
# a period label a year-ago comparison can be taken from ("rose to $12 million from $7
# million" in a quarter's results: the same quarter a year earlier)
_YOY_LABEL = re.compile(r"^(?:FY)?\d{4}(?:-Q[1-4]|-H[12])?$")
_YEAR_BACK = re.compile(r"year[\s-]ago|last\s+year|prior[\s-]year|a\s+year\s+earlier|same", re.I)


def shift_year(label: str, years: int = -1) -> str:
    m = re.match(r"(FY)?(\d{4})(.*)$", label)
    return f"{m.group(1) or ''}{int(m.group(2)) + years}{m.group(3)}" if m else ""


def _prior_period(when: str, main: str) -> str:
    explicit = re.search(r"\d{4}", when)
    if explicit:
        label = normalise_period(when)
        return label if re.search(r"\d{4}", label) else ""
    q = _QUARTER_ONLY.search(when)
    if q and re.match(r"\d{4}-Q[1-4]$", main):
        n = QUARTER_ORDINALS.get((q.group("ord") or "").casefold(), int(q.group("q") or 0))
        year = int(main[:4]) - (1 if n >= int(main[-1]) or "last year" in when.lower() else 0)
        return f"{year}-Q{n}"
    if _YEAR_BACK.search(when):
        return shift_year(main)
    return ""


def _priors(
    props: dict[str, str | float], sentence: str, metric: str = ""
) -> list[dict[str, str | float]]:
    """The prior-period figure stated after the fact's own ("..., compared to $931 million
    in the third quarter of 2024"): its value in the fact's unit and scale, and its period."""
    raw = str(props.get("raw", ""))
    at = sentence.find(raw) if raw else -1
    if at < 0:
        return []
    end = at + len(raw)
    out = _companion(props, sentence, metric, end, str(props.get("period", "")))
    m = PRIOR.search(sentence, end, end + 160)
    if not m or re.search(r"[.;](?!\d)", sentence[end : m.start()]):
        return out
    if not m.group("when") and not _bare_from(m, sentence[end : m.start()], props):
        return out
    fig = parse_figure(m.group("fig"), scale_hint=str(props.get("scale", "")), context=sentence)
    if fig is None:
        fig = _bare(m.group("fig"), str(props.get("unit", "")))
        if fig is not None and sentence[m.end("fig") : m.end("fig") + 7].lstrip().startswith(
            "cent"
        ):  # "rose to 52 cents from 50 cents": 0.50, not 50 dollars
            fig = Figure(fig.value / 100, fig.unit, "", fig.raw)
        elif fig is not None and props.get("scale") and not scale_of(m.group("fig")):
            mult = Decimal(str(scale_factor(str(props["scale"])) or 1.0))
            fig = Figure(
                float(Decimal(str(fig.value)) * mult), fig.unit, str(props["scale"]), fig.raw
            )
    period = (
        _prior_period(m.group("when"), str(props.get("period", "")))
        if m.group("when")
        else shift_year(str(props.get("period", "")))
    )
    said = m.group(0).casefold()
    if fig is not None and (
        ("loss" in metric.casefold() and re.search(r"profit|income|gain", said))
        or ("loss" in said and "loss" not in metric.casefold())
    ):  # "a net loss of $45 million, compared with a profit of $30 million": -30 million
        fig = Figure(-fig.value, fig.unit, fig.scale, fig.raw)
    if (
        fig is None
        or not period
        or fig.unit.split("/")[0] != str(props.get("unit", "")).split("/")[0]
    ):
        return out
    out.append({
        "value": fig.value, "unit": str(props.get("unit")), "scale": fig.scale,
        "raw": m.group("fig"), "period": period, "period_source": "sentence",
        "measure": "level", "kind": "prior",
    })  # fmt: skip
    if m.group("eps") and (m.group("eps_unit") or out[0].get(TAIL_KEY)):
        out += _companion(out[-1], m.group(0), metric, m.end("fig") - m.start(), period)
    return out


TAIL_KEY = "_tail"  # the fact is named so, not by the metric (the per-share twin)


def _companion(
    props: dict[str, str | float], text: str, metric: str, at: int, period: str
) -> list[dict[str, str | float]]:
    """The per-share figure stated right after a fact's figure ("$61.2 million, or $1.04
    per diluted share"): a fact of its own, same period, in the currency per share, named
    "diluted share" as the text does (the verifier keeps names the text states, and one
    metric with two values of a period would be a conflict); none where no diluted share
    is named ("or 9 cents a share")."""
    m = COMPANION.match(text, at)
    unit = str(props.get("unit", ""))
    diluted = bool(m and (m.group("diluted") or "").strip().casefold() == "diluted")
    if (
        not m
        or not (diluted or props.get("kind") == "prior")
        or not period
        or "/" in unit
        or not unit.isalpha()
        or per_share(metric)
    ):
        return []
    fig = parse_figure(m.group("eps"), per_share=True)
    if fig is None and unit:  # "or $1.43" beside a prior: the currency of the fact
        fig = _bare(m.group("eps"), f"{unit}/share")
    if fig is None or not fig.unit.startswith(unit):
        return []
    kind = {"kind": "prior"} if props.get("kind") == "prior" else {}
    return [{
        TAIL_KEY: "diluted share", "value": fig.value, "unit": f"{unit}/share",
        "raw": m.group("eps"), "period": period, "period_source": "sentence",
        "measure": f"{metric} per diluted share"[:80], **kind,
    }]  # fmt: skip


def _bare_from(m: re.Match[str], gap: str, props: dict[str, str | float]) -> bool:
    """ "rose to $12 million from $7 million" (no "a year earlier"): the prior figure of a
    move, a year before a quarter's or a year's fact - only right after the fact's figure
    (or its per-share twin) and only for a figure that moved."""
    return (
        m.group("kw").casefold() == "from"
        and bool(_MOVE_WORDS.match(str(props.get("dir", ""))))
        and bool(_YOY_LABEL.match(str(props.get("period", ""))))
        and (not gap.strip(" ,") or COMPANION.fullmatch(gap.rstrip(" ,")) is not None)
    )


def own_period(sentence: str) -> str:
    """The first explicit period of the sentence that is not a comparison's ("compared to
    $931 million in the third quarter of 2024" names the prior period, not the fact's)."""
    for m in PERIOD_TEXT.finditer(sentence or ""):
        if _compared(sentence, m.start()):
            continue
        return m.group(0).strip()
    return ""


def _compared(sentence: str, at: int) -> bool:
    """A period at ``at`` follows a comparison word ("from", "compared with", "last") or
    a maturity ("matures in 2025", "due in"): it is not the period of the fact."""
    before = sentence[max(0, at - 45) : at]
    return bool(_COMPARE.search(before) or _MATURES.search(before))


_MATURES = re.compile(r"\b(?:matur\w*|due|expir\w*|until|through)\s+(?:in\s+)?$", re.I)


_COMPARE = re.compile(
    r"\b(?:compared|versus|vs\.?|against|from|prior|previous|before|last)\b", re.I
)


# A triple carries at most 20 attributes (core.records.Triple); room is kept for the
# verifier's own (kind, hedged, head_ref ...). Raw groups the normalised fields restate go
# first.
MAX_PROPS = 16
_SPARE = ("period2", "prior3", "prior2", "value2", "prior_period", "cmp_period", "scale",
          "change_unit", "pct", "dir", "amount")  # fmt: skip


def _trim(props: dict[str, str | float]) -> None:
    for k in [k for k, v in props.items() if v in ("", None)]:
        del props[k]
    for k in _SPARE:
        if len(props) <= MAX_PROPS:
            return
        props.pop(k, None)


_ZH_DATE = re.compile(r"(?:(?P<y>(?:19|20)\d{2})年)?(?P<m>\d{1,2})月(?P<d>\d{1,2})日")


# units of Chinese market wraps the shared figure reader has no word for
_ZH_UNITS = (("百分点", "%"), ("%", "%"), ("个基点", "bp"), ("bp", "bp"), ("BP", "bp"),
             ("点", "points"), ("美元", "USD"))  # fmt: skip
_ZH_LEVEL = re.compile(r"(?P<neg>负)?(?P<num>\d[\d,]*(?:\.\d+)?)(?P<unit>点|美元)")


def _zh_points(raw: str) -> Figure | None:
    """'25,916.54点' -> 25916.54 points, '每桶67.75美元' -> 67.75 USD, '负0.56%' -> -0.56 %."""
    if raw.startswith("负") and (fig := parse_figure(raw[1:])) is not None:
        return Figure(-fig.value, fig.unit, fig.scale, raw)
    m = _ZH_LEVEL.search(raw)
    if m is None:
        return None
    value = float(m.group("num").replace(",", "")) * (-1 if m.group("neg") else 1)
    return Figure(value, "points" if m.group("unit") == "点" else "USD", "", raw)


def complete_zh(props: dict[str, str | float], sentence: str, doc_date: str) -> None:
    """A commentary fact's date (the sentence's "3月12日" in the document's year, else the
    document's day) and its numbers: ``val`` 1.68% -> ``value`` 1.68 ``unit`` %, ``amt``
    1000亿元 -> ``amount_value`` 1e11 CNY, ``chg`` with its unit (bp)."""
    m = _ZH_DATE.search(sentence)
    year = m.group("y") if m and m.group("y") else (doc_date[:4] if doc_date[:4].isdigit() else "")
    if m and year:
        props["date"] = f"{year}-{int(m.group('m')):02d}-{int(m.group('d')):02d}"
    elif m and doc_date.startswith("--"):  # a dateline without its year: "--MM-DD" as said
        props["date"] = f"--{int(m.group('m')):02d}-{int(m.group('d')):02d}"
    elif doc_date:
        props["date"] = doc_date
    raw_val = str(props.get("val") or props.get("spval") or "")
    val = _zh_points(raw_val) or parse_figure(raw_val, context=sentence)
    bare = re.fullmatch(r"\d[\d,]*(?:\.\d+)?", raw_val)
    if val is not None:
        props.update(value=val.value, unit=val.unit)
    elif bare is not None:  # "美元指数涨0.4%，报95.106": the level, in the index's points
        props.update(value=float(raw_val.replace(",", "")), unit="points")
        props.pop("measure", None)
    elif (chg := re.match(r"\d[\d,]*(?:\.\d+)?", str(props.get("chg", "")))) is not None:
        said = str(props.get("chg_unit", "")) + str(props["chg"])
        # "跌0.41%": a move in %; "下跌79.33点": index points; "收高0.33美元": dollars
        unit = next((u for w, u in _ZH_UNITS if w in said), "bp")
        props.update(value=float(chg.group(0).replace(",", "")), unit=unit, measure="change")
    amt = parse_figure(str(props.get("amt") or props.get("amt2") or ""), context=sentence)
    if amt is not None:
        props.update(amount_value=amt.value, amount_unit=amt.unit, scale=amt.scale)
    _trim(props)


_MONTH_ONLY = re.compile(
    r"^(?:in\s+)?(January|February|March|April|May|June|July|August|September|October|"
    r"November|December)(?:\s+((?:19|20)\d{2}))?$",
    re.I,
)
_MONTH_NO = {m: i for i, m in enumerate(
    ("january february march april may june july august september october november "
     "december").split(), start=1)}  # fmt: skip


def complete_market(props: dict[str, str | float], sentence: str, doc_date: str) -> None:
    """A news market or policy fact (English ``HAS_VALUE`` / ``SETS_POLICY``): ``val``
    "8.6 percent" -> ``value`` 8.6 ``unit`` %; ``chg`` + ``chg_unit`` -> ``change_value``
    + ``change_unit`` (0.3 %, 25 bp; "quarter percentage point" -> 25 bp); a month without
    its year ("rose 0.3 percent in November") -> ``period`` 2007-11, the latest such month
    not after the document's day; no period -> the document's day as ``date``."""
    val = parse_figure(str(props.get("val") or ""), context=sentence)
    if val is not None:
        props.update(value=val.value, unit=val.unit)
    chg, unit = str(props.get("chg") or "").lower(), str(props.get("chg_unit") or "").lower()
    words = {"quarter": 0.25, "a quarter": 0.25, "half": 0.5, "three-quarters": 0.75, "one": 1.0}
    try:
        size = words[chg] if chg in words else float(chg)
    except ValueError:
        size = None
    if size is not None and unit:
        if unit.startswith(("percentage point", "point")):
            props.update(change_value=round(size * 100, 4), change_unit="bp")
        elif unit.startswith(("basis", "bp")):
            props.update(change_value=size, change_unit="bp")
        elif unit in ("percent", "%"):
            props.update(change_value=size, change_unit="%")
    m = _MONTH_ONLY.match(str(props.get("period") or "").strip())
    if m and doc_date[:4].isdigit():
        month = _MONTH_NO[m.group(1).lower()]
        year = int(m.group(2) or doc_date[:4])
        if not m.group(2) and len(doc_date) >= 7 and month > int(doc_date[5:7]):
            year -= 1  # "in November" in a January story: last year's
        props["period"] = f"{year:04d}-{month:02d}"
    elif not props.get("period") and doc_date:
        props["date"] = doc_date
    _trim(props)
