"""A question as typed into a chat box -> the words the rules know (issue 33).

Every new voice typed words no rule was written on: abbreviations ("hw many", "r",
"pls"), misspelt trigger words ("isue", "industires", "listd") and Chinese names or
words written in pinyin ("maotai", "ningde shidai", "yinhang股"). Rather than one rule per
wording, the question's text is rewritten once before it is matched and parsed:

- words of ``[abbreviations]`` in ``triggers.toml`` are spelled out (a table, data);
- an ASCII word that is neither English (pyspellchecker's word list) nor a dictionary
  word becomes the one trigger or dictionary word within edit distance 1 (2 for 8+
  letters) with the same first letter, the most frequent English word on a tie;
- a run of ASCII words that is no English and whose letters are the toneless pinyin of
  exactly one Chinese dictionary entry (a name, short name, alias or trigger word of 2+
  characters) becomes that entry.

Names misspelt in English are left to ``Lexicon._spelled`` (the dictionary's own name
words); this module never touches a word the dictionary or English knows.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from functools import cache, lru_cache
from itertools import pairwise
from typing import Any

from pypinyin import lazy_pinyin
from spellchecker import SpellChecker

from kg.cypher.lexicon import _CJK, Lexicon, _edits, _singular, trigger_regex, triggers
from kg.cypher.units import parse as units_parse

# an ASCII word; a letter of dotted initials ("U.S.", "U.K.") is none (the "u" of "U.S." is
# not the chat-box "u" = "you")
_ASCII_WORD = re.compile(r"(?<![A-Za-z0-9_.'-])[A-Za-z]+(?![A-Za-z0-9_-])(?!\.[A-Za-z]\b)")
_PATTERN_WORD = re.compile(r"[a-z]{2,}")
_REGEX_CHARS = re.compile(r"[\\()\[\]?|*+{}^$]")
_CLAUSE_BREAK = re.compile(
    r"\s*(?:[,，:：;；!！?？。]|\s[-–—]+\s|(?<=[\u3400-\u9fff])\s+(?=\S)|\s+(?=[\u3400-\u9fff]))\s*"
)
# a relative clause after a noun ("the bond which is tracked by X"), not a new question
_RELATIVE = re.compile(r"\s*(?:which|that|who)\s+(?:is|are|was|were|has|have)\b", re.I)
_WH_START = re.compile(r"\s(?=(?:which|what|who|how|list|name|show|where|when)\b)", re.I)
# Where a lead clause ends: a clause break (group "cut", consumed) or the space before a
# question word (group "wh", kept with the rest); one search finds the first of either.
_LEAD_END = re.compile(f"(?P<cut>{_CLAUSE_BREAK.pattern})|(?P<wh>{_WH_START.pattern})", re.I)
_ASKS = re.compile(r"哪|什么|啥|几|多少|谁|何|\b(?:which|what|who|whom|how|when|where)\b", re.I)
_WH_FIRST = re.compile(r"\s*(?:which|what|who|how|list|name|show)\b", re.I)
_EPOCH = datetime(2026, 1, 1, tzinfo=UTC)  # only whether a time is named matters here
_CLIP_LABELS = frozenset({"Theme", "Industry", "Company", "Fund", "Institution"})
_ABBREV_LABELS = frozenset({"Company", "Fund", "Institution"})
COMMON_PAIR_FREQ = 200  # jieba frequency from which two characters are an ordinary word
MIN_TYPO_LEN = 4  # shorter words are abbreviations (the table) or left alone
MAX_PINYIN_RUN = 4  # syllable groups joined into one Chinese entry


@cache
def _english() -> Any:
    """pyspellchecker's English word frequencies (160k words, ~0.1 s to load)."""
    return SpellChecker(language="en").word_frequency


def english_word(word: str) -> bool:
    return word.lower() in _english()


def _frequency(word: str) -> int:
    return int(_english()[word]) if word in _english() else 0


def _strings(node: Any) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [s for v in node.values() for s in _strings(v)]
    if isinstance(node, list):
        return [s for v in node for s in _strings(v)]
    return []


@cache
def _phrases() -> list[tuple[re.Pattern[str], str]]:
    return [(re.compile(k, re.I), str(v)) for k, v in triggers().get("phrases", {}).items()]


# Trigger tables whose words give a lead clause a meaning of its own (periods, days, ranks,
# comparisons...): such a lead is never chat.
_MEANINGFUL_TABLES = (
    "periods", "point_time", "ever", "daily", "last_n", "top_n", "time_units", "when",
    "most", "spread", "mom", "direction", "compare", "answer_bp", "range_agg", "same_as",
    "include_anchor", "has_data", "close_vs_open", "exists", "negation",
)  # fmt: skip


