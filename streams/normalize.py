"""Raw news, posts and filings -> one ``CleanDocument`` shape (pure functions).

Cleaning keeps what downstream needs: text without markup or control characters,
a language tag, tickers and cashtags found in the text, and a content hash for
dedupe. Entity canonicalization against the graph's alias dictionary happens in the
knowledge-graph layer; here entity hints from the source are kept and tickers added.
"""

from __future__ import annotations

import html
import re
import unicodedata

from core.records import (
    CleanDocument,
    DocKind,
    RawFiling,
    RawNews,
    RawSocialPost,
    content_hash,
    stable_id,
)

_TAG = re.compile(r"<[^>]{0,2000}>")
_WS = re.compile(r"[ \t\r\f\v]+")
_NL = re.compile(r"\n{3,}")
_CTRL = dict.fromkeys(c for c in range(32) if c not in (9, 10, 13))
# $AAPL, $BRK.B cashtags; A-share codes like 600519.SH / 000001.SZ / 600519 (6 digits)
_CASHTAG = re.compile(r"\$([A-Za-z]{1,6}(?:\.[A-Za-z]{1,2})?)\b")
# Digit runs first (the regex engine skips non-digits fast), boundaries checked after;
# a look-behind at every position cost ~10 us per document.
_DIGIT_RUN = re.compile(r"\d{6,}(?:\.(SH|SZ|BJ))?")
_CN_PREFIXES = ("60", "68", "00", "30")
_CJK = re.compile(r"[\u4e00-\u9fff\u3400-\u4dbf]")
_LETTER = re.compile(r"[^\W\d_]")


def clean_text(text: str) -> str:
    """Strip markup, unescape entities, normalize width/whitespace, drop control chars."""
    if "<" in text:
        text = _TAG.sub(" ", text)
    if "&" in text:
        text = html.unescape(text)
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)  # full-width -> ASCII etc.
    if not text.isprintable():
        text = text.translate(_CTRL)
    text = _WS.sub(" ", text)
    if "\n" not in text:
        return text.strip()
    text = _NL.sub("\n\n", text)
    return "\n".join(line.strip() for line in text.split("\n")).strip()


def detect_lang(text: str, hint: str | None = None) -> str:
    """'zh' when CJK characters are a notable share of the letters, else 'en'."""
    if hint:
        return hint.lower()
    sample = text[:2000]
    if not sample:
        return "und"
    if not _CJK.search(sample):
        return "en"  # the common case, without counting letters
    cjk = len(_CJK.findall(sample))
    letters = len(_LETTER.findall(sample))
    return "zh" if letters and cjk / letters > 0.2 else "en"


def find_tickers(text: str) -> list[str]:
    """Cashtags (upper-cased, without $) and A-share codes (with exchange suffix if given)."""
    found: dict[str, None] = {}
    if "$" in text:
        for m in _CASHTAG.finditer(text):
            found[m.group(1).upper()] = None
    for m in _DIGIT_RUN.finditer(text):
        start, code, exch = m.start(), m.group(0), m.group(1)
        if exch:
            code = code[: -len(exch) - 1]
        if len(code) != 6 or not code.startswith(_CN_PREFIXES):
            continue
        if start and text[start - 1] == ".":
            continue  # part of a decimal number
        found[f"{code}.{exch}" if exch else code] = None
    return list(found)


def _merge(*groups: list[str]) -> list[str]:
    out: dict[str, None] = {}
    for group in groups:
        for item in group:
            out[item] = None
    return list(out)


def normalize(raw: RawNews | RawSocialPost | RawFiling) -> CleanDocument:
    if isinstance(raw, RawNews):
        kind, title, body = DocKind.NEWS, clean_text(raw.title), clean_text(raw.body)
        text = f"{title}\n\n{body}" if body and title else (body or title)
        extra: dict[str, object] = {}
        hints = raw.entities
    elif isinstance(raw, RawSocialPost):
        kind, title, text = DocKind.SOCIAL, "", clean_text(raw.text)
        extra = {}
        hints = raw.entities
    else:
        kind, title, text = DocKind.FILING, clean_text(raw.title), clean_text(raw.text)
        extra = {
            "tables": [[[clean_text(c) for c in row] for row in t] for t in raw.tables],
            "form_type": raw.form_type,
        }
        hints = [raw.company]
    tickers = find_tickers(text)
    digest = content_hash(text)
    return CleanDocument(
        id=stable_id("doc", raw.id),
        source=raw.source,
        event_time=raw.event_time,
        ingest_time=raw.ingest_time,
        kind=kind,
        raw_id=raw.id,
        title=title,
        text=text,
        url=raw.url,
        lang=detect_lang(text, raw.lang),
        entities=_merge(hints, tickers),
        tickers=tickers,
        content_hash=digest,
        **extra,  # type: ignore[arg-type]
    )
