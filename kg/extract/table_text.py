"""Tables that lost their grid in a PDF-to-text dump, rebuilt only where the count proves it.

10-K text extracted from PDFs (the market corpus) prints a table column by column: a
caption ("(In millions, except per share amounts)"), the row labels run together on one
or two lines, then each period's header ("2023") followed by that period's numbers. Such
a block is rebuilt into rows only when every period group holds exactly as many numbers
as there are labels; any other layout (numbers before their header, labels after the
numbers, counts that differ) is left alone and counted, because a guessed alignment
would attach numbers to the wrong line item.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import pairwise

from kg.extract.table_periods import FYE_PHRASE, parse_period, parse_span
from kg.extract.tables import CURRENCY_CELL, HOLDINGS_HEAD, HOLDINGS_PCT, parse_amount

MAX_SCAN_LINES = 40
MAX_LABEL_LINE = 400
_CAPTION = re.compile(
    r"^\(?\s*(?:\$|dollars|amounts)?\s*(?:in\s+)?(?:millions|thousands|billions)\b[^)]{0,120}\)?\s*$",
    re.I,
)
_CHANGE_HEAD = re.compile(
    r"^(?:%|percent(?:age)?)\s*change\b.{0,40}$|^change\s+\d{4}\s+vs\.?\s+\d{4}$", re.I
)
_JOINERS = {"and", "of", "the", "&", "for", "in", "on", "to", "per", "from", "by", "at", "a", "—"}
_TOKEN_AMOUNT = re.compile(r"^\$?\(?[\d,]+(?:\.\d+)?\)?%?$")


@dataclass
class FlatTable:
    start: int  # offset of the caption line in the text
    end: int
    caption: str
    rows: list[list[str]]


@dataclass
class FlatScan:
    tables: list[FlatTable]
    rejected: int = 0  # captioned blocks whose counts did not line up


def _number_tokens(line: str) -> list[str] | None:
    toks = [t for t in line.replace("$ ", "$").split() if t != "$"]
    if not toks or not all(_TOKEN_AMOUNT.match(t) and parse_amount(t) for t in toks):
        return None
    return toks


def split_labels(line: str) -> list[str]:
    """'Revenue Gross margin Operating income' -> ['Revenue', 'Gross margin', 'Operating income']:
    a new label starts at a capitalised word that does not follow a joining word."""
    labels: list[list[str]] = []
    prev = ""
    for tok in line.split():
        starts = tok[:1].isupper() and prev.lower() not in _JOINERS
        if starts or not labels:
            labels.append([tok])
        else:
            labels[-1].append(tok)
        prev = tok
    return [" ".join(words) for words in labels]


def _is_period_head(line: str) -> bool:
    if len(line) > 60:
        return False
    return bool(_CHANGE_HEAD.match(line)) or (
        (parse_period(line) is not None and _number_tokens(line) is None)
        or bool(re.fullmatch(r"(?:19|20)\d{2}", line))
    )


def scan(text: str) -> FlatScan:
    """Rebuild the captioned column-dump tables of ``text``."""
    lines: list[tuple[int, str]] = []
    pos = 0
    for raw in text.splitlines(keepends=True):
        if raw.strip():
            lines.append((pos, raw.strip()))
        pos += len(raw)
    out = FlatScan([])
    fye = FYE_PHRASE.search(text[:20_000])
    fye_note = f" (fiscal years ended {fye.group(1)} {fye.group(2)})" if fye else ""
    i = 0
    while i < len(lines):
        start, line = lines[i]
        if not (_CAPTION.match(line) and len(line) < 160):
            i += 1
            continue
        title = lines[i - 1][1] if i > 0 and len(lines[i - 1][1]) < 120 else ""
        table, j = _read_block(lines, i + 1)
        if table is None:
            out.rejected += 1
            i += 1
            continue
        caption = f"{title} {line}{fye_note}".strip()
        end = lines[j - 1][0] + len(lines[j - 1][1])
        out.tables.append(FlatTable(start, end, caption, table))
        i = j
    return out


_CONTEXT = re.compile(
    r"^(?:years?|fiscal years?|three months|six months|nine months)\s+ended\b.{0,40}$", re.I
)
_YEAR_LINE = re.compile(r"(?:fiscal\s+|FY\s*)?(?:19|20)\d{2}", re.I)


def _read_block(lines: list[tuple[int, str]], i: int) -> tuple[list[list[str]] | None, int]:
    label_lines: list[str] = []
    context: list[str] = []
    groups: list[tuple[str, list[str]]] = []
    j = i
    while j < len(lines) and j < i + MAX_SCAN_LINES:
        line = lines[j][1]
        nums = None if _YEAR_LINE.fullmatch(line) else _number_tokens(line)
        if nums is not None:
            if not groups:
                return None, j  # numbers before any period header: columns unknown
            groups[-1][1].extend(nums)
        elif line == "$":
            pass
        elif _CONTEXT.match(line) and parse_period(line) is None:
            context.append(line)  # "Years ended December 31," over the year headers
        elif _is_period_head(line):
            if not label_lines:
                return None, j  # headers before labels: another layout
            groups.append((" ".join([*context, line]), []))
        elif len(line) <= MAX_LABEL_LINE and re.search(r"[A-Za-z]", line) and not groups:
            label_lines.append(line)
        else:
            break
        j += 1
    if not groups or not label_lines:
        return None, j
    counts = {len(nums) for _, nums in groups}
    if len(counts) != 1:
        return None, j
    n = counts.pop()
    # one label per line, or the labels run together on a line: the count decides
    labels = label_lines if len(label_lines) == n else []
    if not labels:
        split = [lab for ln in label_lines for lab in split_labels(ln)]
        labels = split if len(split) == n else []
    if not labels:
        return None, j
    header = ["", *(head for head, _ in groups)]
    rows = [header] + [[label, *(nums[k] for _, nums in groups)] for k, label in enumerate(labels)]
    return rows, j


# -- space-aligned tables (10-K text, any document kind) ---------------------------------
# A plain-text table lines its columns up with runs of spaces: a header line whose cells
# name periods ("2024   2023   Change", "Fiscal 2025   % of net sales"), then rows of a
# label and amounts. A block is read as a table only when its header names a period and at
# least MIN_ALIGNED_ROWS rows hold MIN_ROW_AMOUNTS amounts each; prose (single spaces, long
# lines, sentences) never qualifies.
MIN_ALIGNED_ROWS = 2
MIN_ROW_AMOUNTS = 2
MAX_ALIGNED_LINE = 240
_GAP = re.compile(r"\S+(?: \S+)*")  # cells: words joined by single spaces
_DASH_CELL = re.compile(r"^(?:[—–\-−]+|n/?a|nm)$", re.I)
_COLUMN_WORDS = re.compile(r"\bchange\b|%|\bpercent|\bvariance\b|\bincrease\b|\bdecrease\b", re.I)
_CJK = re.compile(r"[\u3400-\u9fff]")


@dataclass
class _Span:
    start: int
    end: int
    text: str


def _cells(line: str) -> list[_Span]:
    """Cells of a line: text separated by two or more spaces; a lone currency sign joins
    the amount after it ("$   401")."""
    spans = [_Span(m.start(), m.end(), m.group()) for m in _GAP.finditer(line.expandtabs(8))]
    out: list[_Span] = []
    for s in spans:
        if out and CURRENCY_CELL.match(out[-1].text):
            out[-1] = _Span(out[-1].start, s.end, f"{out[-1].text}{s.text}")
        else:
            out.append(s)
    return out


def _is_amount(text: str) -> bool:
    return bool(_DASH_CELL.match(text)) or (
        parse_amount(text) is not None and not re.search(r"[A-Za-z]{2}", text)
    )


def _amount_row(cells: list[_Span]) -> tuple[str, list[_Span]] | None:
    """(label, amount cells) of a body row, or None."""
    if len(cells) < 2 or _is_amount(cells[0].text):
        return None
    label, rest = cells[0].text, cells[1:]
    if not all(_is_amount(c.text) for c in rest) or not re.search(r"[A-Za-z]", label):
        return None
    return label, rest


def _head_cells(cells: list[_Span]) -> bool:
    """A header line's column cells: each names a period or a column kind, none an amount."""
    texts = [c.text for c in cells]
    return bool(texts) and all(
        parse_period(t) is not None or _COLUMN_WORDS.search(t) or _YEAR_LINE.fullmatch(t)
        for t in texts
    )