@cache
def _meaningful() -> list[re.Pattern[str]]:
    t = triggers()
    pats = [p for k in _MEANINGFUL_TABLES for p in _strings(t.get(k, {})) if len(p) > 1]
    return [re.compile(p, re.I) for p in pats if _REGEX_CHARS.search(p) or not p.isascii()]


@cache
def _abbreviations() -> dict[str, str]:
    table = triggers().get("abbreviations", {})
    return {k.lower(): str(v) for k, v in table.items()}


@cache
def _trigger_words() -> tuple[frozenset[str], frozenset[str]]:
    """(targets, kept): the English words the triggers use, listed or literal in a pattern
    (a pattern's stem such as "clos" is no target), and every listed word ("aren", "isn":
    never corrected)."""
    targets: set[str] = set()
    kept: set[str] = set()
    for s in _strings(triggers()):
        plain = not _REGEX_CHARS.search(s)
        for w in _PATTERN_WORD.findall(s.lower()):
            if english_word(w):
                targets.add(w)
            if plain:
                kept.add(w)
    return frozenset(targets), frozenset(kept | targets)


@lru_cache(maxsize=65536)
def _pinyin(zh: str) -> str:
    """Toneless pinyin, kept across dictionary rebuilds (only new entries cost)."""
    return "".join(lazy_pinyin(zh))


@lru_cache(maxsize=65536)
def _initials(zh: str) -> str:
    return "".join(p[:1] for p in lazy_pinyin(zh))


def _own_names(ent: dict[str, Any]) -> list[str]:
    """An entity's Chinese names: official, short and aliases."""
    names = [ent.get("name_zh"), ent.get("short_name"), *(ent.get("aliases") or [])]
    return [n for n in names if isinstance(n, str) and _CJK.fullmatch(n)]


def _plural(word: str) -> str:
    if word.endswith("y") and word[-2:-1] not in "aeiou":
        return word[:-1] + "ies"
    return word + ("es" if word.endswith(("s", "x", "ch", "sh")) else "s")


def _zh_int(text: str, digits: dict[str, int]) -> int | None:
    """A Chinese numeral below 100 ("十八", "四十八", "二十", "七") as an int."""
    if "十" not in text:
        return digits.get(text) if len(text) == 1 else None
    tens, _, units = text.partition("十")
    t = 1 if not tens else digits.get(tens)
    u = 0 if not units else digits.get(units)
    return None if t is None or u is None or len(tens) > 1 or len(units) > 1 else t * 10 + u


