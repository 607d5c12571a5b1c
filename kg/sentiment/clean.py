"""Text preparation: Zhang et al.'s regex cleaning (3.3.2) and a cheap language check.

Headlines and tweets carry tickers (``$AAPL``, ``NASDAQ:AAPL``), URLs and symbols that
say nothing about sentiment and hurt retrieval, so the RAG query is built from the
cleaned text. The classifier sees only URL-free text (it was trained on that).
"""

from __future__ import annotations

import re

URL_RE = re.compile(r"(?:https?://|www\.)\S+", re.IGNORECASE)
CASHTAG_RE = re.compile(r"(?<![\w$])\$[A-Za-z][A-Za-z0-9.\-]{0,9}\b")
EXCHANGE_TICKER_RE = re.compile(
    r"\b(?:NYSE|NASDAQ|Nasdaq|AMEX|LSE|TSX|HKEX|SSE|SZSE|OTC)\s*:\s*[A-Z0-9.\-]{1,10}\b"
)
CN_CODE_RE = re.compile(r"[（(]?\b\d{6}\.(?:SH|SZ|BJ|sh|sz|bj)\b[)）]?")
MENTION_RE = re.compile(r"(?<!\w)@\w{1,30}")
SYMBOL_RE = re.compile(r"[#*|~^<>{}\[\]\\_=+•►▶→…]+")
SPACE_RE = re.compile(r"\s+")
CJK_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
LATIN_RE = re.compile(r"[A-Za-z]")
WORD_RE = re.compile(r"[a-z0-9]+(?:['.][a-z0-9]+)*|[\u3400-\u9fff]", re.IGNORECASE)


def strip_urls(text: str) -> str:
    return SPACE_RE.sub(" ", URL_RE.sub(" ", text)).strip()


def clean_for_query(text: str) -> str:
    """Remove URLs, tickers, cashtags, @mentions and stray symbols (Zhang et al., 3.3.2)."""
    for pattern in (URL_RE, EXCHANGE_TICKER_RE, CN_CODE_RE, CASHTAG_RE, MENTION_RE, SYMBOL_RE):
        text = pattern.sub(" ", text)
    text = re.sub(r"^\s*[-:–—,;]+\s*", "", SPACE_RE.sub(" ", text))
    return text.strip()


def tickers_in(text: str) -> list[str]:
    """Cashtags and exchange tickers, upper-cased and without ``$``, in order of appearance."""
    found = [m.group(0).lstrip("$").upper() for m in CASHTAG_RE.finditer(text)]
    found += [m.group(0).split(":")[-1].strip().upper() for m in EXCHANGE_TICKER_RE.finditer(text)]
    return list(dict.fromkeys(found))


def cjk_ratio(text: str) -> float:
    """Share of CJK characters among CJK + Latin letters (0 when there are none)."""
    cjk = len(CJK_RE.findall(text))
    latin = len(LATIN_RE.findall(text))
    return cjk / (cjk + latin / 4) if cjk or latin else 0.0  # ~4 Latin letters per word


def is_chinese(text: str, threshold: float = 0.3) -> bool:
    return cjk_ratio(text) >= threshold


def tokens(text: str) -> set[str]:
    """Lower-cased word tokens; each CJK character is a token (no segmenter needed)."""
    return {t.lower() for t in WORD_RE.findall(text)}
