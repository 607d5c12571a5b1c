"""A filing's HTML tables read by their structure, and their inline XBRL tags.

EDGAR filings lay a table out on a grid: a value column is two to four physical cells
("$", the number, ")" or "%"), a header cell spans them (``colspan``), a group label
("Year Ended December 31,") spans every period under it, and the period row sits under
it. Read as a grid, a number's column is the physical column its cell ends on, and its
header is the cell of each header row that covers that column: the alignment is the
markup's, not a guess from cell counts. A logical table (one cell per value column, the
header text of every header row repeated over the columns it spans) is then read by
``tables.read_frame`` like any other table, so the periods, column kinds, scale and
units are the same code's.

The same tables arrive flattened to text (the pipe-separated rows HTML-to-text tools
write: empty cells gone, so a header row has fewer cells than its value rows, "$" and "%"
in cells of their own, the period row apart from its "Fiscal" row); ``read_flat``
rebuilds the same logical table from the cell counts, where they say it unambiguously
(``flatten`` writes that form from the HTML, for the check that both give the same facts).

Inline XBRL: ``ix:nonFraction`` tags carry the concept, context (period, dimensions),
scale and sign of a number; ``Filing.facts`` lists them, ``Cell.tag`` keeps the one in a
table cell (the authority a table value is checked against: ``evaluation/scorers/extract_xbrl.py``).
edgartools (MIT) reads the same, but brings pandas, pyarrow, rich and a dozen more
packages for what lxml, already a dependency of the connectors, does here.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import date

import lxml.etree
import lxml.html

from kg.extract import tables as _tables
from kg.extract.tables import MAX_COLS, MAX_ROWS, Cell, TableRead, frame_of, read_frame
from kg.extract.types import DocContext

_WS = re.compile(r"\s+")
_SIGN_ONLY = re.compile(r"^(?:US\$|\$|€|£|¥|RMB)$")
_FOOTNOTE = re.compile(r"^\((?:\d|[a-z])\)$|^[*†‡]+$")
_AFTER = re.compile(r"^(?:%|\)|\)%|%\)|pts?\.?|bps?)$", re.I)
_ENDS_NUMBER = re.compile(r"(?:\d\s*\)?|^[—–-])$")  # "12", "(9.0)", "( 9.0 )", "—" before "%"
_NOTE_AFTER = frozenset("0123456789—–")  # "68,303,017 | (2)", "— | (1)": footnote markers
_HIDDEN = ("script", "style", "head", "title", "ix:header")
_BLOCK = {"p", "div", "br", "li", "h1", "h2", "h3", "h4", "h5", "h6", "tr"}
MAX_CONTEXT_LINES = 4


@dataclass(frozen=True, slots=True)
class IxFact:
    """One ``ix:nonFraction``: its concept, context and value in base units."""

    concept: str
    context: str
    unit: str
    value: float | None  # None: nil
    decimals: str = ""


@dataclass(frozen=True, slots=True)
class IxContext:
    end: date | None
    start: date | None  # None: an instant
    dims: tuple[str, ...] = ()


@dataclass(slots=True)
class GridCell:
    text: str
    col: int  # first physical column
    span: int
    tag: IxFact | None = None

    @property
    def last(self) -> int:
        return self.col + self.span - 1


@dataclass(slots=True)
class HtmlTable:
    index: int
    rows: list[list[GridCell]]
    context: str  # the short lines just above the table (title, "in millions")


@dataclass(slots=True)
class Filing:
    text: str
    tables: list[HtmlTable] = field(default_factory=list)
    facts: list[IxFact] = field(default_factory=list)
    contexts: dict[str, IxContext] = field(default_factory=dict)
    fiscal: str = ""  # "(fiscal years ended January 31)" from the cover page
    report_end: date | None = None  # "For the fiscal year ended February 1, 2025"


@dataclass(slots=True)
class Logical:
    """One cell per value column: ``header`` rows and ``body`` rows of ``width`` cells,
    ``tags`` the XBRL tag of a body cell by (row, column)."""

    header: list[list[str]]
    body: list[list[Cell]]
    tags: dict[tuple[int, int], IxFact] = field(default_factory=dict)
    dropped: Counter[str] = field(default_factory=Counter)


# -- the filing ----------------------------------------------------------------------
def _tag(el: lxml.etree._Element) -> str:
    t = el.tag if isinstance(el.tag, str) else ""
    return t.split("}")[-1].lower() if "}" in t else t.lower()


def _text(el: lxml.etree._Element) -> str:
    return _WS.sub(" ", " ".join(el.itertext())).replace("\xa0", " ").strip()


def _date(s: str) -> date | None:
    try:
        return date.fromisoformat(s.strip()[:10])
    except ValueError:
        return None


def _ix_value(el: lxml.etree._Element) -> float | None:
    if (el.get("xsi:nil") or el.get("{http://www.w3.org/2001/XMLSchema-instance}nil")) == "true":
        return None
    raw = _text(el)
    fmt = (el.get("format") or "").lower()
    if "zero" in fmt or raw in ("—", "-", "–"):
        num = 0.0
    else:
        digits = raw.replace(",", "").replace(" ", "")
        if "comma-decimal" in fmt or "numcommadecimal" in fmt:
            digits = raw.replace(".", "").replace(" ", "").replace(",", ".")
        try:
            num = float(digits)
        except ValueError:
            return None
    try:
        num *= 10 ** int(el.get("scale") or 0)
    except ValueError:
        return None
    return -num if el.get("sign") == "-" else num


def read_filing(source: str | bytes) -> Filing:
    """Visible text, tables as grids, and the inline XBRL facts and contexts of a filing."""
    if isinstance(source, bytes):
        source = source.decode("utf-8", "replace")
    source = re.sub(r"^\s*<\?xml[^>]*\?>", "", source)
    try:
        root = lxml.html.fromstring(source)
    except (lxml.etree.ParserError, ValueError):
        return Filing("")
    out = Filing("")
    for el in root.iter():
        t = _tag(el)
        if t == "xbrli:context" and el.get("id"):
            start = end = None
            dims: list[str] = []
            for sub in el.iter():
                st = _tag(sub)
                if st in ("xbrli:startdate",):
                    start = _date(_text(sub))
                elif st in ("xbrli:enddate", "xbrli:instant"):
                    end = _date(_text(sub))
                elif st.startswith("xbrldi:"):
                    dims.append(f"{sub.get('dimension')}={_text(sub)}")
            out.contexts[el.get("id") or ""] = IxContext(end, start, tuple(dims))
        elif t == "ix:nonfraction":
            out.facts.append(_fact(el))
    hidden = [
        el
        for el in root.iter()
        if isinstance(el.tag, str)
        and (
            _tag(el) in _HIDDEN
            or "display:none" in (el.get("style") or "").replace(" ", "").lower()
        )
    ]
    for el in hidden:
        if el.getparent() is not None:
            el.drop_tree()
    parts: list[str] = []
    after = [0]  # index in ``parts`` where the text after the last table begins

    def walk(el: lxml.etree._Element) -> None:
        tag = _tag(el)
        if tag == "table":
            grid = _grid(el)
            if grid:
                above = "".join(parts[max(after[0], len(parts) - 300) :])[-2000:]
                lines = [
                    " ".join(ln.split())
                    for ln in above.splitlines()
                    if ln.strip() and " | " not in ln  # not the rows of a table above
                ]
                # a long line is the paragraph that ends "... as follows (in millions):"
                ctx = " / ".join(ln[-160:] for ln in lines[-MAX_CONTEXT_LINES:])
                out.tables.append(HtmlTable(len(out.tables), grid, ctx))
                parts.append("\n" + "\n".join(_flat_row(r) for r in grid) + "\n")
                after[0] = len(parts)
            if el.tail:
                parts.append(el.tail)
            return
        if el.text and isinstance(el.tag, str):
            parts.append(el.text)
        for child in el:
            walk(child)
        if tag in _BLOCK:
            parts.append("\n")
        if el.tail:
            parts.append(el.tail)

    walk(root)
    text = re.sub(r"[ \t\xa0]+", " ", "".join(parts))
    out.text = re.sub(r"\n\s*\n+", "\n\n", text).strip()
    out.fiscal = _tables.fiscal_note("", out.text)
    out.report_end = _tables.report_end(out.text)
    return out


def _fact(el: lxml.etree._Element) -> IxFact:
    return IxFact(
        el.get("name") or "",
        el.get("contextref") or el.get("contextRef") or "",
        el.get("unitref") or el.get("unitRef") or "",
        _ix_value(el),
        el.get("decimals") or "",
    )


def _grid(table: lxml.etree._Element) -> list[list[GridCell]]:
    rows: list[list[GridCell]] = []
    carry: dict[int, int] = {}  # physical column -> rows still covered by a rowspan above
    for tr in table.iter("tr"):
        row: list[GridCell] = []
        col = 0
        for td in tr:
            if _tag(td) not in ("td", "th"):
                continue
            while carry.get(col, 0) > 0:
                carry[col] -= 1
                col += 1
            try:
                span = max(1, min(int(td.get("colspan") or 1), MAX_COLS * 4))
                rspan = max(1, min(int(td.get("rowspan") or 1), 20))
            except ValueError:
                span, rspan = 1, 1
            text = _text(td)
            tags = [x for x in td.iter() if _tag(x) == "ix:nonfraction"]
            if text:
                row.append(GridCell(text, col, span, _fact(tags[0]) if len(tags) == 1 else None))
            if rspan > 1:
                for c in range(col, col + span):
                    carry[c] = rspan - 1
            col += span
        if row:
            rows.append(row)
        if len(rows) >= MAX_ROWS:
            break
    return rows


def _flat_row(row: list[GridCell]) -> str:
    return " | ".join(c.text.replace("|", "/") for c in row)


def flatten(table: HtmlTable) -> str:
    """The table as HTML-to-text tools write it: one line a row, the non-empty cells
    between pipes (spans and empty cells gone, "$" and "%" in cells of their own)."""
    return "\n".join(_flat_row(r) for r in table.rows)


# -- the logical table ---------------------------------------------------------------
def _glue(row: list[GridCell], *, notes: bool = False) -> list[tuple[GridCell, str]]:
    """(number cell, its text with the "$" before and the ")" or "%" after it); other
    cells as themselves. A footnote marker after a number ("(2)") is dropped unless
    ``notes``."""
    out: list[tuple[GridCell, str]] = []
    pending = ""
    for i, c in enumerate(row):
        t = c.text
        if _SIGN_ONLY.match(t):
            pending = t
            continue
        pct_next = i + 1 < len(row) and row[i + 1].text.startswith("%")
        note = out and _FOOTNOTE.match(t) and out[-1][1] and out[-1][1][-1] in _NOTE_AFTER
        if note and not pct_next and not notes:
            continue  # "68,303,017 | (2)": a footnote marker ("(8) | %" is a change)
        prev_t = out[-1][1] if out else ""
        if (
            _AFTER.match(t)
            and prev_t
            and (prev_t[-1].isdigit() or (t[0] != ")" and _ENDS_NUMBER.search(prev_t)))
        ):
            prev, ptext = out[-1]
            out[-1] = (prev, ptext + t)
            continue
        out.append((c, f"{pending}{t}" if pending else t))
        pending = ""
    return out


def _is_amount(text: str) -> bool:
    return _tables.parse_amount(text) is not None


def _label_limit(rows: list[list[GridCell]]) -> int:
    """The last physical column of the label cells: the first column of any number."""
    firsts = []
    for r in rows:
        for c, t in _glue(r)[1:]:
            if _is_amount(t):
                firsts.append(c.col)
                break
    return min(firsts) if firsts else 1


CELL_ID = 10_000  # ``logical(ids=True)``: a body cell's start is row * CELL_ID + column * 100


def cell_of(cand_end: int) -> tuple[int, int]:
    """(body row, column) of a candidate read from ``logical(table, ids=True)``."""
    return cand_end // CELL_ID, (cand_end % CELL_ID) // 100


def logical(table: HtmlTable, *, ids: bool = False) -> Logical | None:
    """The grid as one label column and one cell per value column, or None when it holds
    no amounts. Header rows are the rows above the first row with an amount; a row of
    period text inside the body heads the rows under it (kept in place as a header row
    of the logical body, which ``read_frame`` re-reads). ``ids``: body cells start at
    ``row * CELL_ID + column * 100``, so that a fact says its cell (``cell_of``)."""
    rows = table.rows
    glued = [_glue(r) for r in rows]
    first_body = next(
        (
            i
            for i, g in enumerate(glued)
            if any(_body_value(t) for c, t in g if c.col > 0) and g and not _is_amount(g[0][1])
        ),
        None,
    )
    if first_body is None:
        return None
    limit = _label_limit(rows[first_body:])
    # value columns: the physical column each amount ends on
    ends: Counter[int] = Counter()
    for g in glued[first_body:]:
        for c, t in g:
            if c.col >= limit and _is_amount(t):
                ends[c.last] += 1
    if not ends:
        return None
    # header cells as glued ("33 - 36 | %" is one cell), as the flattened reading sees them
    header_rows = [[GridCell(t, c.col, c.span) for c, t in g] for g in glued[:first_body]]

    def cover(row: list[GridCell], col: int) -> GridCell | None:
        return next((h for h in row if h.col <= col <= h.last), None)

    def key(col: int, heads: list[list[GridCell]]) -> tuple[int, ...]:
        return tuple((id(h) if (h := cover(r, col)) else -1) for r in heads)

    # merge end columns under the same header cells that never both hold a row's amount
    cols: list[int] = sorted(ends)
    groups: list[list[int]] = []
    # the header rows over the value columns (a section row "Cash paid for ...:" in the
    # label column above the first amount says nothing of them)
    heads = [r for r in header_rows if any(c.last >= limit for c in r)]
    for e in cols:
        k = key(e, heads)
        placed = False
        for g in groups:
            if key(g[0], heads) == k and (-1 not in k or not heads):
                both = any(
                    any(c.last == e for c, t in gl if _is_amount(t))
                    and any(c.last in g for c, t in gl if _is_amount(t))
                    for gl in glued[first_body:]
                )
                if not both:
                    g.append(e)
                    placed = True
                    break
        if not placed:
            groups.append([e])
    groups = groups[: MAX_COLS - 1]
    width = len(groups) + 1
    col_of = {e: j for j, g in enumerate(groups, start=1) for e in g}

    def head_text(row: list[GridCell], group: list[int]) -> str:
        h = cover(row, group[0])
        return h.text if h else ""

    out = Logical([], [])
    for r in header_rows:
        label = " ".join(c.text for c in r if c.last < limit)
        out.header.append([label] + [head_text(r, g) for g in groups])
    # one cell over every column under the row naming each column ("Increase/(Decrease)"
    # under the periods) heads the rows below it, like a section row, not the columns
    named = [
        i for i, h in enumerate(out.header) if len(groups) > 1 and len(set(h[1:])) == len(groups)
    ]
    for h in out.header[named[-1] + 1 :] if named else []:
        if len(set(h[1:])) == 1 and h[1] and not _SCALE_NOTE.match(h[1]):
            h[0], h[1:] = f"{h[0]} {h[1]}".strip(), [""] * len(groups)
    group = ""  # "Ozurdex | United States": the first label column heads the rows under it
    # "785 | (9) | 1": a "(9)" after a number is a value where it ends on a value column
    for g in (_glue(r, notes=True) for r in rows[first_body:]):
        parts = [(c, t) for c, t in g if c.last < limit]
        label = " ".join(t for c, t in parts)
        if len(parts) >= 2 and parts[0][0].col == 0:
            group = parts[0][1]
            label = f"{group}: {' '.join(t for _, t in parts[1:])}"
        elif group and parts and parts[0][0].col > 0:
            label = f"{group}: {label}"
        elif parts:
            group = ""
        cells = [Cell(label, -1)] + [Cell("", -1) for _ in groups]
        texts: list[list[str]] = [[] for _ in range(width)]
        for c, t in g:
            if c.last < limit:
                continue
            j = col_of.get(c.last)
            if j is None and _FOOTNOTE.match(t):
                continue
            if j is None:
                # text or a number off the value columns: under the column whose header
                # covers it, else nowhere (counted)
                j = next((jj for jj, gg in enumerate(groups, 1) if c.col <= gg[0] <= c.last), None)
                if j is None:
                    if _is_amount(t):
                        out.dropped["off_column"] += 1
                    continue
            texts[j].append(t)
        row_i = len(out.body)
        for j in range(1, width):
            if texts[j]:
                cells[j] = Cell(" ".join(texts[j])[:99], row_i * CELL_ID + j * 100 if ids else -1)
        if ids:
            cells[0] = Cell(label, row_i * CELL_ID)
        for c, t in g:
            j = col_of.get(c.last)
            if j is not None and c.tag is not None and _is_amount(t):
                out.tags[(row_i, j)] = c.tag
        out.body.append(cells)
    return out


_RANGE = re.compile(r"^\$?\s?\d[\d.,]*\s*%?\s*[-–]\s*\$?\s?\d[\d.,]*\s*%?$")


def _body_value(text: str) -> bool:
    """A cell that makes its row a body row: an amount other than a year, or a range of
    amounts ("33 - 36%" under "Volatility": a row, not a header naming its column)."""
    if _is_amount(text):
        return not _yearish(text)
    m = _RANGE.match(text.strip())
    return bool(m) and not re.fullmatch(
        r"(?:19|20|21)\d{2}\s*[-–]\s*(?:19|20|21)\d{2}", text.strip()
    )


_YEAR_ONLY = re.compile(r"^(?:FY|Fiscal\s+)?(?:19|20|21)\d{2}$", re.I)


def _yearish(text: str) -> bool:
    return bool(_YEAR_ONLY.match(text.strip()))


# -- flattened text ------------------------------------------------------------------
# a value column's cell that holds no amount: a dash, "n/m", "*", ">100.0 %"
_FILLER = re.compile(r"^(?:\$\s*)?(?:[—–-]+\s*%?|n/?m|n/?a|nm|\*+|[<>]\s*\d[\d.,]*\s*%?)$", re.I)
_TOTAL = re.compile(r"^total\b", re.I)
_LONE = re.compile(r"^(?:US\$|\$|€|£|¥|%|\))$")
_SEP_ROW = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_SCALE_NOTE = re.compile(r"^\(?(?:dollars |amounts )?in (?:millions|thousands|billions)\b", re.I)
_CHANGE_HEAD = re.compile(
    r"\bchange\b|\bvariance\b|\bvs\.?\s|\bv\s|\bgrowth\b|increase|decrease", re.I
)
_YEAR_IN = re.compile(r"(?:19|20|21)\d{2}")


def _valueish(text: str) -> bool:
    return _is_amount(text) or bool(_FILLER.match(text.strip()))


def _split_label(cells: list[str]) -> tuple[list[str], list[str]]:
    """(label cells, value cells): the label is every cell before the first amount or
    filler ("Humira | United States | $7,142": two label cells)."""
    i = next((j for j, t in enumerate(cells) if j > 0 and _valueish(t)), len(cells))
    return cells[:i], cells[i:]


def _runs(cells: list[str]) -> list[int]:
    """The start of each run of a full header row: a run ends where the row repeats its
    first cell ("2024 | 2023 | 2022 | 2024 | 2023": runs at 0 and 3)."""
    starts = [0]
    for j in range(1, len(cells)):
        if cells[j] and cells[j] == cells[starts[-1]]:
            starts.append(j)
    return starts


def _spread(cells: list[str], n: int) -> list[str] | None:
    """k cells over n columns: n/k each, or None when k does not divide n."""
    if not cells or n % len(cells):
        return None
    return [t for t in cells for _ in range(n // len(cells))]


def _first_change(cells: list[str]) -> int:
    m = next((j for j, t in enumerate(cells) if _CHANGE_HEAD.search(t)), len(cells))
    return m if m and all(_CHANGE_HEAD.search(t) for t in cells[m:]) else len(cells)


def _place(r: list[str], n: int, below: list[str] | None) -> list[str] | None:
    """A header row of fewer cells than columns, placed over the columns, or None.
    Value cells come before change cells ("Year Ended December 31, | % Change"): each
    part goes over the columns of its kind in the row below ("2024 | 2023 | 2024 vs.
    2023"), or, without one, every cell naming a year heads one column and the change
    cells share the rest."""
    m = next((j for j, t in enumerate(r) if _CHANGE_HEAD.search(t)), len(r))
    if below is not None and len(r) == n - 1 and m == len(r):
        # "Total | (Level 1) | (Level 2)": a total column stands apart from the group above
        if _TOTAL.match(below[0]) and not _TOTAL.match(r[0]):
            return ["", *r]
        if _TOTAL.match(below[-1]) and not _TOTAL.match(r[-1]):
            return [*r, ""]
    if m == len(r) and below is not None and len(r) < n:
        # "December 31, 2024 | December 31, 2023" over the repeated blocks at the end of
        # "Useful life | Gross | Net | Gross | Net"
        for lead in range(n - len(r) * ((n - 0) // len(r)), n - len(r) + 1):
            size, rest = divmod(n - lead, len(r))
            blocks = [below[lead + i * size : lead + (i + 1) * size] for i in range(len(r))]
            if not rest and size > 1 and all(b == blocks[0] for b in blocks):
                return [""] * lead + [t for t in r for _ in range(size)]
    if 0 < m < len(r) and all(_CHANGE_HEAD.search(t) for t in r[m:]):
        if below is not None:
            a = next(
                (j for j, t in enumerate(below) if _CHANGE_HEAD.search(t) or not any(below[j:])),
                n,
            )
        elif all(_YEAR_IN.search(t) for t in r[:m]):
            a = m
        else:
            return None
        left, right = _spread(r[:m], a), _spread(r[m:], n - a)
        if left is not None and right is not None:
            return left + right
        return None
    return _spread(r, n)


def _pipe_rows(text: str) -> list[list[str]]:
    """The cells of each row ("a | b", "| a | b |", a one-cell "Assets"; "|---|" rows
    and blank lines skipped)."""
    return [
        [c.strip() for c in line.strip().strip("|").split("|")]
        for line in text.splitlines()
        if line.strip() and not _SEP_ROW.match(line)
    ]


def is_flattened(text: str) -> bool:
    """Pipe rows as HTML-to-text tools write a filing's table: no empty cells, and "$"
    or "%" in cells of their own or rows of unequal length (a spanning header has fewer
    cells than the rows under it). A Markdown grid that keeps its empty cells is not."""
    rows = _pipe_rows(text)
    if len(rows) < 2 or any(not c for r in rows for c in r):
        return False
    return any(_LONE.match(c) for r in rows for c in r) or len({len(r) for r in rows}) > 1


def read_flat(text: str) -> Logical | None:
    """Pipe rows (``flatten``'s form) -> the logical table, or None when the cell counts
    do not say which header cell heads which column.

    The value columns are the most cells a row holds after its label cells (every cell
    before the first amount, dash or "n/m"; two label cells make "group: label" as on the
    grid, the group heading the one-label rows under it through its "Total"). Header rows,
    from the lowest up: a row of as many cells is one a column (cells beyond that, or a
    scale note first, are the label column's); a one-cell row above it spans every
    column, below it it is a section row of the label column ("Assets", "Fiscal 2024"); a
    row of value then change cells puts each part over its kind of column; k cells over n
    columns span n/k each where k divides n, else one a run of the full row ("2024 | 2023
    | 2022 | 2024 | 2023": "Percent change" groups sit over the runs after the first);
    otherwise the table is dropped (``header_ambiguous``). A body row of fewer value cells
    is kept only when what it lacks is the trailing change columns (``misaligned_row``
    otherwise). Columns no row gives an amount in are dropped, as on the grid."""
    rows = [[c for c in r if c] for r in _pipe_rows(text)]
    rows = [r for r in rows if r]
    grid = [[GridCell(t, j, 1) for j, t in enumerate(r)] for r in rows]
    glued = [[t for _, t in _glue(r)] for r in grid]
    first_body = next(
        (
            i
            for i, g in enumerate(glued)
            if any(_body_value(t) for t in g[1:]) and not _is_amount(g[0])
        ),
        None,
    )
    if first_body is None:
        return None
    split = [_split_label(g) for g in glued[first_body:]]
    n = max((len(v) for lab, v in split if any(_is_amount(t) for t in v)), default=0)
    if n < 1:
        return None
    # "785 | (9) | 1": a "(9)" read as a footnote is a value where keeping it fills the row
    for i, r in enumerate(grid[first_body:]):
        kept = _split_label([t for _, t in _glue(r, notes=True)])
        if len(kept[1]) == n and len(split[i][1]) < n:
            split[i] = kept
    out = Logical([], [])
    heads = glued[:first_body]
    full = max((i for i, r in enumerate(heads) if len(r) >= n), default=-1)
    runs = _runs(heads[full][len(heads[full]) - n :]) if full >= 0 else [0]
    named = max((i for i, r in enumerate(heads) if len(r) > 1), default=-1)
    placed: list[list[str]] = []
    below: list[str] | None = None
    # the change cells that end an upper header row ("... | Variance Dollars"): one column each
    tail = max((len(h) - _first_change(h) for h in heads if 1 < len(h) < n), default=0)
    for i in range(len(heads) - 1, -1, -1):
        r = heads[i]
        k = len(r)
        label = ""
        while k > n + 1 and _CHANGE_HEAD.search(r[-1]):
            r, k = r[:-1], k - 1  # "% Change" over a column no row fills
        if k > n:
            label, r = " ".join(r[: k - n]), r[k - n :]
            k = n
        elif 1 < k < n + 1 and (
            _SCALE_NOTE.search(r[0])
            or (
                _period_like(r[0])
                and not _YEAR_IN.search(r[0])
                and all(_YEAR_IN.search(t) for t in r[1:])
                and n % (k - 1) == 0
            )
            or (
                k < n
                and n % k
                and n % (k - 1) == 0
                and not _period_like(r[0])
                and _place(r, n, below) is None
            )
        ):
            label, r = r[0], r[1:]  # "(in millions) | 2024 | 2023" over four columns
            k -= 1
        if k == n:
            cells = r
        elif k == 1 and (i > named >= 0 or _SCALE_NOTE.search(r[0])):
            label, cells = r[0], [""] * n  # a section row under the column headers
        elif k == 1:
            # "Year Ended December 31," over the periods, not over the change columns
            spans = not below or _CHANGE_HEAD.search(r[0]) or not _period_like(r[0])
            cells = [r[0] if spans or not _CHANGE_HEAD.search(b) else "" for b in below or r * n]
        elif (got := _place(r, n, below)) is not None:
            cells = got
        elif 1 < k < n and k == n - tail and not any(_CHANGE_HEAD.search(t) for t in r):
            cells = r + [""] * tail  # "2025 | 2024" under "Year Ended | Variance"
        elif 1 < len(runs) and k < len(runs) and not any(_period_like(t) for t in r):
            starts = runs[len(runs) - k :]
            ends = [*starts[1:], n]
            cells = [""] * starts[0]
            for t, a, b in zip(r, starts, ends, strict=True):
                cells += [t] * (b - a)
        else:
            out.dropped["header_ambiguous"] += 1
            return out
        placed.append([label, *cells])
        if len(set(cells)) > 1:
            below = cells  # a row naming the columns apart (not one label over all)
    out.header = placed[::-1]
    if len(runs) > 1 and full >= 0:
        # a one-cell group row over the runs that repeat the periods ("Percent change")
        # heads only those runs, not the table's own value columns
        for h in out.header[:full]:
            if len(set(h[1:])) == 1 and h[1] and _CHANGE_HEAD.search(h[1]):
                h[1 : runs[1] + 1] = [""] * runs[1]
    change_cols = {
        j
        for j in range(1, n + 1)
        if any(_CHANGE_HEAD.search(h[j]) for h in out.header if len(h) > j)
    }
    group = ""
    for lab, vals in split:
        if lab and len(lab) < 2 and _TOTAL.match(lab[0]) and lab[0].lower() != "total":
            group = ""  # "Total lease assets" totals more than the group above it
        amounts = any(_is_amount(t) for t in vals)
        if len(lab) < 2 and not amounts:
            group = ""  # a section row ("Oncology", "Other assets") starts the label column
        if len(lab) >= 2:
            # "Humira | United States": the group heads the rows under it; a row of more
            # label cells ("2014 Notes | 2034 - 2044 | 4.80 %") holds text columns instead
            group = lab[0] if len(lab) == 2 else ""
            label = f"{lab[0]}: {' '.join(lab[1:])}"
        elif group and lab:
            label = f"{group}: {lab[0]}"
        else:
            label = lab[0] if lab else ""
        if not amounts:
            out.body.append([Cell(label, -1)] + [Cell("", -1)] * n)
            continue
        if len(lab) < 2 and _TOTAL.match(lab[0] if lab else ""):
            group = ""  # "Total" closes the group it totals
        if len(vals) < n and set(range(len(vals) + 1, n + 1)) <= change_cols:
            vals = vals + [""] * (n - len(vals))  # a row without its change cells
        if len(vals) == n:
            out.body.append([Cell(label, -1)] + [Cell(t, -1) for t in vals])
        else:
            out.dropped["misaligned_row"] += sum(1 for t in vals if _is_amount(t))
    # columns that hold no amount in any row (all dashes) are no value columns
    empty = [
        j for j in range(1, n + 1) if not any(_is_amount(r[j].text) for r in out.body if len(r) > j)
    ]
    if empty and len(empty) < n:
        keep = [j for j in range(n + 1) if j not in empty]
        out.header = [[h[j] for j in keep] for h in out.header]
        out.body = [[r[j] for j in keep] for r in out.body]
    return out


def _period_like(text: str) -> bool:
    return bool(re.search(r"(?:19|20|21)\d{2}|ended|fiscal|as of|quarter", text, re.I))


# -- facts ---------------------------------------------------------------------------
def read_logical(
    lt: Logical,
    ctx: DocContext,
    *,
    context: str = "",
    fiscal: str = "",
    until: date | None = None,
) -> TableRead:
    header = [list(h) for h in lt.header]
    for h in header:  # "(In millions)" over the value columns is the table's, not a column's
        if len(h) > 1 and len(set(h[1:])) == 1 and _SCALE_NOTE.match(h[1]):
            h[0], h[1:] = f"{h[0]} {h[1]}".strip(), [""] * (len(h) - 1)
    frame = frame_of(header, lt.body)
    read = read_frame(
        frame, ctx, context=f"{context} {fiscal}".strip(), aligned=True, report_end=until
    )
    read.dropped.update(lt.dropped)
    return read


def table_facts(
    table: HtmlTable,
    ctx: DocContext,
    fiscal: str = "",
    until: date | None = None,
    *,
    ids: bool = False,
) -> tuple[TableRead, Logical | None]:
    """The facts of one HTML table read by its grid, and the logical table they came from."""
    lt = logical(table, ids=ids)
    if lt is None:
        return TableRead(), None
    return read_logical(lt, ctx, context=table.context, fiscal=fiscal, until=until), lt


def flat_facts(
    text: str, ctx: DocContext, *, context: str = "", fiscal: str = "", until: date | None = None
) -> TableRead:
    """The facts of one table flattened to pipe rows (``flatten``'s form)."""
    lt = read_flat(text)
    if lt is None:
        return TableRead()
    if not lt.header and not lt.body:
        return TableRead(dropped=lt.dropped)
    return read_logical(lt, ctx, context=context, fiscal=fiscal, until=until)


def read_text_table(
    text: str, ctx: DocContext, *, context: str = "", until: date | None = None
) -> TableRead:
    """A table chunk of pipe rows: read as the flattened filing table it is
    (``is_flattened``: the same facts as its HTML), else as a Markdown grid."""
    if is_flattened(text):
        read = flat_facts(text, ctx, context=context, until=until)
        _row_spans(read, text)
        return read
    return _tables.read_chunk_table(text, ctx, context=context)


def _row_spans(read: TableRead, text: str) -> None:
    """Give each fact of a pipe-row chunk the span of its row, as the grid reader does:
    the flat reader works on cell texts, and a fact whose evidence the verifier must
    search for again can lose it to a name like "S.p.A." that reads as sentence ends."""
    rows: list[tuple[int, int]] = []
    at = 0
    for line in text.splitlines(keepends=True):
        body = line.strip().strip("|").strip()
        if body:
            start = text.index(body, at)
            rows.append((start, start + len(body)))
        at += len(line)
    for c in read.candidates:
        if c.start >= 0:
            continue
        label = c.tail.rsplit(": ", 1)[-1]
        for start, end in rows:
            if label and label in text[start:end]:
                c.start, c.end = start, end
                break


def filing_facts(filing: Filing, ctx: DocContext) -> TableRead:
    """Every table of a filing read by its grid: the facts and what was dropped, summed."""
    out = TableRead()
    for table in filing.tables:
        read, _ = table_facts(table, ctx, filing.fiscal, filing.report_end)
        out.candidates += read.candidates
        out.dropped.update(read.dropped)
        out.folded += read.folded
    return out


def read_html_table(
    text: str, ctx: DocContext, *, context: str = "", until: date | None = None
) -> TableRead:
    """A table chunk holding ``<table>`` markup (a filing record's table as the EDGAR
    connector keeps it, or HTML in a document's text) read by its grid; its
    ``<caption>`` is the lines above it."""
    try:
        root = lxml.html.fromstring(text)
    except (lxml.etree.ParserError, ValueError):
        return TableRead()
    tables = [root] if _tag(root) == "table" else list(root.iter("table"))
    out = TableRead()
    for el in tables[:50]:
        cap = next((c for c in el if _tag(c) == "caption"), None)
        caption = _text(cap) if cap is not None else ""
        grid = _grid(el)
        if not grid:
            continue
        read, _ = table_facts(HtmlTable(0, grid, caption), ctx, context, until)
        out.candidates += read.candidates
        out.dropped.update(read.dropped)
        out.folded += read.folded
        out.title = out.title or read.title
        out.statement = out.statement or read.statement
    return out