class Spoken:
    """Numbers, days and times said rather than typed ("four point two five", "四点二五",
    "november eighteenth", "十一月十八号", "seven o'clock utc", "早上六点UTC") as digits;
    the words are data (``[spoken]`` in triggers.toml)."""

    def __init__(self) -> None:
        t = triggers()["spoken"]
        self.units: dict[str, int] = t["en_units"]
        self.tens: dict[str, int] = t["en_tens"]
        self.ordinals: dict[str, int] = dict(t["en_ordinals"])
        for tw, tv in self.tens.items():  # "twenty-first", "thirty first"
            for ow, ov in t["en_ordinals"].items():
                if ov < 10:
                    self.ordinals[f"{tw}-{ow}"] = self.ordinals[f"{tw} {ow}"] = tv + ov
        self.digits: dict[str, int] = t["zh_digits"]
        self.afternoon = tuple(t["zh_afternoon"])
        unit = "|".join(sorted(self.units, key=len, reverse=True))
        tens = "|".join(self.tens)
        num = rf"(?:(?:{tens})(?:[- ](?:{unit}))?|{unit})"
        digit = "|".join(w for w, v in self.units.items() if v < 10)
        ords = "|".join(sorted(map(re.escape, self.ordinals), key=len, reverse=True))
        zh = "".join(self.digits) + "十"
        parts = "|".join(t["zh_day_parts"])
        self.en_decimal = re.compile(rf"\b({num}) point((?:[ -](?:{digit}))+)\b", re.I)
        self.en_clock = re.compile(
            rf"\b({num})(?: o'?clock| ?(a|p)\.? ?m\b\.?)(?=\s*(?:utc|gmt|z)\b)", re.I
        )
        self.en_month_day = re.compile(rf"\b({'|'.join(t['months'])})\.? (?:the )?({ords})\b", re.I)
        self.en_weekday_day = re.compile(rf"\b({'|'.join(t['weekdays'])}),? the ({ords})\b", re.I)
        self.zh_decimal = re.compile(rf"([{zh}]{{1,3}})点([{zh}]+)(?![十百分刻钟])")
        self.zh_date = re.compile(rf"([{zh}]{{1,2}})月([{zh}]{{1,3}})[号日]")
        zones = "|".join(sorted(map(re.escape, t["zones"]), key=len, reverse=True))
        self.offsets = {k.lower(): int(v) for k, v in t["zones"].items()}
        clock = rf"(?:(\d{{1,2}}|[{zh}]{{1,3}})点(?:(\d{{1,2}})分|钟|整)*|(\d{{1,2}}):(\d{{2}}))"
        self.zoned = re.compile(  # "北京时间上午10点07分", "北京时间下午两点整", "bjt 14:30"
            rf"({zones})\s*({parts})?\s*{clock}(?:\s*(到|至|-|~|to)\s*({parts})?\s*{clock})?",
            re.I,
        )
        self.zh_clock = re.compile(
            # a time of day with UTC after it, or a part of the day before it ("上午八点")
            rf"(?:({parts})([{zh}]{{1,3}})点钟?整?(?![{zh}半分刻])"
            rf"|()([{zh}]{{1,3}})点钟?整?(?=\s*(?:utc|gmt)(?![a-z])))",
            re.I,
        )

    def _en(self, words: str) -> int:
        parts = re.split(r"[- ]", words.lower())
        return sum(self.tens.get(p, 0) + self.units.get(p, 0) for p in parts)

    def read(self, text: str) -> str:
        def en_decimal(m: re.Match[str]) -> str:
            frac = "".join(str(self.units[w.lower()]) for w in re.split(r"[ -]", m.group(2)) if w)
            return f"{self._en(m.group(1))}.{frac}"

        def en_clock(m: re.Match[str]) -> str:
            h = self._en(m.group(1))
            h = h + 12 if (m.group(2) or "").lower() == "p" and h < 12 else h
            return f"{h:02d}:00" if h < 24 else m.group()

        def zh_decimal(m: re.Match[str]) -> str:
            whole = _zh_int(m.group(1), self.digits)
            frac = [self.digits.get(c) for c in m.group(2)]
            if whole is None or any(f is None for f in frac):
                return m.group()
            return f"{whole}.{''.join(map(str, frac))}"

        def zh_date(m: re.Match[str]) -> str:
            mo, d = _zh_int(m.group(1), self.digits), _zh_int(m.group(2), self.digits)
            return m.group() if mo is None or d is None else f"{mo}月{d}日"

        def zh_clock(m: re.Match[str]) -> str:
            part, num = (m.group(1), m.group(2)) if m.group(2) else (m.group(3), m.group(4))
            h = _zh_int(num, self.digits)
            if h is None:
                return m.group()
            h = h + 12 if part in self.afternoon and h < 12 else h
            return f"{h:02d}:00"

        def zoned(m: re.Match[str]) -> str:
            g, offset = m.groups(), self.offsets[m.group(1).lower()]
            ends = [(g[1], g[2:6])] + ([(g[7] or g[1], g[8:12])] if g[6] else [])
            out = []
            for part, (zh_h, zh_m, h_digits, m_digits) in ends:
                raw = zh_h or h_digits
                h = int(raw) if raw.isdigit() else _zh_int(raw, self.digits)
                if h is None:
                    return m.group()
                h = h + 12 if part in self.afternoon and h < 12 else h
                utc = h - offset
                if not 0 <= utc < 24:
                    return m.group()  # the day before in UTC: left as said
                out.append(f"{utc:02d}:{int(zh_m or m_digits or 0):02d} utc")
            return f" {out[0]}到{out[1]} " if len(out) == 2 else f" {out[0]} "

        text = self.zoned.sub(zoned, text)
        text = self.en_decimal.sub(en_decimal, text)
        text = self.en_clock.sub(en_clock, text)
        text = self.en_month_day.sub(
            lambda m: f"{m.group(1)} {self.ordinals[m.group(2).lower()]}", text
        )
        text = self.en_weekday_day.sub(lambda m: m.group(1), text)
        if _CJK.search(text):
            text = self.zh_date.sub(zh_date, text)
            text = self.zh_clock.sub(zh_clock, text)
            text = self.zh_decimal.sub(zh_decimal, text)
        return text


@cache
def spoken() -> Spoken:
    return Spoken()


