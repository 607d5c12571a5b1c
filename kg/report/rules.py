"""The bond report's rules and tables as data (kg/data/report_rules.toml), validated at load.

A rule reads named signals (``when``: all conditions must hold), names the signal whose
value is its label and the signals whose values are its reasons (``because``), and
carries an English and a Chinese sentence. ``{w}`` in a rule expands over its windows.
``evaluate`` is pure: signals in, conclusions (each with the signals that fired) out.
"""

from __future__ import annotations

import re
import tomllib
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

BUNDLED = Path(__file__).resolve().parents[1] / "data" / "report_rules.toml"
Op = Literal["==", "!=", ">", ">=", "<", "<=", "in"]
WINDOW_WORDS = {
    "en": {"1d": "the day", "1w": "the week", "1m": "the month"},
    "zh": {"1d": "当日", "1w": "近一周", "1m": "近一个月"},
}


WORDS: dict[str, tuple[str, str]] = {
    "bull_steepening": ("bull steepening", "牛陡"),
    "bull_flattening": ("bull flattening", "牛平"),
    "bear_steepening": ("bear steepening", "熊陡"),
    "bear_flattening": ("bear flattening", "熊平"),
    "parallel": ("parallel shift", "平行移动"),
    "mixed": ("mixed (ends moved in opposite directions)", "分化（两端反向）"),
    "front_end_led": ("led by the front end", "前端主导"),
    "long_end_led": ("led by the long end", "长端主导"),
    "widened": ("widened", "走阔"),
    "narrowed": ("narrowed", "收窄"),
    "unchanged": ("was unchanged", "基本不变"),
    "inverted": ("inverted", "倒挂"),
    "not_inverted": ("not inverted", "未倒挂"),
    "up": ("up", "上行"),
    "down": ("down", "下行"),
    "flat": ("flat", "持平"),
    "front_end_rose": ("rose", "上行"),
    "front_end_fell": ("fell", "下行"),
    "front_end_flat": ("was flat", "持平"),
    "cut": ("cut", "降息"),
    "hike": ("hike", "加息"),
    "hold": ("hold", "维持利率不变"),
    "policy_cut": ("a cut", "降息"),
    "policy_hike": ("a hike", "加息"),
    "policy_hold": ("a hold", "按兵不动"),
    "dissent": ("dissent", "有异议票"),
    "cuts_priced": ("further cuts over the next year", "未来一年进一步降息"),
    "hikes_priced": ("hikes over the next year", "未来一年加息"),
    "hold_priced": ("rates broadly on hold over the next year", "未来一年利率大致不变"),
}


def word(value: Any, lang: str) -> str:
    pair = WORDS.get(str(value))
    if pair is None:
        return str(value)
    return pair[0] if lang == "en" else pair[1]


class Thresholds(BaseModel):
    flat_bp: float = 3.0
    parallel_bp: float = 3.0
    spread_unchanged_bp: float = 2.0
    vol_window: int = Field(60, ge=5)
    headline_min: int = Field(3, ge=1)
    headline_max: int = Field(5, ge=1)
    headline_min_z: float = 1.0
    funding_band_bp: float = 5.0
    driver_days: int = Field(7, ge=0)


class Curve(BaseModel):
    id: str
    front: str
    long: str
    bill: str | None = None


class Row(BaseModel):
    id: str
    en: str
    zh: str


class DriverRule(BaseModel):
    indicators: list[str]
    entities: list[str] = Field(default_factory=list)
    keywords: list[str] = Field(default_factory=list)


class Headline(BaseModel):
    candidates: list[str]


class Rule(BaseModel):
    id: str
    kind: str
    curve: str
    windows: list[str] = Field(default_factory=lambda: ["1d"])
    label: str  # the signal whose value is the conclusion's label
    because: list[str] = Field(default_factory=list)
    when: list[tuple[str, Op, Any]]
    en: str
    zh: str
    show: bool = True  # False: evaluated (JSON, evaluation) but not in the text
    show_windows: list[str] | None = None  # shown only for these windows

    @field_validator("windows")
    @classmethod
    def _known(cls, v: list[str]) -> list[str]:
        bad = [w for w in v if w not in WINDOW_WORDS["en"]]
        if bad:
            raise ValueError(f"unknown windows {bad}")
        return v


