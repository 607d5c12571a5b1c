"""Table rows of financial statements -> metric facts of the filer (LLM-free).

Markdown pipe tables, HTML tables and the ``tables`` a filing record carries are read
into rows of cells. The first row is the header when it holds no numbers (its cells
name the periods); a headerless table still yields its numbers, with the column index
as the period. Each (line item, period, value) becomes ``filer DISCLOSES FinMetric``
with the numbers in properties and the period's start as the fact's valid time, so two
periods of one line item stay two facts in the graph.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from datetime import UTC, datetime

from kg.extract.types import Candidate, Component, DocContext

MAX_ROWS = 200
MAX_NAME_WORDS = 5
_NUMBER = re.compile(r"^\(?-?\$?\s*\(?\d[\d,]*(?:\.\d+)?\)?\s*(?:%|x|bps?)?\)?$")
_YEAR = re.compile(r"\b(19\d{2}|20\d{2}|21\d{2})\b")
_QUARTER = re.compile(r"\bQ([1-4])\b|\b([1-4])Q\b|第([一二三四1-4])季度", re.I)
_UNIT = re.compile(r"in\s+(thousands|millions|billions)|(千元|万元|亿元|百万元)", re.I)
_SEP_ROW = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_CELL_TAG = re.compile(r"<t[dh][^>]*>(.*?)</t[dh]>", re.I | re.S)
_ROW_TAG = re.compile(r"<tr[^>]*>(.*?)</tr>", re.I | re.S)
_TAGS = re.compile(r"<[^>]+>")
_ZH_Q = {"一": 1, "二": 2, "三": 3, "四": 4}


@dataclass(frozen=True, slots=True)
class Cell:
    text: str
    start: int  # offset in the chunk text, -1 when the table came as data


def parse_markdown(text: str) -> list[list[Cell]]:
    rows: list[list[Cell]] = []
    pos = 0
    for line in text.splitlines(keepends=True):
        start = pos
        pos += len(line)
        if "|" not in line or _SEP_ROW.match(line):
            continue
        cells: list[Cell] = []
        for m in re.finditer(r"[^|]+", line.rstrip("\n")):
            raw = m.group(0)
            stripped = raw.strip()
            lead = len(raw) - len(raw.lstrip())
            cells.append(Cell(stripped, start + m.start() + lead if stripped else -1))
        if line.strip().startswith("|") and cells and not cells[0].text:
            cells = cells[1:]
        if any(c.text for c in cells):
            rows.append(cells)
    return rows[:MAX_ROWS]


def parse_html(text: str) -> list[list[Cell]]:
    rows: list[list[Cell]] = []
    for rm in _ROW_TAG.finditer(text):
        cells = []
        for cm in _CELL_TAG.finditer(rm.group(1)):
            inner = html.unescape(_TAGS.sub("", cm.group(1))).strip()
            cells.append(Cell(inner, rm.start(1) + cm.start(1) if inner else -1))
        if cells:
            rows.append(cells)
    return rows[:MAX_ROWS]


def from_data(rows: list[list[str]]) -> list[list[Cell]]:
    return [[Cell(str(c).strip(), -1) for c in row] for row in rows[:MAX_ROWS]]


def parse_number(text: str) -> float | None:
    """'$1,234.5' -> 1234.5; '(12)' -> -12 (accounting negative); '—' -> None."""
    t = text.strip()
    if not t or not _NUMBER.match(t):
        return None
    negative = (t.startswith("(") and t.endswith(")")) or "-" in t[:2]
    digits = re.sub(r"[^\d.]", "", t)
    try:
        value = float(digits)
    except ValueError:
        return None
    return -value if negative else value


_PERIOD_LABEL = re.compile(
    r"^(?:FY|Q[1-4]|[1-4]Q|H[12])?\s*'?(?:19|20|21)\d{2}(?:年.*)?$|^(?:FY|Q[1-4])\s*\d{2}$", re.I
)


def _is_label(text: str) -> bool:
    """A header cell: text, or a year/period ('2023', 'Q4 2022', 'FY23'), never an amount."""
    t = text.strip()
    return parse_number(t) is None or bool(_PERIOD_LABEL.match(t))


def period_start(label: str) -> datetime | None:
    """'2023' -> 2023-01-01; 'Q4 2022' -> 2022-10-01; '2024年第一季度' -> 2024-01-01."""
    y = _YEAR.search(label)
    if not y:
        return None
    year = int(y.group(1))
    month = 1
    q = _QUARTER.search(label)
    if q:
        raw = q.group(1) or q.group(2) or q.group(3)
        month = 3 * ((_ZH_Q.get(raw) or int(raw)) - 1) + 1
    return datetime(year, month, 1, tzinfo=UTC)


def _unit(context: str, cell: str) -> str:
    if "%" in cell:
        return "%"
    m = _UNIT.search(context)
    scale = (m.group(1) or m.group(2)).lower() if m else ""
    currency = "USD " if "$" in cell or "$" in context else ""
    return f"{currency}{scale}".strip()


def table_facts(
    rows: list[list[Cell]], ctx: DocContext, *, context: str = "", span: tuple[int, int] = (-1, -1)
) -> list[Candidate]:
    """Metric facts of ``ctx.main_entity`` from a parsed table (none without a filer)."""
    if not ctx.main_entity or len(rows) < 1:
        return []
    header: list[str] = []
    body = rows
    if rows and all(_is_label(c.text) for c in rows[0][1:]):
        header = [c.text for c in rows[0]]
        body = rows[1:]
    out: list[Candidate] = []
    for row in body:
        if len(row) < 2:
            continue
        item = row[0].text
        words = item.split()
        if not item or parse_number(item) is not None or not 0 < len(words) <= MAX_NAME_WORDS:
            continue
        if not re.search(r"[A-Za-z\u3400-\u9fff]", item):
            continue
        for col, cell in enumerate(row[1:], start=1):
            value = parse_number(cell.text)
            if value is None:
                continue
            period = header[col] if col < len(header) else ""
            start, end = span
            if row[0].start >= 0 and cell.start >= 0:
                start, end = row[0].start, cell.start + len(cell.text)
            props: dict[str, str | float] = {
                "value": value,
                "unit": _unit(context + " " + " ".join(header), cell.text),
                "period": period or f"column {col}",
                "raw": cell.text,
            }
            out.append(
                Candidate(
                    ctx.main_entity,
                    ctx.main_type,
                    "DISCLOSES",
                    item,
                    "FinMetric",
                    start,
                    end,
                    Component.TABLE,
                    "table_row",
                    period_start(period) if period else None,
                    props,
                    0.9,
                )
            )
    return out
