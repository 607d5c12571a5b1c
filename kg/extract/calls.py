"""Earnings-call transcripts: who speaks where, and in what role.

A transcript is a run of turns, each a line opening with the speaker's name and a colon
("Kevin Blair: So, yeah, Brad, thank you for the question."). The roles come from the
transcript itself, never from a name list:

* ``operator``: a speaker named "Operator" (or "Moderator");
* ``analyst``: a speaker the operator introduces ("Our next question comes from Brad
  Milsaps with Piper Sandler"), or whose turns ask: question marks and question phrases
  ("thanks for taking my question") are most of what they say;
* ``management``: every other speaker - the company's people answering.

Figures spoken by management are the company's (``kg/data/extract_patterns_call.json``
reads them in management turns only, ``scope: answer``); figures an analyst states are
his reading, not a fact of the company, and are dropped (``analyst_turn``).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Literal

Role = Literal["analyst", "management", "operator"]

# "Name: " at the start of a line: two to five capitalised words (initials, "C. Kelly
# Wall", "Ronald L. G. Tsoumas", "John A. Kite"), or one word for "Operator"
_NICK = r"[\"“][A-Z][\w'’.-]*[\"”]"  # 'Earl C. "Duke" Austin'
_SPEAKER = re.compile(
    r"^(?P<name>(?:[A-Z][\w'’.-]*|[A-Z]\.)(?:[ ](?:[A-Z][\w'’.-]*|[A-Z]\.|"
    + _NICK
    + r"|de|van|von|da|di)){1,4}"
    r"|(?:[A-Z][\w'’.-]*[ ]?)?\([A-Z][^()\n]{1,60}\)|Operator|Moderator"
    r"|(?P<solo>[A-Z][a-z][a-z'’-]{1,20}))"
    r"(?P<label>[ ]\([^()\n]{1,60}\)|[ ]+[-–—]{1,2}[ ]+[^:\n]{1,80})?[ ]?:[ ]",
    re.M,
)
# what a speaker's label says of the role: "Analyst (Hugo Brandt)", "Jo Bell - Analyst",
# "CFO Paul Dekker", "Jo Bell (Chief Financial Officer)"
_ANALYST_LABEL = re.compile(r"\banalyst\b", re.I)
_MANAGEMENT_LABEL = re.compile(
    r"\b(?:CEO|CFO|COO|CTO|President|Chief|Chairman|Chairwoman|Chair|Officer|Director|"
    r"Vice[ ]President|VP|Treasurer|Controller|Investor[ ]Relations|Founder)\b"
)
_OPERATOR = re.compile(r"^(?:Operator|Moderator)$", re.I)
_INTRODUCED = re.compile(
    r"(?:question|questions|line)\s+(?:today\s+)?(?:comes?|is|will\s+come)\s+from\s+(?:the\s+line\s+of\s+)?"
    r"(?P<name>[A-Z][\w'’.-]*(?:\s+[A-Z][\w'’.-]*){1,3})"
)
_ASKING = re.compile(
    r"\b(?:my\s+questions?|taking\s+(?:my|the|our)\s+questions?|(?:a|one|quick|my)\s+follow[- ]up|"
    r"can\s+you|could\s+you|would\s+you|I\s+wanted\s+to\s+ask|I\s+was\s+curious|"
    r"just\s+curious|wondering\s+if)\b",
    re.I,
)
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")
MIN_TURNS = 2
OPENING = 400  # characters before the first turn (a title, a header line)


@dataclass(frozen=True, slots=True)
class Turn:
    speaker: str
    start: int  # the speech, after "Name: " (document offsets)
    end: int
    role: Role = "management"


def _asks(speech: str) -> float:
    """How much of a speech is asking: question marks and question phrases per sentence."""
    sentences = max(1, len(_SENTENCE_END.findall(speech)))
    return (speech.count("?") + len(_ASKING.findall(speech))) / sentences


def transcript_turns(text: str) -> list[Turn]:
    """The turns of a call transcript with their speakers' roles; [] when the text is no
    transcript (fewer than two turns, or a single speaker)."""
    marks = [m for m in _SPEAKER.finditer(text) if not m.group("name").isupper()]
    named = [m for m in marks if not m.group("solo")]
    # a one-word label ("Pat: Hey. Good morning") is a speaker only in a transcript the full
    # names make, and only one that speaks twice: "Note: ..." alone in a story is no turn
    solo = Counter(m.group("solo") for m in marks if m.group("solo"))
    marks = [m for m in marks if not m.group("solo") or solo[m.group("solo")] >= MIN_TURNS]
    if (
        len(named) < MIN_TURNS
        or len({m.group("name") for m in named}) < 2
        or marks[0].start() > OPENING  # a transcript opens with a turn, after its title
    ):
        return []
    labelled: dict[str, Role] = {}
    for m in marks:
        label = m.group("name") + (m.group("label") or "")
        if _ANALYST_LABEL.search(label):
            labelled[m.group("name")] = "analyst"
        elif _MANAGEMENT_LABEL.search(label):
            labelled[m.group("name")] = "management"
    spans = [
        (m.group("name"), m.end(), marks[i + 1].start() if i + 1 < len(marks) else len(text))
        for i, m in enumerate(marks)
    ]
    introduced = {
        m.group("name")
        for name, a, b in spans
        if _OPERATOR.match(name)
        for m in _INTRODUCED.finditer(text, a, b)
    }
    asks: dict[str, list[float]] = {}
    first = ""  # who asks first: the analyst whose question the answers follow
    for name, a, b in spans:
        speech = text[a:b]
        asks.setdefault(name, []).append(_asks(speech))
        if not first and not _OPERATOR.match(name) and asks[name][-1] >= FIRST_ASK:
            first = name
    roles: dict[str, Role] = {}
    for name, scores in asks.items():
        if _OPERATOR.match(name):
            roles[name] = "operator"
        elif name in labelled:
            roles[name] = labelled[name]
        elif any(name == i or name.startswith(i) or i.startswith(name) for i in introduced):
            roles[name] = "analyst"
        elif name == first or sum(scores) / len(scores) >= ASK_SHARE:
            roles[name] = "analyst"
        else:
            roles[name] = "management"
    if "management" not in roles.values():  # everyone asks: no answer to read
        return []
    return [Turn(name, a, b, roles[name]) for name, a, b in spans]


# a speaker whose turns average this many question marks / phrases per sentence asks;
# the first turn asking this much is the analyst's question the answers follow
ASK_SHARE = 0.3
FIRST_ASK = 0.2


def answer_spans(turns: list[Turn], start: int, end: int) -> list[tuple[int, int, str]]:
    """The management turns within ``[start, end)`` of the document, as offsets relative
    to ``start`` (a chunk's), each with its speaker."""
    return [
        (max(t.start, start) - start, min(t.end, end) - start, t.speaker)
        for t in turns
        if t.role == "management" and t.start < end and t.end > start
    ]


def asked_spans(turns: list[Turn], start: int, end: int) -> list[tuple[int, int]]:
    """The analysts' turns within ``[start, end)``, relative to ``start``."""
    return [
        (max(t.start, start) - start, min(t.end, end) - start)
        for t in turns
        if t.role == "analyst" and t.start < end and t.end > start
    ]