class Respeller:
    """Built once per lexicon (the dictionary's words and Chinese entries)."""

    def __init__(self, lexicon: Lexicon) -> None:
        targets, kept = _trigger_words()
        words = {w for w in (targets | lexicon.known_words) if len(w) >= MIN_TYPO_LEN}
        self.targets = words | {_plural(w) for w in words}
        self.known = lexicon.known_words | kept
        self.lexicon = lexicon
        self.by_first: dict[str, list[str]] = {}
        for w in self.targets:
            self.by_first.setdefault(w[0], []).append(w)
        pinyin: dict[str, set[str]] = {}
        for key in lexicon.entries:
            if _CJK.fullmatch(key) and 2 <= len(key) <= 8:
                pinyin.setdefault(_pinyin(key), set()).add(key)
        # one Chinese entry per spelling; two different entries with one pinyin are ambiguous
        self.pinyin = {p: ks.pop() for p, ks in pinyin.items() if len(ks) == 1 and len(p) >= 5}
        # pinyin initials of entity names ("gzmt" = 贵州茅台, "ndsd" = 宁德时代, "zgpa" = 中国平安)
        initials: dict[str, set[str]] = {}
        spelled: dict[str, str] = {}
        for key, senses in lexicon.entries.items():
            if _CJK.fullmatch(key) and 3 <= len(key) <= 6:
                ids = {x.key for x in senses if x.kind == "entity"}
                if len(ids) == 1:
                    ini = _initials(key)
                    initials.setdefault(ini, set()).update(ids)
                    spelled[ini] = min(spelled.get(ini, key), key, key=lambda k: (len(k), k))
        self.initials = {ini: spelled[ini] for ini, ids in initials.items() if len(ids) == 1}
        # Chinese names shortened (unique, not an entry themselves), of an entity's own names
        # (not the dictionary's partial names): 5+ characters with one inner character left
        # out ("新能源车" = 新能源汽车); an organisation's 4-character name as its two words'
        # first character and the second word ("中石油" = 中国石油) or both first characters
        # ("国君" = 国泰君安, "建银" = 建设银行) when that pair is no ordinary word
        clipped: dict[str, set[str]] = {}
        for eid, ent in lexicon.entities.items():
            label = str(ent.get("label", ""))
            for key in _own_names(ent) if label in _CLIP_LABELS else ():
                senses = lexicon.entries.get(key, [])
                if {x.key for x in senses if x.kind == "entity"} != {eid}:
                    continue
                if 5 <= len(key) <= 8:
                    shorts = {key[:k] + key[k + 1 :] for k in range(1, len(key) - 1)}
                elif len(key) == 4 and label in _ABBREV_LABELS:
                    shorts = {key[0] + key[2]} if self._rare(key[0] + key[2]) else set()
                    if key[2:] not in lexicon.entries:  # "中银行": 银行 is a word of its own
                        shorts.add(key[0] + key[2:])
                else:
                    continue
                for short in shorts - set(lexicon.entries):
                    clipped.setdefault(short, set()).add(key)
        self.clipped = {c: ks.pop() for c, ks in clipped.items() if len(ks) == 1}
        self._clip_re = (
            re.compile("|".join(sorted(map(re.escape, self.clipped), key=len, reverse=True)))
            if self.clipped
            else None
        )

    def _rare(self, pair: str) -> bool:
        return self.lexicon.tokenizer.word_freq(pair) < COMMON_PAIR_FREQ

    def _word(self, word: str) -> str:
        low = word.lower()
        abbrev = _abbreviations().get(low)
        if abbrev is not None:
            return abbrev
        if (
            len(low) < MIN_TYPO_LEN
            or low in self.known
            or _singular(low) in self.known  # "ceos": the dictionary has "ceo"
            or english_word(low)
        ):
            return word
        if low in self.initials:  # a Chinese name by its pinyin initials
            return self.initials[low]
        limit = 1 if len(low) < 8 else 2
        best: list[tuple[int, bool, int, str]] = []
        for w in self.by_first.get(low[0], ()):
            if abs(len(w) - len(low)) > limit:
                continue
            d = _edits(low, w, limit)
            if d <= limit:  # a dropped letter is the likeliest typo ("wich", "listd")
                dropped = len(w) == len(low) + 1
                best.append((d, not dropped, -_frequency(w), w))
        if not best:
            return word
        best.sort()
        return best[0][-1]

    def _pinyin_runs(self, text: str) -> str:
        words = list(_ASCII_WORD.finditer(text))
        out: list[str] = []
        pos = 0
        i = 0
        while i < len(words):
            hit = None
            for j in range(min(len(words), i + MAX_PINYIN_RUN), i, -1):
                run = words[i:j]
                gaps = [text[a.end() : b.start()] for a, b in pairwise(run)]
                if any(g.strip() for g in gaps):
                    continue
                letters = "".join(m.group().lower() for m in run)
                zh = self.pinyin.get(letters)
                if zh is None:
                    continue
                if all(english_word(m.group()) or m.group().lower() in self.known for m in run):
                    continue  # "ping an" is English words and a name already
                hit = (run[0].start(), run[-1].end(), zh, j)
                break
            if hit is None:
                i += 1
                continue
            start, end, zh, i = hit
            out.append(text[pos:start])
            out.append(zh)
            pos = end
        out.append(text[pos:])
        return "".join(out)

    def drop_preamble(self, text: str) -> str:
        """Chat before the question ("client on the line, which banks ...", "credit desk
        here what ccy is ...", "合规这边核对下 银行行业一共有几家公司"): a leading clause (up
        to a clause break, or up to a question word) that names no entity, value or concept, asks
        nothing (no question word) and has no aggregation, comparison or time, dropped when
        the rest names an entity or value (so "Moody's downgrades - which companies" stays
        whole: its rest has no constraint and the unknown words keep it from guessing)."""
        wh = set(triggers()["wh"]["tokens"])
        for _ in range(2):
            m = _LEAD_END.search(text, 1)  # one match per round; a lead is never empty
            if m is None:
                return text
            head, rest = (
                text[: m.start()],
                text[m.end() if m.group("cut") is not None else m.start() :],
            )
            htoks, hmentions = self.lexicon.match(head)
            if not htoks or any(t in wh for t in htoks) or _ASKS.search(head):
                return text
            if any(x.of("entity") or x.of("value") for x in hmentions):
                return text
            if any(x.of("property") for x in hmentions):
                return text  # "kindly confirm the currency of the bond which ...": it asks that
            if any(x.of("concept") for x in hmentions) and (
                not _WH_FIRST.match(rest) or _RELATIVE.match(rest)
            ):
                return text  # "设定政策指标的机构中，有几个...", "the bond which is tracked by"
            u = units_parse(head, _EPOCH)
            if u.aggregation or u.comparisons or u.time is not None:
                return text
            if any(p.search(head) for p in _meaningful()):
                return text  # "On days when ...", "这五个交易日里": the lead is part of it
            _rt, rmentions = self.lexicon.match(rest)
            if not any(x.of("entity") or x.of("value") for x in rmentions):
                return text
            text = rest.lstrip()
        return text

    def two_part(self, text: str) -> str:
        """One question out of two parts: a count beside a list keeps the list; a yes/no
        part before a question keeps the question, about the first part's entities."""
        t = triggers().get("two_part", {})
        list_asks = [trigger_regex(p) for p in t.get("list_asks", [])]
        if any(a.search(text) for a in list_asks):
            for p in t.get("count_parts", []):
                cut = trigger_regex(p).sub(" ", text, count=1).strip()
                if cut != text and any(a.search(cut) for a in list_asks):
                    return cut
        parts = [x for x in _CLAUSE_BREAK.split(text) if x.strip()]
        yes_no = [trigger_regex(p) for p in t.get("yes_no", [])]
        if len(parts) < 2 or not any(y.search(parts[0]) for y in yes_no):
            return text
        later = next((i for i, x in enumerate(parts[1:], 1) if _ASKS.search(x)), None)
        if later is None or _ASKS.search(parts[0]):
            return text
        _toks, mentions = self.lexicon.match(parts[0])
        named = [m.text for m in mentions if m.of("entity")]
        if not named:
            return text
        rest = " ".join(parts[later:])
        for p in t.get("pronouns", []):
            rest = trigger_regex(p).sub(" ", rest)
        return " ".join([named[0], rest.strip()])  # the subject, not the value checked

    def _unclip(self, text: str) -> str:
        if self._clip_re is None or not _CJK.search(text):
            return text

        def unclip(m: re.Match[str]) -> str:
            a, b = m.start(), m.end()
            if a > 0 and not self._rare(text[a - 1 : a + 1]):
                return m.group()  # "其中银行": the first character ends a word before it
            if b < len(text) and (not self._rare(text[b - 1 : b + 1]) or text[b].isdigit()):
                return m.group()  # "中银行业", "中证500": the last one starts a word or a code
            return self.clipped[m.group()]

        return self._clip_re.sub(unclip, text)

    def respell(self, text: str) -> str:
        text = spoken().read(text)
        for pat, words in _phrases():
            text = pat.sub(words, text)
        text = self._unclip(text)
        text = self._pinyin_runs(text)
        return _ASCII_WORD.sub(lambda m: self._word(m.group()), text)
