"""Time windows named relative to something the graph knows (issue 44): the day of a
policy decision ("fed day", "降息当天", "the day before the FOMC decision").

A phrase of ``[event_days]`` in triggers.toml is found in the question, the day it names
is read from the graph (the catalogue's ``reader_policy_change_day``: the latest change,
not after now, of a rate the named institution sets), and the phrase is rewritten as that
day before the question is read, so every time form that takes a day takes it ("from
last fri's close to the fed day close" is a range, "降息当天 A减B" a spread on a day).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from kg.cypher.lexicon import trigger_regex, triggers


@dataclass(frozen=True, slots=True)
class EventDay:
    start: int
    end: int
    before: bool  # the weekday before the decision ("the day before the FOMC decision")
    institution: str  # the words naming who decided ("fed", "美联储"), or ""
    direction: int  # -1 a cut, 1 a hike, 0 any change


def event_days(text: str) -> list[EventDay]:
    """The decision-day phrases of ``text``, in order, no overlaps."""
    spec = triggers()["event_days"]
    found: list[EventDay] = []
    for key, before in (("day_before", True), ("day", False)):
        for p in spec[key]:
            for m in trigger_regex(p).finditer(text):
                if any(m.start() < e.end and e.start < m.end() for e in found):
                    continue
                words = m.group(0)
                cut = any(trigger_regex(c).search(words) for c in spec["cut"])
                hike = any(trigger_regex(h).search(words) for h in spec["hike"])
                inst = m.groupdict().get("inst") or ""
                found.append(EventDay(m.start(), m.end(), before, inst, -1 if cut else int(hike)))
    return sorted(found, key=lambda e: e.start)


def previous_weekday(day: datetime) -> datetime:
    back = 3 if day.weekday() == 0 else (2 if day.weekday() == 6 else 1)
    return day - timedelta(days=back)


def day_text(ms: int, before: bool) -> str:
    """The ISO day a decision at ``ms`` names (the weekday before it for ``before``)."""
    day = datetime.fromtimestamp(ms / 1000, UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return (previous_weekday(day) if before else day).strftime("%Y-%m-%d")


def rewrite(text: str, found: list[tuple[EventDay, str]]) -> str:
    """``text`` with each phrase replaced by its day (spaces around it where it joins words)."""
    out = text
    for e, day in sorted(found, key=lambda x: -x[0].start):
        left = " " if e.start > 0 and re.match(r"\w", out[e.start - 1]) else ""
        right = " " if e.end < len(out) and re.match(r"\w", out[e.end]) else ""
        out = out[: e.start] + left + day + right + out[e.end :]
    return out
