"""Compositions of two readings (issue 44): a question that asks the difference of two
counts or values ("how many more days did the 10y close above 3.9% in August than in
September", "avg US10Y close last week minus avg US10Y close this week", "前一周收盘均值，
减去降息当天的收盘") is split into its two parts (``[difference]`` in triggers.toml), each
part completed from the other (a part that names no series takes the first part's; a part
that names only a time is the first part with that time), each read and run as a question
of its own, and the answer is the first value minus the second. Both parts must be
answered (not abstained) and give one number each; else the question is not composed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kg.cypher.lexicon import Lexicon, trigger_regex, triggers
from kg.cypher.units import parse as units_parse


@dataclass(frozen=True, slots=True)
class Parts:
    first: str
    second: str


def split_difference(text: str, lexicon: Lexicon, now: object) -> Parts | None:
    """The two questions a difference question is made of, completed; None if it is not one."""
    spec = triggers()["difference"]
    body = text
    for p in spec["strip"]:
        body = trigger_regex(p).sub("", body).strip()
    for p in spec["patterns"]:
        m = trigger_regex(p).search(body)
        if not m:
            continue
        g = m.groupdict()
        lead = (g.get("lead") or "").strip()
        a, b = g["a"].strip(" ,，"), g["b"].strip(" ,，")
        first = f"{lead} how many {a}".strip() if "how many more" in m.group(0).lower() else a
        second = _complete(first, b, lexicon, now)
        if second is None:
            continue
        return Parts(first, second)
    return None


def _complete(first: str, second: str, lexicon: Lexicon, now: object) -> str | None:
    """The second part as a question of its own: with the first part's time replaced when
    it names only a time, with the first part's series put before it when it names none."""
    _t1, m1 = lexicon.match(first)
    _t2, m2 = lexicon.match(second)
    u1, u2 = units_parse(first, now), units_parse(second, now)  # type: ignore[arg-type]
    ents1 = [m for m in m1 if m.of("entity")]
    ents2 = [m for m in m2 if m.of("entity")]
    if not ents1 or u1.time is None:
        return None
    if not ents2 and u2.time is not None and u2.aggregation is None and not u2.comparisons:
        span = re.escape(u1.time.text)
        replaced = re.sub(span, u2.time.text, first.lower(), count=1, flags=re.I)
        return replaced if replaced != first.lower() else None
    if not ents2:  # the first part's series by its name ("US 3M Treasury yield 9月以来...")
        return f"{ents1[0].of('entity')[0].name} {second}".strip()
    return second
