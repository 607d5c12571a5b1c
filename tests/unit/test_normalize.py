from __future__ import annotations

from core.records import DocKind, RawFiling, RawNews, RawSocialPost
from streams.normalize import clean_text, detect_lang, find_tickers, normalize

T = "2026-11-20T08:00:00Z"


def test_clean_text_strips_markup_entities_and_controls() -> None:
    assert (
        clean_text("<p>Yields&nbsp;fall &amp; <b>bonds</b> rally</p>\x00\x07")
        == "Yields fall & bonds rally"
    )
    assert clean_text("ＡＢＣ１２３") == "ABC123"  # full-width folded by NFKC
    assert clean_text("a\n\n\n\n\nb") == "a\n\nb"


def test_detect_lang() -> None:
    assert detect_lang("10年期国债收益率下行") == "zh"
    assert detect_lang("Treasury yields climb") == "en"
    assert detect_lang("") == "und"
    assert detect_lang("whatever", hint="ZH") == "zh"


def test_find_tickers() -> None:
    text = "$AAPL and $brk.b up; 茅台600519.SH and 000001 move; not 1234567 nor $1234"
    assert find_tickers(text) == ["AAPL", "BRK.B", "600519.SH", "000001"]


def test_normalize_news_keeps_hints_and_adds_tickers() -> None:
    raw = RawNews(
        source="feed",
        title="<b>$NVDA</b> beats",
        body="Strong quarter",
        event_time=T,
        entities=["NVDA"],
    )
    doc = normalize(raw)
    assert doc.kind == DocKind.NEWS
    assert doc.text == "$NVDA beats\n\nStrong quarter"
    assert doc.entities == ["NVDA"]
    assert doc.raw_id == raw.id
    assert doc.event_time == raw.event_time
    assert normalize(raw).id == doc.id  # deterministic


def test_normalize_social_and_filing() -> None:
    post = normalize(RawSocialPost(source="x", text="Selling $TSLA 特斯拉", event_time=T))
    assert post.kind == DocKind.SOCIAL and post.tickers == ["TSLA"]
    filing = normalize(
        RawFiling(
            source="edgar",
            company="AAPL",
            form_type="8-K",
            text="Revenue rose.",
            tables=[[["<b>Revenue</b>", "94.9"]]],
            event_time=T,
        )
    )
    assert filing.kind == DocKind.FILING
    assert filing.form_type == "8-K"
    assert filing.tables == [[["Revenue", "94.9"]]]
    assert filing.entities == ["AAPL"]