def _span_head(line_cells: list[list[_Span]], k: int) -> bool:
    """A column line of words over rows whose labels are stretches of days (an issuer
    purchases table: "Period | Total Shares Purchased | Average Price Paid per Share" over
    "October 2024", "Nov. 3 - Nov. 30, 2024" ...): the periods are the rows."""
    cells = line_cells[k]
    if len(cells) < 3 or any(_is_amount(c.text) for c in cells):
        return False
    spans = 0
    for row in line_cells[k + 1 : k + 8]:
        got = _amount_row(row) if row else None
        if got and parse_span(got[0]) is not None:
            spans += 1
    return spans >= MIN_ALIGNED_ROWS


def _year_head(cells: list[_Span]) -> bool:
    """A column line of bare years after a label cell that is no row label ("(dollars in
    millions)   2025   2024", "   2025   2024"): consecutive years, each a cell of its own."""
    if len(cells) < 3 or not _SCALE_LABEL.search(cells[0].text):
        return False
    years = [c.text for c in cells[1:]]
    if not all(re.fullmatch(r"(?:19|20)\d{2}", y) for y in years):
        return False
    nums = [int(y) for y in years]
    return all(abs(a - b) == 1 for a, b in pairwise(nums))


_SCALE_LABEL = re.compile(r"^\(?.{0,20}\bin\s+(?:thousands|millions|billions)\b|^\(?\$", re.I)


