"""Chunking: sections kept as metadata, tables atomic, token cap, offsets, CJK; fuzzed."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kg.extract.chunking import approx_tokens, chunk_text, detect_lang

FILING = """ITEM 1. BUSINESS

Acme Corp makes robots. We sell them in Brazil.

ITEM 1A. RISK FACTORS

Cyberattacks could adversely affect our business.

| Line item | 2023 | 2022 |
|---|---|---|
| Revenue | 4,100 | 3,650 |
| Net income | 610 | 540 |

ITEM 7. MANAGEMENT'S DISCUSSION

Revenue increased 12% to $4.1 billion.
"""


def test_sections_and_tables() -> None:
    chunks = chunk_text(FILING, "d1", max_tokens=200)
    sections = [c.section for c in chunks]
    assert sections[0].startswith("Item 1.") and any(s.startswith("Item 1A") for s in sections)
    tables = [c for c in chunks if c.kind == "table"]
    assert len(tables) == 1 and tables[0].text.count("\n") == 3  # 4 rows, whole
    assert tables[0].section.startswith("Item 1A")
    for c in chunks:
        assert FILING[c.start : c.end] == c.text  # spans are document offsets


def test_token_cap_and_sentence_cuts() -> None:
    text = " ".join(f"Sentence number {i} says something about yields." for i in range(400))
    chunks = chunk_text(text, "d", max_tokens=64)
    assert len(chunks) > 10
    assert all(approx_tokens(c.text) <= 64 for c in chunks)
    assert all(c.text.rstrip().endswith(".") for c in chunks[:-1])


def test_chinese() -> None:
    text = "央行开展2000亿元7天期逆回购操作。" * 200
    chunks = chunk_text(text, "zh", max_tokens=100)
    assert detect_lang(text) == "zh" and all(c.lang == "zh" for c in chunks)
    assert all(approx_tokens(c.text) <= 100 for c in chunks)
    assert "".join(c.text for c in chunks) == text


_TEXTS = st.text(alphabet=st.sampled_from(list("ab .。\n|-中1\x00")), max_size=120) | st.text(
    max_size=60
)


# 100 examples x 100 texts = 10,000 generated documents (less per-example overhead).
@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(_TEXTS, min_size=100, max_size=100), st.integers(min_value=8, max_value=32))
def test_chunker_fuzz(texts: list[str], cap: int) -> None:
    for text in texts:
        chunks = chunk_text(text, "f", max_tokens=cap)
        clean = text.replace("\x00", " ")
        for c in chunks:
            assert clean[c.start : c.end] == c.text and c.text.strip()
            if c.kind == "text":
                assert approx_tokens(c.text) <= cap
