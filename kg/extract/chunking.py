"""Section-, paragraph- and table-aware chunking (FinReflectKG, 4.2: table-aware chunking).

A document becomes chunks that never split a table and never cross a filing section
(``Item 1A`` ...); the section title travels with the chunk as metadata. Sizes are in
approximate tokens (``approx_tokens``: words for Latin text, characters for CJK), so the
cap means the same thing for English and Chinese without loading a tokenizer. Every
chunk keeps its character span in the document, so evidence spans are document offsets.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from core.records import stable_id

DEFAULT_MAX_TOKENS = 2048

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_WORD = re.compile(r"[A-Za-z0-9]+(?:[.'’,-][A-Za-z0-9]+)*|[^\sA-Za-z0-9\u3400-\u9fff]")
# "ITEM 1A. RISK FACTORS", "Item 7. Management's Discussion ..." at the start of a line.
_SECTION = re.compile(
    r"^\s*(?:PART\s+[IV]+\s*[,.-]?\s*)?ITEM\s+(\d{1,2}[A-C]?)\b[.:]?\s*(.*)$", re.I
)
_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
_HTML_TABLE = re.compile(r"<table\b.*?</table>", re.I | re.S)
_SENT_END = re.compile(r"(?<=[.!?。！？；;])\s+|(?<=[。！？；])")


def approx_tokens(text: str) -> int:
    """Words + punctuation for Latin text, one per CJK character."""
    cjk = len(_CJK.findall(text))
    return cjk + len(_WORD.findall(_CJK.sub(" ", text)))


def detect_lang(text: str) -> str:
    """'zh' when CJK characters make up a fifth of the letters, else 'en'."""
    sample = text[:4000]
    cjk = len(_CJK.findall(sample))
    latin = sum(c.isascii() and c.isalpha() for c in sample)
    return "zh" if cjk and cjk * 5 >= cjk + latin else "en"


@dataclass(frozen=True, slots=True)
class Chunk:
    """A piece of one document; ``start``/``end`` are offsets in the document text."""

    doc_id: str
    index: int
    text: str
    start: int
    end: int
    kind: str = "text"  # text | table
    section: str = ""
    lang: str = "en"
    meta: dict[str, str] = field(default_factory=dict, compare=False, hash=False)

    @property
    def id(self) -> str:
        return f"{self.doc_id}#c{self.index}"

    @property
    def tokens(self) -> int:
        return approx_tokens(self.text)


@dataclass(slots=True)
class _Block:
    text: str
    start: int
    kind: str  # text | table | heading
    section: str


def _blocks(text: str) -> list[_Block]:
    """Paragraphs (blank-line separated), table runs and section headings, with offsets."""
    out: list[_Block] = []
    section = ""
    html = [(m.start(), m.end()) for m in _HTML_TABLE.finditer(text)]
    pos = 0
    lines = text.splitlines(keepends=True)
    para: list[str] = []
    para_start = 0
    table: list[str] = []
    table_start = 0

    def flush_para() -> None:
        nonlocal para
        body = "".join(para)
        if body.strip():
            lead = len(body) - len(body.lstrip())
            out.append(_Block(body.strip(), para_start + lead, "text", section))
        para = []

    def flush_table() -> None:
        nonlocal table
        body = "".join(table)
        if body.strip():
            out.append(_Block(body.rstrip(), table_start, "table", section))
        table = []

    for line in lines:
        start = pos
        pos += len(line)
        in_html = any(a <= start < b for a, b in html)
        if _TABLE_ROW.match(line) or (in_html and line.strip()):
            flush_para()
            if not table:
                table_start = start
            table.append(line)
            continue
        if table:
            flush_table()
        m = _SECTION.match(line)
        if m and len(line) < 200:
            flush_para()
            section = f"Item {m.group(1).upper()}" + (
                f". {m.group(2).strip()}" if m.group(2).strip() else ""
            )
            para_start = start
            para = [line]
            continue
        if not line.strip():
            flush_para()
            para_start = pos
            continue
        if not para:
            para_start = start
        para.append(line)
    flush_table()
    flush_para()
    return out


def _split_long(block: _Block, max_tokens: int) -> list[tuple[str, int]]:
    """A paragraph over the cap, cut at sentence ends (hard cut if one sentence is)."""
    pieces: list[tuple[str, int]] = []
    cur_start, cur_end, cur_tokens = 0, 0, 0
    text = block.text
    bounds = [m.end() for m in _SENT_END.finditer(text)] + [len(text)]
    for end in bounds:
        if end <= cur_end:
            continue
        # Token counts add up across sentence bounds (no token spans one), so the piece's
        # count is kept incrementally: recounting it per sentence was quadratic (minutes
        # for a 5 MB paragraph).
        seg_tokens = approx_tokens(text[cur_end:end])
        if cur_tokens + seg_tokens > max_tokens and cur_end > cur_start:
            pieces.append((text[cur_start:cur_end], block.start + cur_start))
            cur_start, cur_tokens = cur_end, 0
        cur_end = end
        cur_tokens += seg_tokens
        while cur_tokens > max_tokens:
            cut = _hard_cut(text, cur_start, cur_end, max_tokens)
            pieces.append((text[cur_start:cut], block.start + cur_start))
            cur_start = cut
            cur_tokens = approx_tokens(text[cur_start:cur_end])
    if text[cur_start:].strip():
        pieces.append((text[cur_start:], block.start + cur_start))
    return [(p, s) for p, s in pieces if p.strip()]


def _hard_cut(text: str, start: int, end: int, max_tokens: int) -> int:
    lo, hi = start + 1, end
    while lo < hi:  # largest cut with <= max_tokens tokens
        mid = (lo + hi + 1) // 2
        if approx_tokens(text[start:mid]) <= max_tokens:
            lo = mid
        else:
            hi = mid - 1
    return max(lo, start + 1)


def chunk_text(
    text: str,
    doc_id: str = "doc",
    *,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    lang: str | None = None,
) -> list[Chunk]:
    """Split ``text`` into chunks of at most ``max_tokens`` (tables stay whole)."""
    if max_tokens < 8:
        raise ValueError("max_tokens must be >= 8")
    text = text.replace("\x00", " ")
    lang = lang or detect_lang(text)
    chunks: list[Chunk] = []
    buf: list[_Block] = []
    buf_tokens = 0

    def emit(body: str, start: int, kind: str, section: str) -> None:
        chunks.append(
            Chunk(doc_id, len(chunks), body, start, start + len(body), kind, section, lang)
        )

    def flush() -> None:
        nonlocal buf, buf_tokens
        if buf:
            start = buf[0].start
            end = buf[-1].start + len(buf[-1].text)
            emit(text[start:end], start, "text", buf[0].section)
        buf, buf_tokens = [], 0

    for block in _blocks(text):
        n = approx_tokens(block.text)
        if block.kind == "table":
            flush()
            emit(block.text, block.start, "table", block.section)  # atomic, whatever its size
            continue
        if buf and (block.section != buf[0].section or buf_tokens + n > max_tokens):
            flush()
        if n > max_tokens:
            flush()
            for piece, start in _split_long(block, max_tokens):
                emit(piece, start, "text", block.section)
            continue
        buf.append(block)
        buf_tokens += n
    flush()
    return chunks


def chunk_key(chunk: Chunk, prompt_version: str) -> str:
    """What "already done" means: same text, same prompt version."""
    return stable_id("chunk", chunk.text, prompt_version)