def _under_columns(cells: list[_Span], cols: list[_Span]) -> bool:
    """A header line's continuation: words (no amount) each under a column, none in the
    label column ("% of" over "net sales")."""
    return bool(cells) and all(
        c.start >= cols[0].start - 4
        and re.search(r"[A-Za-z]", c.text) is not None
        and not _is_amount(c.text)
        and len(c.text) <= 40
        for c in cells
    )


def _nearest(cell: _Span, cols: list[_Span]) -> int:
    """The column a cell sits under: amounts are right-aligned, headers may be centred."""
    return min(
        range(len(cols)),
        key=lambda k: min(
            abs(cell.end - cols[k].end),
            abs((cell.start + cell.end) - (cols[k].start + cols[k].end)) // 2,
        ),
    )


def _under_section(label: str, heading: str) -> str:
    """An indented row under a heading that names the metric: "Net sales" over "Test &
    Measurement" -> "Net sales: Test & Measurement" (the row names a segment, not a metric),
    as the text says it; a total or a row that repeats the heading keeps its own label."""
    low = label.lower()
    if low.startswith("total") or heading.lower().rstrip(":") in low:
        return label
    return f"{heading.rstrip(':')}: {label}"


def scan_aligned(text: str) -> FlatScan:
    """The space-aligned tables of ``text`` as rows (header rows first), each captioned with
    the short line above it ("The following table presents ...:")."""
    out = FlatScan([])
    raw_lines = text.splitlines(keepends=True)
    offsets, pos = [], 0
    for raw in raw_lines:
        offsets.append(pos)
        pos += len(raw)
    lines = [r.rstrip("\r\n").expandtabs(8) for r in raw_lines]
    fye = FYE_PHRASE.search(text[:20_000])
    fye_note = f" (fiscal years ended {fye.group(1)} {fye.group(2)})" if fye else ""
    if not re.search(r"\S {2,}\S", text):
        return out  # no line with a column gap: no aligned table (the common case, cheap)
    cells = [_cells(line) if len(line) <= MAX_ALIGNED_LINE else [] for line in lines]
    i = 0
    while i < len(lines):
        table = _aligned_block(lines, cells, i) if cells[i] else None
        table = table or (_holdings_block(lines, cells, i) if cells[i] else None)
        if table is None:
            i += 1
            continue
        rows, first, j = table
        k = first - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        above = lines[k].strip() if k >= 0 and first - k <= 2 else ""
        caption = f"{above}{fye_note}".strip() if len(above) <= MAX_ALIGNED_LINE else fye_note
        end = offsets[j - 1] + len(lines[j - 1])
        out.tables.append(FlatTable(offsets[first], end, caption.strip(), rows))
        i = j
    return out


_PCT_ONLY = re.compile(r"^\d{1,3}(?:\.\d+)?\s?%$")


def _holdings_block(
    lines: list[str], line_cells: list[list[_Span]], i: int
) -> tuple[list[list[str]], int, int] | None:
    """A list of subsidiaries (Exhibit 21, "principal subsidiaries"): a header naming the
    entity and its ownership ("Name of Subsidiary | Jurisdiction | Percentage Owned"), then
    rows of a name, other words and a percentage last. Read as rows [name, %]."""
    head = line_cells[i]
    if len(head) < 2 or not HOLDINGS_HEAD.search(head[0].text):
        return None
    if not HOLDINGS_PCT.search(head[-1].text):
        return None
    rows: list[list[str]] = [[head[0].text, head[-1].text]]
    j = i + 1
    while j < len(lines) and line_cells[j]:
        cells = line_cells[j]
        if len(cells) < 2 or not _PCT_ONLY.match(cells[-1].text) or _is_amount(cells[0].text):
            break
        rows.append([cells[0].text, cells[-1].text.replace(" ", "")])
        j += 1
    if len(rows) - 1 < MIN_ALIGNED_ROWS:
        return None
    return rows, i, j


