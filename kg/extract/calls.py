"""Earnings-call transcripts: who speaks where, and in what role.

A transcript is a run of turns, each a line opening with the speaker's name and a colon
("Kevin Blair: So, yeah, Brad, thank you for the question."). The roles come from the
transcript itself, never from a name list:

* ``operator``: a speaker named "Operator" (or "Moderator");
* a role the speaker field states ("Jo Bell - CFO", "Analyst (Hugo Brandt)");
* ``analyst``: a speaker the operator introduces ("Our next question comes from Brad
  Milsaps with Piper Sandler"), else the speaker of the first turn that asks (question
  marks and question phrases such as "thanks for taking my question"; a short "How are
  you?" is a greeting): a Q&A record is one analyst's question and its answers;
* ``management``: every other speaker - the company's people answering.

Figures spoken by management are the company's: the sentence patterns with ``scope:
answer`` read them in management turns only, and ``kg.extract.calls_figures`` reads every
figure there with the metric it is about (the analyst's or the previous sentence's when
the answer says "it"); figures an analyst states are his reading, not a fact of the
company, and are dropped (``analyst_turn``).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Literal

Role = Literal["analyst", "management", "operator"]

# A turn opens a line: "<speaker field>: speech". The speaker field is a name, maybe with a
# label ("Jo Bell - Analyst", "Jo Bell -- Harwell Securities -- Analyst", "Jo Bell, Chief
# Financial Officer", "Analyst (Hugo Brandt)", "Unknown Speaker"). It is parsed, not
# matched against one pattern: at most FIELD characters before ": ", the name made of
# name words only (capitalised words, initials, particles, a quoted nickname).
FIELD = 100
_TURN_START = re.compile(rf"^(?=[A-Z\"“])([^:\n]{{1,{FIELD}}}):[ ]", re.M)
_LABEL_SPLIT = re.compile(r"\s+[-–—]{1,2}\s+|,\s+|\s+(?=\()")
_PARTICLES = frozenset("de van von da di la le del der bin al dos".split())
_GENERIC = frozenset(
    "unknown unidentified speaker analyst participant company representative".split()
)
_ROLE_WORDS = {  # what a label says of the role
    "analyst": ("analyst",),
    "management": ("ceo", "cfo", "coo", "cto", "president", "chief", "chairman",
                   "chairwoman", "chair", "officer", "director", "vp", "treasurer",
                   "controller", "investor relations", "founder", "executive", "head"),
}  # fmt: skip
_OPERATORS = frozenset({"operator", "moderator", "coordinator"})
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
GREETING = 60  # a turn shorter than this that asks ("How are you?") is a greeting


@dataclass(frozen=True, slots=True)
class Turn:
    speaker: str
    start: int  # the speech, after "Name: " (document offsets)
    end: int
    role: Role = "management"


@dataclass(frozen=True, slots=True)
class Mark:
    """A speaker field at ``at`` (line start); the speech starts at ``speech_at``."""

    at: int
    name: str
    label: str
    speech_at: int


def _name_word(word: str) -> bool:
    w = word.strip('"“”')
    return bool(
        re.fullmatch(r"[A-Z][\w'’.-]*|[A-Z]\.", w) or w in _PARTICLES or w.casefold() in _GENERIC
    ) and not re.search(r"\d", w)


def speaker_field(field: str) -> tuple[str, str] | None:
    """(name, label) of a speaker field ("Jo Bell - CFO" -> ("Jo Bell", "CFO"),
    "Analyst (Hugo Brandt)" -> ("Analyst (Hugo Brandt)", "Analyst")); None when the text
    before the colon is no speaker ("Note", "KEY POINTS", "Revenue", a clause)."""
    parts = _LABEL_SPLIT.split(field.strip(), maxsplit=1)
    name, label = parts[0], (parts[1] if len(parts) > 1 else "")
    if label.startswith("(") and not label.endswith(")"):
        return None
    words = name.split()
    if not 1 <= len(words) <= 6 or name.isupper() or not all(map(_name_word, words)):
        return None
    if label.startswith("(") and label[1:-1].split() and all(map(_name_word, label[1:-1].split())):
        return f"{name} {label}", name  # "Analyst (Hugo Brandt)": the role before the name
    return name, label.strip("() ")


def speaker_marks(text: str) -> list[Mark]:
    """Every line of ``text`` that opens with a speaker field."""
    out = []
    for m in _TURN_START.finditer(text):
        read = speaker_field(m.group(1))
        if read is not None:
            out.append(Mark(m.start(), read[0], read[1], m.end()))
    return out


def _generic_part(name: str) -> str:
    """The role words a name field holds instead of a name ("Unidentified Analyst")."""
    return " ".join(w for w in name.split() if w.casefold() in _GENERIC)


def _role_of_label(text: str) -> Role | None:
    low = text.casefold()
    for role, words in _ROLE_WORDS.items():
        if any(re.search(rf"\b{re.escape(w)}\b", low) for w in words):
            return role  # type: ignore[return-value]
    return None


def _asks(speech: str) -> float:
    """How much of a speech is asking: question marks and question phrases per sentence."""
    sentences = max(1, len(_SENTENCE_END.findall(speech)))
    return (speech.count("?") + len(_ASKING.findall(speech))) / sentences


def transcript_turns(text: str) -> list[Turn]:
    """The turns of a call transcript with their speakers' roles; [] when the text is no
    transcript (fewer than two turns, or a single speaker).

    Roles come from the structure: the operator by name; a role a label states ("- CFO",
    "Analyst (...)"); an analyst the operator introduces; else the speaker of the first
    turn that asks (not a greeting) is the analyst whose question the answers follow, and
    every other speaker is management."""
    marks = speaker_marks(text)
    # a one-word field ("Pat: Hey. Good morning") is a speaker only in a transcript that
    # full names make, and only one that speaks twice: "Note: ..." alone is no turn
    solo = Counter(m.name for m in marks if len(m.name.split()) == 1)
    marks = [
        m for m in marks
        if len(m.name.split()) > 1 or m.name.casefold() in _OPERATORS or solo[m.name] >= MIN_TURNS
    ]  # fmt: skip
    named = [m for m in marks if len(m.name.split()) > 1]
    if (
        len(named) < MIN_TURNS
        or len({m.name for m in named}) < 2
        or marks[0].at > OPENING  # a transcript opens with a turn, after its title
    ):
        return []
    spans = [(m, marks[i + 1].at if i + 1 < len(marks) else len(text)) for i, m in enumerate(marks)]
    roles: dict[str, Role] = {}
    for m, _ in spans:
        if m.name.casefold() in _OPERATORS:
            roles[m.name] = "operator"
        elif (said := _role_of_label(f"{m.label} {_generic_part(m.name)}")) is not None:
            roles.setdefault(m.name, said)
    for m, end in spans:
        if roles.get(m.name) == "operator":
            for intro in _INTRODUCED.finditer(text, m.speech_at, end):
                who = intro.group("name")
                for other, _ in spans:
                    if other.name not in roles and (
                        other.name == who
                        or other.name.startswith(who)
                        or who.startswith(other.name)
                    ):
                        roles[other.name] = "analyst"
    if "analyst" not in roles.values():
        asking = [
            (m, end) for m, end in spans
            if m.name not in roles and _asks(text[m.speech_at : end]) >= FIRST_ASK
        ]  # fmt: skip
        first = next(
            (m for m, end in asking if end - m.speech_at >= GREETING),
            asking[0][0] if asking else None,
        )
        if first is not None:
            roles[first.name] = "analyst"
    for m, _ in spans:
        roles.setdefault(m.name, "management")
    if "management" not in roles.values():  # everyone asks: no answer to read
        return []
    return [Turn(m.name, m.speech_at, end, roles[m.name]) for m, end in spans]


# the first turn asking this much (question marks / phrases per sentence) is the analyst's
# question the answers follow
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


# -- the company of a call -----------------------------------------------------------------
# A call names its company in its title or header ("Aaron's Inc (AAN) Q3 2021 Earnings
# Call", "AAN Q3 2021 earnings call"), in the operator's welcome ("Welcome to the Aaron's
# third quarter 2021 earnings call") or only in passing ("our entire Aaron's family"). A
# ticker is tied to a name by a table the project holds (the bundled dictionary, the 10-K
# cover pages in ``kg/data/filer_tickers.json``) or by the transcript itself, never by a
# guess from memory: with neither, the ticker stays the company's name.
TITLE_TICKER = re.compile(r"^([A-Z][A-Z.]{0,5})\s+Q[1-4]\s+(?:FY\s?)?(?:19|20)\d{2}\b")
_CALL_WORDS = r"(?:earnings|results|conference|quarterly)\s+(?:conference\s+)?call"
_HEADER_NAMED = re.compile(
    r"(?P<name>[A-Z][\w&.'’-]*(?:\s+(?:[A-Z][\w&.'’-]*|&|of|and)){0,5})\s+\((?:(?:NYSE|NASDAQ|Nasdaq|"
    r"NYSEAMERICAN|AMEX|TSX)\s*:\s*)?(?P<ticker>[A-Z][A-Z.]{0,5})\)"
)
_WELCOME = re.compile(
    r"\b(?i:welcome|joining\s+us|join\s+us)\s+(?i:to|for)\s+(?i:the\s+|today's\s+)?"
    r"(?P<name>[A-Z][\w&.'’-]*(?:\s+(?:[A-Z][\w&.'’-]*|&)){0,4}?)(?:'s|’s)?\s+"
    r"(?i:(?:first|second|third|fourth|1st|2nd|3rd|4th)\s+quarter|Q[1-4]|fiscal|full[- ]year|"
    r"(?:19|20)\d{2}|" + _CALL_WORDS + r")"
)
# a name in passing: capitalised words (a possessive, hyphens and dotted initials kept)
_PROPER = re.compile(r"(?<![\w.])(?:(?:[A-Z]\.){2,}|[A-Z][\w&’'-]*)(?:\s+(?:[A-Z][\w&-]*|&))*")
_NOT_NAMES = frozenset(
    "i we our you the a an and but so yes yeah okay ok well thanks thank good great hi hey "
    "operator analyst ceo cfo coo q&a covid us u.s. america american".split()
)  # fmt: skip
FILER_TICKERS = "filer_tickers.json"


@dataclass(frozen=True, slots=True)
class CallCompany:
    name: str
    ticker: str
    how: str  # header | table | dictionary | transcript | ticker


def _letters(text: str) -> str:
    return re.sub(r"[^A-Za-z]", "", text).upper()


def _tickerish(hint: str) -> str:
    """The ticker a hint is ("F.N.B." -> "FNB", "EQR"), or ""."""
    return _letters(hint) if re.fullmatch(r"[A-Z][A-Z.]{0,7}", hint or "") else ""


def _stands_for(ticker: str, name: str) -> bool:
    """Does ``name`` spell ``ticker``: the same letters ("F.N.B."), its words' initials
    ("Kite Realty Group" - KRG), or one name word holding the ticker's letters in order
    from its first ("Aaron's" - AAN, "Synovus" - SNV, "Cleveland-Cliffs" - CLF)?"""
    words = [w for w in re.split(r"[\s-]+", re.sub(r"(?:'s|’s)$", "", name)) if w and w != "&"]
    if not ticker or not words:
        return False
    initials = "".join(w[0] for w in words).upper()
    if _letters(name) == ticker or initials == ticker:
        return True
    if len(words) > 1 and initials + ticker[-1:] == ticker and ticker[-1] in "IC":
        return True  # "Johnson Controls" - JCI, "Methode Electronics" - MEI (Inc., Corp.)
    whole = _letters(name)
    if whole[:1] != ticker[0] or len(whole) < max(4, len(ticker) + 1):
        return False
    at = 0
    for ch in ticker:
        at = whole.find(ch, at) + 1
        if not at:
            return False
    return True


def _passing_name(ticker: str, text: str, speakers: set[str]) -> str:
    """The name the transcript uses for its company, one that spells the ticker ("our
    entire Aaron's family", "Synovus", "F.N.B."), most said first; never a speaker's name
    nor a single word only ever opening a sentence ("Fix")."""
    seen: Counter[str] = Counter()
    for m in _PROPER.finditer(text):
        # a period word ends a name ("FNB Q3 2021 earnings call" -> "FNB")
        name = re.split(r"\s+(?:Q[1-4]|H[12]|FY\w*)\b", m.group(0))[0]
        name = re.sub(r"(?:'s|’s)$", "", name)
        if not re.fullmatch(r"(?:[A-Z]\.){2,}", name):
            name = name.rstrip(".")
        if name.casefold() in _NOT_NAMES or set(name.split()) & speakers:
            continue
        before = text[max(0, m.start() - 3) : m.start()]
        opens = m.start() == 0 or re.search(r"(?:[.!?:]\s+|\n)$", before) is not None
        if opens and " " not in name and "-" not in name and not name.isupper():
            continue
        seen[name] += 1
    spelled = [(name != ticker, n, name) for name, n in seen.items() if _stands_for(ticker, name)]
    return max(spelled)[2] if spelled else ""  # a name before the bare ticker, most said first


@cache
def _filer_table() -> dict[str, str]:
    rows = json.loads(resources.files("kg.data").joinpath(FILER_TICKERS).read_text("utf-8"))
    return {t: r["name"] for r in rows["filers"] for t in r["tickers"]}


def call_company(
    hint: str, title: str, text: str, known: Any = None, turns: list[Turn] | None = None
) -> CallCompany | None:
    """The company of a call transcript when the user gave no name (or only a ticker):
    the header's "Name (TICKER)", the operator's welcome, the ticker's name in a table the
    project holds (``known(ticker)``: the bundled dictionary; then the 10-K cover pages),
    a name in the transcript that spells the ticker, else the ticker itself. None for a
    document that is no call (no call title and no transcript). ``turns``: the text's
    ``transcript_turns`` when the caller read them already (read here otherwise)."""
    head = f"{title}\n{text[:OPENING]}"
    titled = TITLE_TICKER.match(title or "")
    is_call = bool(titled) or re.search(_CALL_WORDS, head, re.I) is not None
    given = turns is not None
    turns = turns if turns is not None else (transcript_turns(text) if not is_call else [])
    if not is_call and not turns:
        return None
    named = _HEADER_NAMED.search(head)
    ticker = (
        _tickerish(hint)
        or (titled.group(1).replace(".", "") if titled else "")
        or (named.group("ticker").replace(".", "") if named else "")
    )
    if named and (not ticker or named.group("ticker").replace(".", "") == ticker):
        return CallCompany(named.group("name"), ticker, "header")
    if ticker and known is not None and (name := known(ticker)):
        return CallCompany(name, ticker, "dictionary")
    if ticker and (name := _filer_table().get(ticker, "")):
        return CallCompany(name, ticker, "table")
    welcome = _WELCOME.search(text[: OPENING * 5])
    if (
        welcome
        and welcome.group("name")[0] == (ticker or welcome.group("name"))[0]
        and not re.match(
            r"(?i)(?:first|second|third|fourth|fiscal|full|annual)\b", welcome.group(1)
        )
    ):
        return CallCompany(welcome.group("name"), ticker, "header")
    if ticker:
        turns = turns if given else turns or transcript_turns(text)
        speakers = {w for t in turns for w in t.speaker.split()}
        if name := _passing_name(ticker, text, speakers):
            return CallCompany(name, ticker, "transcript")
        return CallCompany(ticker, ticker, "ticker")
    return None
