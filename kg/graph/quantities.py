"""Scales, currencies and unit names: one vocabulary for every reader of figures.

``kg/data/quantity_vocab.json`` is read and validated here once; sentence figures
(``kg.extract.figures``), tables (``kg.extract.tables``), the gold scorer and the report's
number checker (``kg.report.numbers``) all ask this module, so "¥", "bn" or "亿元" mean the
same thing everywhere. It sits at the top of ``kg`` and imports nothing of ours, so any
``kg`` subpackage can use it without a cycle.

The "¥" sign is both the yen and the yuan; ``currency_of`` decides by context (the rules
are data, ``ambiguous_signs``): a text naming the yen (JPY, yen, 円, 日元, Japan) -> JPY;
next to 元/亿/万, a yuan word (RMB, CNY, yuan, renminbi) or in Chinese text -> CNY; a bare
¥ in English text -> JPY, because English filings and news write the Chinese currency as
RMB/CNY and keep ¥ for the yen.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_validator

VOCAB_PATH = Path(__file__).resolve().parents[1] / "data" / "quantity_vocab.json"
_CODE = re.compile(r"^[A-Z]{3}$")
_V = TypeVar("_V")


def _checked_table(v: dict[str, _V], bad_value: Callable[[_V], bool], rule: str) -> dict[str, _V]:
    """``v`` when every key is casefolded (words are looked up casefolded, ``word_key``)
    and no value is ``bad_value``; else the ``rule`` broken and the keys that break it."""
    bad = [k for k, x in v.items() if bad_value(x) or k != k.casefold()]
    if bad:
        raise ValueError(f"{rule}: {bad}")
    return v


class SignRule(BaseModel):
    model_config = ConfigDict(extra="forbid")

    context: str  # a regex over the figure and the text around it
    code: str
    why: str = ""

    @field_validator("context")
    @classmethod
    def _compiles(cls, v: str) -> str:
        try:
            re.compile(v, re.I)
        except re.error as e:
            raise ValueError(f"context regex {v!r}: {e}") from e
        return v


class AmbiguousSign(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rules: list[SignRule] = Field(min_length=1)  # first match wins
    default: str
    why: str = ""


class QuantityVocab(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: int
    description: str = ""
    scales: dict[str, float] = Field(min_length=1)
    currencies: dict[str, str] = Field(min_length=1)
    after_figure: list[str] = Field(default_factory=list)  # "euros", "元": after the number
    ambiguous_signs: dict[str, AmbiguousSign] = Field(default_factory=dict)
    unit_aliases: dict[str, str] = Field(default_factory=dict)
    measure_units: list[str] = Field(default_factory=list)  # not counts: tons, miles, x

    @field_validator("scales")
    @classmethod
    def _positive(cls, v: dict[str, float]) -> dict[str, float]:
        return _checked_table(v, lambda x: x <= 0, "scales must be positive with casefolded keys")

    @field_validator("currencies")
    @classmethod
    def _codes(cls, v: dict[str, str]) -> dict[str, str]:
        rule = "currencies: casefolded keys and ISO codes (USD) only"
        return _checked_table(v, lambda c: not _CODE.match(c), rule)

    @field_validator("ambiguous_signs")
    @classmethod
    def _sign_codes(cls, v: dict[str, AmbiguousSign]) -> dict[str, AmbiguousSign]:
        for sign, a in v.items():
            codes = [a.default] + [r.code for r in a.rules]
            if not all(_CODE.match(c) for c in codes):
                raise ValueError(f"ambiguous sign {sign!r}: ISO codes only, got {codes}")
        return v

    def model_post_init(self, _ctx: object) -> None:
        clash = set(self.ambiguous_signs) & set(self.currencies)
        if clash:
            raise ValueError(f"a sign is either ambiguous or not: {sorted(clash)}")
        unknown = [w for w in self.after_figure if w not in self.currencies]
        if unknown:
            raise ValueError(f"after_figure: words that are no currency key: {unknown}")


def load_vocab(path: Path = VOCAB_PATH) -> QuantityVocab:
    return QuantityVocab.model_validate(json.loads(path.read_text(encoding="utf-8")))


@cache
def vocab() -> QuantityVocab:
    return load_vocab()


def word_key(word: str) -> str:
    """How a scale, currency or unit word is looked up: casefolded, spaces squeezed."""
    return " ".join(word.casefold().split())


@cache
def _sign_rules(sign: str) -> tuple[list[tuple[re.Pattern[str], str]], str]:
    a = vocab().ambiguous_signs[sign]
    return [(re.compile(r.context, re.I), r.code) for r in a.rules], a.default


def scale(word: str) -> float | None:
    """The multiplier of a scale word ("bn", "millions", "亿元"); None when it is none."""
    return vocab().scales.get(word_key(word or ""))


def currency_of(sign: str, context: str = "") -> str:
    """The ISO code of a currency sign or word ("$" -> USD, "RMB" -> CNY); an ambiguous
    sign ("¥") by the rules of ``ambiguous_signs`` over ``context`` (the figure and the
    text around it). "" when ``sign`` names no currency."""
    key = word_key(sign or "")
    code = vocab().currencies.get(key)
    if code:
        return code
    if key in vocab().ambiguous_signs:
        rules, default = _sign_rules(key)
        return next((c for rx, c in rules if rx.search(context or "")), default)
    return ""


def currency_words() -> list[str]:
    """Every currency sign and word, longest first (so "hk$" is tried before "$")."""
    v = vocab()
    return sorted([*v.currencies, *v.ambiguous_signs], key=lambda w: (-len(w), w))


def spelled_scales() -> list[str]:
    """The scale words written out in English ("million", "billions", "crore"), longest
    first: the scale keys of Latin letters only, not the abbreviations ("bn", "mln", "k")."""
    words = [w for w in vocab().scales if w.isascii() and w.isalpha() and len(w) > 3]
    return sorted(words, key=lambda w: (-len(w), w))


def figure_currencies() -> tuple[list[str], list[str]]:
    """(signs, codes and words written before a number, words written after it), each
    longest first: what the sentence figure regex (``kg.extract.figures.FIGURE``) reads."""
    after = set(vocab().after_figure)
    words = currency_words()
    return [w for w in words if w not in after], [w for w in words if w in after]


def canonical_unit(unit: str, context: str = "") -> str:
    """A unit's comparable name: 'USD' / '$' / 'dollars' -> usd; 'USD/share' = 'USD per
    share' -> usd/share; '%' / 'percent' -> %; '亿元' -> cny; '¥' by its context; a plural
    noun that is no measure ('homes', 'vehicles', 'stores') -> count."""
    u = word_key(str(unit))
    u = re.sub(r"\s+per\s+(?:diluted\s+|basic\s+)?share$", "/share", u)
    base, _, per = u.partition("/")
    base = base.strip()
    v = vocab()
    code = currency_of(base, context)
    name = code.casefold() if code else v.unit_aliases.get(base, base)
    if (
        not code
        and base not in v.unit_aliases
        and base not in v.measure_units
        and re.fullmatch(r"[a-z][a-z-]*s", base)
    ):
        name = "count"  # "homes", "vehicles", "restaurants": a count of things
    return f"{name}/share" if per.strip() in ("share", "sh") else name