def _aligned_block(
    lines: list[str], line_cells: list[list[_Span]], i: int
) -> tuple[list[list[str]], int, int] | None:
    """A table whose header starts at line ``i``: (rows, first line, line after the end)."""
    # the column line (two cells or more): periods or column kinds right of an optional
    # label cell; up to two group lines ("Year Ended December 31,") above it
    head_at = None
    for k in range(i, min(i + 3, len(lines))):
        cells = line_cells[k]
        if not cells or _CJK.search(lines[k]) or (len(cells) == 1 and len(cells[0].text) > 80):
            return None
        if _year_head(cells) or _span_head(line_cells, k):
            head_at = k  # bare years over the columns, or the rows are the periods
            break
        if len(cells) > 1 and _amount_row(cells) is None:
            data = cells[1:] if not _head_cells(cells[:1]) else cells
            if _head_cells(data) and any(parse_period(c.text) for c in data):
                head_at = k
                break
        elif len(cells) > 1:
            return None  # amounts before any header: not a table's start
    if head_at is None:
        return None
    head_cells = line_cells[head_at]
    label_head = ""
    if len(head_cells) > 1 and not _head_cells(head_cells[:1]):
        label_head, cols = head_cells[0].text, head_cells[1:]
    else:
        cols = head_cells
    width = len(cols) + 1
    header: list[list[str]] = []
    for k in range(i, head_at):  # group lines above ("Year Ended December 31,")
        row = [""] * width
        groups = []
        for c in line_cells[k]:
            if c.end < cols[0].start - 1:
                row[0] = f"{row[0]} {c.text}".strip()
            else:
                groups.append(c)
        if len(groups) == 1:
            row[1] = groups[0].text  # one label over every column
        if len(groups) > 1:  # "Three Months Ended" / "Year Ended", each over its columns
            for n, col in enumerate(cols, start=1):
                over = [g for g in groups if g.start <= col.end]
                row[n] = over[-1].text if over else ""
        header.append(row)
    column_line = [label_head, *(c.text for c in cols)]
    header.append(column_line)
    j = head_at + 1
    # a header of two lines ("% of" over "net sales", "Total Number of" over "Shares
    # Purchased"): words only, under the columns, read into the column's own cell
    while j < min(head_at + 3, len(lines)) and _under_columns(line_cells[j], cols):
        for c in line_cells[j]:
            n = _nearest(c, cols) + 1
            column_line[n] = f"{column_line[n]} {c.text}".strip()
        j += 1
    body: list[list[str]] = []
    amount_rows = 0
    section: tuple[int, str] | None = None  # (indent, heading) of the rows indented under it
    while j < len(lines):
        line = lines[j]
        cells = line_cells[j]
        if not cells or _CJK.search(line):
            break
        got = _amount_row(cells)
        if got is None:
            if len(cells) == 1 and len(cells[0].text) <= 80 and not cells[0].text.endswith("."):
                body.append([cells[0].text] + [""] * (width - 1))  # a section heading
                section = (cells[0].start, cells[0].text)
                j += 1
                continue
            break
        label, amounts = got
        if section and cells[0].start > section[0]:
            label = _under_section(label, section[1])
        elif section:
            section = None
        row = [label] + [""] * (width - 1)
        if len(amounts) == len(cols):
            slots = list(range(len(cols)))
        else:
            slots = [_nearest(a, cols) for a in amounts]
            if len(set(slots)) != len(slots) or len(amounts) > len(cols):
                break  # amounts that do not line up under the columns: stop the table
        for n, a in zip(slots, amounts, strict=True):
            row[n + 1] = a.text
        amount_rows += len(amounts) >= MIN_ROW_AMOUNTS
        body.append(row)
        j += 1
    while body and not any(body[-1][1:]):
        body.pop()
        j -= 1
    if amount_rows < MIN_ALIGNED_ROWS:
        return None
    return header + body, i, j