class Rules(BaseModel):
    version: int
    thresholds: Thresholds
    curves: list[Curve]
    curve_table: list[Row]
    funding_table: list[Row]
    headline: Headline
    drivers: list[DriverRule]
    rules: list[Rule]

    def curve(self, cid: str) -> Curve:
        return next(c for c in self.curves if c.id == cid)

    def indicators(self) -> list[str]:
        ids: list[str] = []
        for c in self.curves:
            ids += [c.front, c.long] + ([c.bill] if c.bill else [])
        ids += [r.id for r in self.curve_table] + [r.id for r in self.funding_table]
        ids += self.headline.candidates
        return list(dict.fromkeys(ids))


@lru_cache(maxsize=4)
def load_rules(path: Path | None = None) -> Rules:
    """The rules file, validated (a clear error names the bad field)."""
    data = tomllib.loads((path or BUNDLED).read_text(encoding="utf-8"))
    rules = Rules.model_validate(data)
    ids = [r.id for r in rules.rules]
    if len(ids) != len(set(ids)):
        raise ValueError("report rules: duplicate rule ids")
    known = {c.id for c in rules.curves}
    for r in rules.rules:
        if r.curve not in known:
            raise ValueError(f"report rule {r.id}: unknown curve {r.curve!r}")
    return rules


class Conclusion(BaseModel):
    rule_id: str
    kind: str
    window: str
    label: str
    because: list[str] = Field(default_factory=list)
    signals: dict[str, Any] = Field(default_factory=dict)  # the signals that fired
    text: str = ""
    text_zh: str = ""
    show: bool = True


def _holds(value: Any, op: str, target: Any) -> bool:
    if value is None or value == "none":
        return op == "==" and target == "none"
    if op == "in":
        return value in target
    if op == "==":
        return bool(value == target)
    if op == "!=":
        return bool(value != target)
    try:
        v, t = float(value), float(target)
    except (TypeError, ValueError):
        return False
    return {">": v > t, ">=": v >= t, "<": v < t, "<=": v <= t}[op]


_FIELD = re.compile(r"\{([a-z0-9_.]+)(?::([^}]*))?\}")


def fill(template: str, signals: dict[str, Any], lang: str, window: str) -> str:
    """A rule's sentence with its signal placeholders formatted; ``{x_en}``/``{x_zh}``
    read the word for a label signal (``words`` in market.py)."""

    def one(m: re.Match[str]) -> str:
        name, spec = m.group(1), m.group(2)
        if name in ("w_en", "w_zh"):
            return WINDOW_WORDS[name[-2:]][window]
        if name.endswith(("_en", "_zh")) and name[:-3] in signals:
            return word(signals[name[:-3]], name[-2:])
        v = signals.get(name)
        if v is None:
            return "n/a"
        if spec:
            try:
                return format(float(v), spec)
            except (TypeError, ValueError):
                return str(v)
        return str(v)

    return _FIELD.sub(one, template)


def evaluate(
    rules: Rules, signals: dict[str, Any], *, kinds: set[str] | None = None,
    windows: set[str] | None = None,
) -> list[Conclusion]:  # fmt: skip
    """Every rule (per window) whose conditions hold, with the signals that fired."""
    out: list[Conclusion] = []
    for r in rules.rules:
        if kinds is not None and r.kind not in kinds:
            continue
        for w in r.windows:
            if windows is not None and w not in windows:
                continue
            conds = [(s.replace("{w}", w), op, t) for s, op, t in r.when]
            if not all(_holds(signals.get(s), op, t) for s, op, t in conds):
                continue
            label_sig = r.label.replace("{w}", w)
            label = signals.get(label_sig, label_sig)
            because_sigs = [b.replace("{w}", w) for b in r.because]
            because = [str(signals[b]) for b in because_sigs if signals.get(b) not in
                       (None, "", "none")]  # fmt: skip
            fired = {s: signals.get(s) for s, _, _ in conds}
            for name in (label_sig, *because_sigs):
                if name in signals:
                    fired[name] = signals[name]
            en = r.en.replace("{w}", w)
            zh = r.zh.replace("{w}", w)
            out.append(Conclusion(
                rule_id=r.id, kind=r.kind, window=w, label=str(label), because=because,
                signals=fired, text=fill(en, signals, "en", w), text_zh=fill(zh, signals, "zh", w),
                show=r.show and (r.show_windows is None or w in r.show_windows),
            ))  # fmt: skip
    return out
