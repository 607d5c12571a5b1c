"""Loose matching of entity names, as people write them: casefolded, parenthesised
defined terms, the dots of initials, punctuation, possessive 's, a leading "the" and
trailing corporate suffixes removed; then equal, one containing the other as a token
sequence, or (not for Chinese) token Jaccard >= 0.5. Used where a name must be recognised
again (the relation classifier's candidates, gold scoring)."""

from __future__ import annotations

import re

_PAREN = re.compile(r"\([^)]*\)")
_POSS = re.compile(r"(?:'s|’s|\bs)\b(?=\s|$)")
_PUNCT = re.compile(r"[^\w\s]|_")
_SUFFIX = re.compile(
    r"(?:\s+(?:inc|incorporated|corp|corporation|co|company|companies|ltd|limited|llc|lp|l\s*p|"
    r"plc|sa|ag|nv|n\s*v|group|holdings?))+$"
)
_LEAD = re.compile(r"^(?:the)\s+")
# Dotted initials are one word: "F.N.B." is the bank its own ticker line calls "FNB".
_INITIALS = re.compile(r"\b(?:[^\W\d_]\.){2,}")


def normalise(name: str) -> str:
    s = name.casefold().replace("’", "'")
    s = _INITIALS.sub(lambda m: m.group(0).replace(".", ""), s)
    s = _PAREN.sub(" ", s)
    s = re.sub(r"'s\b", " ", s)
    s = _PUNCT.sub(" ", s)
    s = " ".join(s.split())
    s = _LEAD.sub("", s)
    for _ in range(3):
        s2 = _SUFFIX.sub("", s).strip()
        if s2 == s or not s2:
            break
        s = s2
    return s


def _contains(big: list[str], small: list[str]) -> bool:
    n = len(small)
    return n > 0 and any(big[i : i + n] == small for i in range(len(big) - n + 1))


_CJK = re.compile(r"[\u3400-\u9fff]")
_CJK_TOKENS = re.compile(r"[\u3400-\u9fff]|[^\u3400-\u9fff\s]+")


def _tokens(name: str) -> list[str]:
    """Words; Chinese (no spaces) by character, Latin/digit runs inside it as one token."""
    s = normalise(name)
    return _CJK_TOKENS.findall(s) if _CJK.search(s) else s.split()


def names_match(pred: str, gold: str) -> bool:
    """Equal, one containing the other as a token sequence, or (not for Chinese, where a
    shared character says little) token Jaccard >= 0.5."""
    a, b = _tokens(pred), _tokens(gold)
    if not a or not b:
        return False
    if a == b or _contains(a, b) or _contains(b, a):
        return True
    if _CJK.search(pred + gold):
        return False
    sa, sb = set(a), set(b)
    return len(sa & sb) / len(sa | sb) >= 0.5
