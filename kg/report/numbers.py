"""No invented numbers: every number in a text must be supported by the facts.

``extract_numbers`` finds the numbers a sentence states, with their unit class: ``pct``
(%, percentage points, 百分点, 百分之...), ``bp`` (bp, bps, basis points, 基点), ``count``
(亿, 万, 万亿, billion... scaled to units) or none. Arabic and Chinese numerals are
read (三点五, 二十五, 两千亿). Tenors, horizons and identifiers (10Y, 3-month, 20-day,
DR007, M2, 1年期) and ISO dates are not claims about values; dates are still checked
against the allowed dates.

``check_text`` splits a text into sentences and keeps only those whose numbers are all
supported: a number matches an allowed value of a compatible unit when their absolute
values agree to the precision written (``1.82`` supports 1.8177; ``25 bp`` supports
0.25 percentage points). Signs are not compared (the words say the direction).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from pydantic import BaseModel, Field

from kg.graph.quantities import scale as scale_factor
from kg.retrieve.text import mention_key, sentences

ZH_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6,
             "七": 7, "八": 8, "九": 9}  # fmt: skip
ZH_UNITS = {"十": 10, "百": 100, "千": 1000}
ZH_BIG = {"万": 10_000, "亿": 100_000_000}
_ZH_NUM = "零〇一二两三四五六七八九十百千万亿"

_PCT_UNITS = r"%|％|percentage points?|percent|pp\b|个百分点|百分点"
_BP_UNITS = r"bps?\b|basis points?|个基点|基点"
# the scale words a report sentence may use; their multipliers come from kg.graph.quantities
_MULT_UNITS = r"万亿|亿|万|千|trillion|billion|bn\b|million|mn\b"
_UNIT = rf"(?P<unit>{_PCT_UNITS}|{_BP_UNITS}|{_MULT_UNITS})?"

# Not value claims: tenors, horizons, identifiers with digits.
_EXEMPT = re.compile(
    r"\b\d+(?:\.\d+)?\s*-?\s*(?:years?|yrs?|months?|mos?|weeks?|wks?|days?|"
    r"observations?|sessions?|hours?)\b"
    r"|\b\d+[YMWD]\b|\b[A-Z][A-Z_]*\d+[A-Z0-9_]*\b|\bM[0-2]\b"
    r"|\d+(?:年期|个月|个交易日|天期|天|周|日均)"
    r"|[" + _ZH_NUM + r"]+(?:年期|个月|天期)"
    r"|\[\d+\]|\[source[^\]]*\]",  # citation markers and source ids
    re.IGNORECASE,
)
_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b|(\d{4})年(?:(\d{1,2})月(?:(\d{1,2})日)?)?")
_ARABIC = re.compile(
    rf"(?<![A-Za-z0-9_.])(?P<num>[+\-−]?(?:\d{{1,3}}(?:,\d{{3}})+|\d+)(?:\.\d+)?)\s*{_UNIT}"
    r"(?![A-Za-z0-9_])",
    re.IGNORECASE,
)
_ZH = re.compile(
    rf"(?P<pre>百分之)?(?P<num>[{_ZH_NUM}]+(?:点[零〇一二三四五六七八九]+)?)"
    rf"\s*(?P<unit>{_PCT_UNITS}|{_BP_UNITS}|元|倍)?"
)


def zh_to_number(s: str) -> float | None:
    """Chinese numerals to a number: 三点五 -> 3.5, 二十五 -> 25, 两千亿 -> 2e11,
    一万二千 -> 12000. Returns None for strings that are not numerals."""
    if not s:
        return None
    if "点" in s:
        whole, frac = s.split("点", 1)
        w = zh_to_number(whole) if whole else 0.0
        if w is None or not frac or any(c not in ZH_DIGITS for c in frac):
            return None
        return w + float("0." + "".join(str(ZH_DIGITS[c]) for c in frac))
    total, section, digit = 0, 0, None
    for c in s:
        if c in ZH_DIGITS:
            if digit is not None and digit != 0:  # 一二 (digit strings): read positionally
                return float("".join(str(ZH_DIGITS[x]) for x in s)) if all(
                    x in ZH_DIGITS for x in s) else None  # fmt: skip
            digit = ZH_DIGITS[c]
        elif c in ZH_UNITS:
            section += (1 if digit is None else digit) * ZH_UNITS[c]
            digit = None
        elif c in ZH_BIG:
            section += digit or 0
            total = (total + section) * ZH_BIG[c] if c == "亿" else total + section * ZH_BIG[c]
            section, digit = 0, None
        else:
            return None
    return float(total + section + (digit or 0))


@dataclass(frozen=True, slots=True)
class Number:
    raw: str
    value: float  # absolute, scaled to base units
    tol: float  # half a unit of the last written digit, scaled
    unit: str  # pct | bp | count | ""


def _unit_class(unit: str | None) -> tuple[str, float]:
    if not unit:
        return "", 1.0
    u = unit.lower()
    if re.fullmatch(_PCT_UNITS, u, re.IGNORECASE):
        return "pct", 1.0
    if re.fullmatch(_BP_UNITS, u, re.IGNORECASE):
        return "bp", 1.0
    factor = scale_factor(u)
    if factor is not None:
        return "count", factor
    return "", 1.0


def extract_numbers(text: str) -> tuple[list[Number], list[str]]:
    """Numbers a text states, and the ISO/Chinese dates it names (as YYYY-MM-DD prefixes)."""
    dates: list[str] = []

    def _date(m: re.Match[str]) -> str:
        if m.group(1):
            dates.append(f"{m.group(1)}-{m.group(2)}-{m.group(3)}")
        else:
            parts = [m.group(4)] + [f"{int(x):02d}" for x in (m.group(5), m.group(6)) if x]
            dates.append("-".join(parts))
        return " "

    t = _DATE.sub(_date, text)
    t = _EXEMPT.sub(" ", t)
    out: list[Number] = []

    def _arabic(m: re.Match[str]) -> str:
        raw = m.group("num").replace(",", "").replace("−", "-")
        decimals = len(raw.split(".", 1)[1]) if "." in raw else 0
        unit, mult = _unit_class(m.group("unit"))
        out.append(Number(m.group(0).strip(), abs(float(raw)) * mult,
                          0.5 * 10**-decimals * mult, unit))  # fmt: skip
        return " "

    t = _ARABIC.sub(_arabic, t)
    for m in _ZH.finditer(t):
        num_s, unit_s = m.group("num"), m.group("unit")
        big = any(c in ZH_BIG for c in num_s)
        if not any(c in ZH_DIGITS or c in ZH_UNITS for c in num_s):
            continue  # 万/亿 alone (after an Arabic number, already read)
        if not (m.group("pre") or unit_s or big):
            continue  # a lone 一/三 inside a word is not a number
        v = zh_to_number(num_s)
        if v is None:
            continue
        unit, umult = _unit_class(unit_s)
        if m.group("pre"):
            unit = "pct"
        if big and not unit:
            unit = "count"
        if "点" in num_s:
            tol = 0.5 * 10 ** -len(num_s.split("点", 1)[1])
        elif big:
            digits = str(int(v))
            tol = 0.5 * 10 ** (len(digits) - len(digits.rstrip("0")))  # the last written unit
        else:
            tol = 0.5
        out.append(Number(m.group(0).strip(), v * umult, tol * umult, unit))
    return out, dates


class Allowed(BaseModel):
    """Values (with unit class) and dates that texts may cite."""

    values: list[tuple[float, str]] = Field(default_factory=list)
    subjects: list[str] = Field(default_factory=list)  # parallel to values; "" = any
    keys: dict[str, list[str]] = Field(default_factory=dict)  # subject -> mention keys
    dates: set[str] = Field(default_factory=set)

    def add(self, value: float, unit: str = "", subject: str = "") -> None:
        self.values.append((abs(float(value)), unit))
        self.subjects.append(subject)

    def add_text(self, text: str, subject: str = "") -> None:
        """Numbers stated in a source text (a retrieved triple's evidence, a document)."""
        nums, dates = extract_numbers(text)
        for n in nums:
            self.add(n.value, n.unit, subject)
        self.dates.update(dates)


_COMPAT = {"pct": {"pct"}, "bp": {"bp"}, "count": {"count", ""}, "": {"pct", "bp", "count",
           "index", ""}}  # fmt: skip


def _mentions(sentence_key: str, keys: list[str]) -> bool:
    padded = f" {sentence_key} "
    return any(f" {k} " in padded for k in keys)


def supported(n: Number, allowed: Allowed, sentence: str | None = None) -> bool:
    """A value matches, and when the value belongs to a fact about one indicator or
    spread, the sentence names that subject (so 1.51, DR007's level, does not support
    "the curve rose 1.5%")."""
    ok_units = _COMPAT[n.unit]
    skey = mention_key(sentence) if sentence is not None else None
    return any(
        u in ok_units
        and abs(n.value - v) <= n.tol + 1e-9 * max(1.0, v)
        and (not s or skey is None or _mentions(skey, allowed.keys.get(s, [])))
        for (v, u), s in zip(allowed.values, allowed.subjects, strict=True)
    )


class Removal(BaseModel):
    sentence: str
    numbers: list[str]
    origin: str = ""


class CheckResult(BaseModel):
    text: str  # the kept sentences
    kept: list[str] = Field(default_factory=list)
    removed: list[Removal] = Field(default_factory=list)
    unsupported_numbers: list[str] = Field(default_factory=list)  # in the kept text: []


def unsupported_in(sentence: str, allowed: Allowed) -> list[str]:
    nums, dates = extract_numbers(sentence)
    bad = [n.raw for n in nums if not supported(n, allowed, sentence)]
    bad += [d for d in dates if not any(a.startswith(d) for a in allowed.dates)]
    return bad


def check_text(text: str, allowed: Allowed, *, origin: str = "") -> CheckResult:
    kept: list[str] = []
    removed: list[Removal] = []
    for s in sentences(text):
        bad = unsupported_in(s, allowed)
        if bad:
            removed.append(Removal(sentence=s, numbers=bad, origin=origin))
        else:
            kept.append(s)
    joined = " ".join(kept)
    residual = [x for s in kept for x in unsupported_in(s, allowed)]
    return CheckResult(text=joined, kept=kept, removed=removed, unsupported_numbers=residual)


def subject_keys(subject: str, label: str) -> list[str]:
    """How a sentence may name a fact's subject: its ids, its label, and the label's
    first two words ('China 10Y government bond yield (CN10Y)' -> 'cn10y', 'china 10y
    government bond yield', 'china 10y')."""
    base = re.sub(r"\([^)]*\)", " ", label)
    base = re.sub(r"^\s*the\s+", "", base, flags=re.IGNORECASE)
    keys = {mention_key(p) for p in subject.split("-")} | {mention_key(base)}
    words = mention_key(base).split()
    if len(words) >= 2:
        keys.add(" ".join(words[:2]))
    return sorted(k for k in keys if k)


def allowed_from(facts: Iterable[object], texts: Iterable[str] = ()) -> Allowed:
    """Allowed values from computed facts (``Fact.numbers``, dates), each tied to the
    fact's subject, and from source texts (tied to nothing)."""
    a = Allowed()
    for f in facts:
        subject = f.subject  # type: ignore[attr-defined]
        a.keys.setdefault(subject, subject_keys(subject, f.label))  # type: ignore[attr-defined]
        for v, u in f.numbers():  # type: ignore[attr-defined]
            a.add(v, u, subject)
        a.add_text(f.text, subject)  # type: ignore[attr-defined]
        a.dates.add(f.as_of)  # type: ignore[attr-defined]
        if getattr(f, "reference_date", None):
            a.dates.add(f.reference_date)  # type: ignore[attr-defined]
    for t in texts:
        a.add_text(t)
    return a
