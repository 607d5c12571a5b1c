"""Financial tables -> metric facts of the filer that keep their period, unit and scale.

Markdown pipe tables, HTML tables and the ``tables`` a filing record carries are read
into rows of cells. The leading rows that hold no amounts are the header (several rows:
a group label such as "Years Ended September 30," over the years, a "(in millions)"
row); each column's header text gives its period (``table_periods``) and its kind
(value, % of total, % change, bp change, change in amount; words in
``kg/data/table_vocab.json``). The caption and header give the scale and currency
("in millions, except per share data", "$ in thousands"); the row label and the cell
give the rest of the unit (%, USD/share, shares, counts).

Only value columns yield value facts; change columns yield change facts (their unit is
%, bp or the currency) named by both periods; % of total columns yield nothing. Every
fact carries ``value`` (base units), ``unit``, ``period`` (+ ``period_end`` and, for a
flow, ``period_start``), ``column_kind``, ``raw`` and the row's section/statement. A
cell whose period or unit cannot be determined is dropped and counted by reason in
``TableRead.dropped`` - never stored as "column N".
"""

from __future__ import annotations

import calendar
import html
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta

from kg.extract.table_periods import (
    FYE_PHRASE,
    FiscalYearEnd,
    Period,
    change_pair,
    fiscal_year_end,
    parse_period,
    parse_span,
)
from kg.extract.table_vocab import TableVocab, vocab
from kg.extract.types import Candidate, Component, DocContext
from kg.graph.quantities import currency_of, currency_words
from kg.graph.quantities import scale as scale_factor

MONTHS_FULL = {m.lower() for m in calendar.month_name if m}
MAX_ROWS = 200
MAX_COLS = 30
MAX_HEADER_ROWS = 6
MAX_NAME_WORDS = 12
MAX_NAME_CHARS = 120
_SEP_ROW = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_CELL_TAG = re.compile(r"<t[dh][^>]*>(.*?)</t[dh]>", re.I | re.S)
_ROW_TAG = re.compile(r"<tr[^>]*>(.*?)</tr>", re.I | re.S)
_CAPTION_TAG = re.compile(r"<caption[^>]*>(.*?)</caption>", re.I | re.S)
_TAGS = re.compile(r"<[^>]+>")
_AMOUNT = re.compile(
    r"^(?P<neg1>\()?\s*(?:\+|(?P<neg2>[-−–]))?\s*(?P<cur>US\$|\$|€|£|¥|RMB|USD)?\s*(?P<neg3>[-−–])?\s*\(?"
    r"(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)\s*(?P<suffix>%|bps?|x|pts?|points?)?"
    r"\s*(?P<close>\))?\s*(?P<suffix2>%|bps?)?$",
    re.I,
)
_BLANK = re.compile(r"^[\s—–\-−_/]*$|^n/?a$|^nm$|^\*+$|^—%$|^-+\s*%$|^- - %$", re.I)
_YEARISH = re.compile(
    r"^(?:FY|Fiscal|F)?\s*'?(?:19|20|21)\d{2}(?:年.*)?$|^(?:FY|Q[1-4])\s*'?\d{2}$", re.I
)
_LETTERS = re.compile(r"[A-Za-z\u3400-\u9fff]")
CURRENCY_CELL = re.compile(r"^(?:US\$|\$|€|£|¥|RMB)$")  # a cell holding only a sign
_CENTS = re.compile(r"\bcents?\b|\(c\)|¢", re.I)
_PERIOD_WORDS = re.compile(r"\bended\b|\bas of\b|^at\b|\bfiscal\b|\bquarter", re.I)
_EXCEPT_PCT = re.compile(r"except\s+[a-z ,]*percent(?:age)?s?", re.I)
_PCT_CELL = re.compile(r"^(?:%|\)%|\)|pts?\.?|bps?)$", re.I)


class Drop:
    """Why a table cell is not a fact (the ``TableRead.dropped`` keys)."""

    NO_FILER = "no_filer"
    NO_HEADER = "no_header"  # the table names no period at all
    PERIOD_UNKNOWN = "period_unknown"
    UNIT_UNKNOWN = "unit_unknown"
    SCALE_UNKNOWN = "scale_unknown"  # a currency amount with no stated scale
    SHARE_OF_TOTAL = "pct_of_total_column"
    NO_ROW_LABEL = "no_row_label"
    REPEATED_CHANGE = "repeated_change"  # a second change column of the same two periods
    FUTURE = "future_period"  # a column after the report's end: a maturity schedule
    MISALIGNED = "misaligned_row"  # the row has a different number of cells
    METRIC_GENERIC = "metric_generic"  # "Total", "Other" with no section or title over it
    PART_UNNAMED = "part_unnamed"  # one segment's table ("% of total company revenues")


@dataclass(frozen=True, slots=True)
class Cell:
    text: str
    start: int  # offset in the chunk text, -1 when the table came as data


@dataclass(slots=True)
class Column:
    index: int
    header: str
    kind: str = "value"  # value | pct_of_total | pct_change | bp_change | change_amount
    period: Period | None = None
    prior: Period | None = None  # the period a change column compares against
    percent: bool = False  # the header says the column is in %
    qualifier: str = ""  # what tells apart value columns of one period ("Fair Value")


@dataclass(slots=True)
class TableRead:
    candidates: list[Candidate] = field(default_factory=list)
    dropped: Counter[str] = field(default_factory=Counter)
    columns: list[Column] = field(default_factory=list)
    statement: str = ""
    header_rows: int = 0
    title: str = ""
    folded: int = 0  # change cells kept as attributes of their row's value fact


# -- parsing rows --------------------------------------------------------------------
def parse_markdown(text: str) -> list[list[Cell]]:
    rows: list[list[Cell]] = []
    pos = 0
    for line in text.splitlines(keepends=True):
        start = pos
        pos += len(line)
        if "|" not in line or _SEP_ROW.match(line):
            continue
        body = line.rstrip("\n")
        stripped_line = body.strip()
        inner_start = body.find("|") + 1 if stripped_line.startswith("|") else 0
        inner_end = body.rfind("|") if stripped_line.endswith("|") else len(body)
        cells: list[Cell] = []
        offset = inner_start
        for raw in body[inner_start:inner_end].split("|"):
            stripped = raw.strip()
            lead = len(raw) - len(raw.lstrip())
            cells.append(Cell(stripped, start + offset + lead if stripped else -1))
            offset += len(raw) + 1
        if any(c.text for c in cells):
            rows.append(cells[:MAX_COLS])
    return rows[:MAX_ROWS]


def parse_html(text: str) -> list[list[Cell]]:
    rows: list[list[Cell]] = []
    cap = _CAPTION_TAG.search(text)
    if cap:
        caption = html.unescape(_TAGS.sub("", cap.group(1))).strip()
        if caption:
            rows.append([Cell(caption, cap.start(1))])
    for rm in _ROW_TAG.finditer(text):
        cells = []
        for cm in _CELL_TAG.finditer(rm.group(1)):
            inner = " ".join(html.unescape(_TAGS.sub(" ", cm.group(1))).split())
            colspan = re.search(r"colspan\s*=\s*[\"']?(\d+)", cm.group(0)[:200], re.I)
            cells.append(Cell(inner, rm.start(1) + cm.start(1) if inner else -1))
            for _ in range(min(int(colspan.group(1)), MAX_COLS) - 1 if colspan else 0):
                cells.append(Cell("", -1))
        if cells:
            rows.append(cells[:MAX_COLS])
    return rows[:MAX_ROWS]


def from_data(rows: list[list[str]]) -> list[list[Cell]]:
    return [[Cell(str(c).strip(), -1) for c in row[:MAX_COLS]] for row in rows[:MAX_ROWS]]


def render_table(rows: list[list[str]], caption: str = "") -> str:
    """A record's table as Markdown, its caption as a one-cell first row."""
    lines = [f"| {caption.replace('|', '/')} |"] if caption.strip() else []
    lines += ["| " + " | ".join(c.replace("|", "/") for c in row) + " |" for row in rows]
    return "\n".join(lines)


def caption_before(text: str, rows: list[list[str]], max_lines: int = 3) -> str:
    """The short lines just above a table's first row in the document text (its title
    and "(in millions)" note), for tables that arrive as data without them."""
    if not rows or not text:
        return ""
    first = "\t".join(c for c in rows[0] if c)
    at = text.find(first) if first else -1
    return table_context(text, at, max_lines) if at > 0 else ""


_REPORT_DATE = re.compile(r"\b10-K(?:/A)?\s+for\s+((?:19|20)\d{2})-(\d{2})-(\d{2})\b")


def fiscal_note(title: str, text: str) -> str:
    """The filer's fiscal year end, said once for all its tables: from the 10-K's report
    date in an EDGAR title ("... 10-K for 2023-06-30") or the text's first "year ended
    June 30"; "" when neither says it (the tables then assume December 31, flagged)."""
    m = _REPORT_DATE.search(title)
    if m:
        month = int(m.group(2))
        name = calendar.month_name[month] if 1 <= month <= 12 else ""
        note = f"(fiscal years ended {name} {int(m.group(3))})" if name else ""
        return note[:-1] + _label_note(int(m.group(1)), month, text) + ")" if note else ""
    t = FYE_PHRASE.search(text[:20_000])
    if not t:
        return ""
    end = report_end(text)
    offset = _label_note(end.year, end.month, text) if end else ""
    return f"(fiscal years ended {t.group(1)} {t.group(2)}{offset})"


_COVER_END = re.compile(
    r"\bfiscal\s+year\s+ended:?\s+("
    + "|".join(calendar.month_name[1:])
    + r")\s+(\d{1,2}),?\s+((?:19|20)\d{2})",
    re.I,
)


def report_end(text: str) -> date | None:
    """The last day of the year a 10-K reports: its cover page's "For the fiscal year ended
    February 1, 2025"; None when the opening does not say it."""
    m = _COVER_END.search(text[:20_000])
    if not m:
        return None
    month = list(calendar.month_name).index(m.group(1).capitalize())
    try:
        return date(int(m.group(3)), month, int(m.group(2)))
    except ValueError:
        return None


_REGISTRANT = re.compile(r"\(\s*exact\s+name\s+of\s+(?:the\s+)?registrants?\b", re.I)
_FILE_NO = re.compile(r"(?i)^.*?\b(?:file\s+)?(?:number|no\.?)\s*:?\s*[\d-]+\s*")
_RULE = re.compile(r"_{2,}|\u2014{2,}|-{3,}")


def registrant(text: str) -> str:
    """The filer a 10-K or 10-Q names on its cover page: the line just above "(Exact name
    of registrant as specified in its charter)"; "" when the opening does not say it."""
    m = _REGISTRANT.search(text[:20_000])
    if not m:
        return ""
    above = [ln for ln in (_RULE.sub(" ", x).strip() for x in text[: m.start()].splitlines()) if ln]
    if not above:
        return ""
    name = " ".join(_FILE_NO.sub("", above[-1]).split()).strip(" ,;:")
    ok = 2 <= len(name) <= 80 and re.search(r"[A-Za-z]{2}", name) and not name.endswith(")")
    return name if ok else ""


_NAME_WORD = re.compile(r"[A-Z][A-Z'.]*")
_SMALL_WORDS = frozenset({"INC", "THE", "AND", "CO", "LTD", "OF", "FOR"})


def display_name(name: str) -> str:
    """A name printed in capitals ("AMAZON.COM, INC.") as written in prose ("Amazon.com,
    Inc."); words of three letters or fewer stay ("IBM", "PLC"), but for "Inc", "The",
    "Co"...; a name with any lowercase letter is kept as printed."""
    if any(ch.islower() for ch in name):
        return name

    def word(m: re.Match[str]) -> str:
        w = m.group()
        bare = w.rstrip(".")
        keep = len(bare) <= 3 and bare not in _SMALL_WORDS
        return w if keep else w[0] + w[1:].lower()

    return _NAME_WORD.sub(word, name)


def _label_note(end_year: int, month: int, text: str) -> str:
    """The note "; fiscal 2024 ends in 2025" when a year ending in January-March is named by the
    calendar year before its end: the filing says "fiscal 2024" more than "fiscal 2025"."""
    if month > 3:
        return ""
    prev = len(re.findall(rf"\bfiscal(?:\s+year)?\s+{end_year - 1}\b", text, re.I))
    same = len(re.findall(rf"\bfiscal(?:\s+year)?\s+{end_year}\b", text, re.I))
    return f"; fiscal {end_year - 1} ends in {end_year}" if prev > same else ""


def table_context(text: str, start: int, max_lines: int = 3) -> str:
    """The title and "(in millions)" lines just above offset ``start`` of ``text``."""
    above = text[max(0, start - 600) : max(0, start)]
    above = above[above.rfind("\f") + 1 :]  # a table appended after the text: none above
    lines = [ln.strip() for ln in above.splitlines()]
    lines = [ln for ln in lines if ln]
    picked = [ln for ln in lines[-max_lines:] if len(ln) < 200 and "\t" not in ln]
    return " / ".join(picked)


def _merge_split_cells(cells: list[Cell]) -> list[Cell]:
    """EDGAR HTML puts '$' and '%' or ')' in cells of their own: glue them to the number."""
    out: list[Cell] = []
    pending = ""
    pending_start = -1
    for c in cells:
        t = c.text
        if CURRENCY_CELL.match(t):
            if pending:
                out.append(Cell(pending, pending_start))
            pending, pending_start = t, c.start
            continue
        if out and _PCT_CELL.match(t) and out[-1].text and out[-1].text[-1].isdigit():
            out[-1] = Cell(out[-1].text + t, out[-1].start)
            continue
        if pending:
            if parse_amount(t) is not None:
                start = pending_start if pending_start >= 0 else c.start
                out.append(Cell(f"{pending}{t}", start))
            else:
                out += [Cell(pending, pending_start), c]
            pending = ""
            continue
        out.append(c)
    if pending:
        out.append(Cell(pending, pending_start))
    return out


# -- cells ---------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Amount:
    value: float
    currency: str  # USD ... when the cell shows a currency sign
    percent: bool
    bp: bool


def strip_footnotes(text: str, v: TableVocab | None = None) -> str:
    v = v or vocab()
    return re.sub(v.footnote_marker, "", text.strip(), flags=re.I).strip(" :")


def parse_amount(text: str, context: str = "") -> Amount | None:
    """'$1,234.5' -> 1234.5; '(12)' -> -12; '(1)%' -> -1 %; '—' -> None. The sign's
    currency comes from ``kg.graph.quantities`` ("¥" decided by ``context``, the table's text)."""
    t = " ".join(text.replace("\u2009", " ").replace("\xa0", " ").split())
    t = re.sub(r"\s*(?:\([a-z]\)|[*†‡]+)$", "", t)  # footnote after an amount
    t = re.sub(r"\(\s+(?=[\d.$])", "(", re.sub(r"(?<=[\d.])\s+\)", ")", t))  # "$( 0.27 )"
    if not t or len(t) > 40:
        return None
    m = _AMOUNT.match(t)
    if not m:
        return None
    if bool(m.group("close")) != ("(" in t[: m.start("num")]):
        return None  # an unbalanced parenthesis: a footnote or a label, not an amount
    try:
        value = float(m.group("num").replace(",", ""))
    except ValueError:
        return None
    negative = bool(m.group("neg1") or m.group("neg2") or m.group("neg3"))
    negative = negative or ("(" in t[: m.start("num")] and bool(m.group("close")))
    suffix = (m.group("suffix") or m.group("suffix2") or "").lower()
    cur = m.group("cur") or ""
    currency = currency_of(cur, context) if cur else ""
    return Amount(-value if negative else value, currency, suffix == "%", suffix.startswith("bp"))


def parse_number(text: str) -> float | None:
    a = parse_amount(text)
    return a.value if a else None


def _is_header_cell(text: str) -> bool:
    t = text.strip()
    return (
        not t or _BLANK.match(t) is not None or parse_amount(t) is None or bool(_YEARISH.match(t))
    )


# -- the table's frame ---------------------------------------------------------------
@dataclass(slots=True)
class _Frame:
    header: list[list[str]]
    body: list[list[Cell]]
    width: int
    caption: str


def _frame(rows: list[list[Cell]]) -> _Frame:
    rows = [_merge_split_cells(r) for r in rows if any(c.text for c in r)]
    caption_parts: list[str] = []
    header: list[list[str]] = []
    i = 0
    saw_period = False
    while i < len(rows) and len(header) + len(caption_parts) < MAX_HEADER_ROWS + 2:
        row = rows[i]
        texts = [c.text for c in row]
        data = texts[1:]
        if len(row) == 1 or (len([t for t in texts if t]) == 1 and texts[0] and not any(data)):
            if saw_period:
                break  # a section heading of the body ("Transportation Solutions:")
            caption_parts.append(texts[0] if texts[0] else next(t for t in texts if t))
            i += 1
            continue
        if not all(_is_header_cell(t) for t in data):
            break
        if texts[0] and parse_amount(texts[0]) is not None and not _YEARISH.match(texts[0]):
            break
        header.append(texts)
        saw_period = saw_period or any(parse_period(t) for t in texts)
        i += 1
    body = rows[i:]
    width = max((len(r) for r in body), default=0)
    return _Frame(header, body, width, " ".join(caption_parts))


def _align_header(header: list[list[str]], width: int) -> list[list[str]]:
    """Header rows as ``width`` cells: a row missing the label cell is right-aligned; a
    group label spans to the next one ("Domestic", "", "International", "")."""
    out = []
    for texts in header:
        row = list(texts)
        if len(row) < width:
            row = [""] * (width - len(row)) + row
        row = row[:width]
        data_idx = [j for j in range(1, width) if row[j]]
        if len(data_idx) == 1 and width > 2:
            row = [row[0]] + [row[data_idx[0]]] * (width - 1)  # one label over all columns
        elif data_idx and len(data_idx) < width - 1:
            filled = list(row)
            cur = ""
            for j in range(1, width):
                cur = row[j] or cur
                filled[j] = cur
            row = filled
        out.append(row)
    return out


def _scale(text: str, v: TableVocab) -> float | None:
    for p in v.scale_patterns:
        m = re.search(p, text, re.I)
        if m:
            return scale_factor(m.group(1))
    return None


def _currency(text: str, v: TableVocab) -> str:
    """The currency a caption or header names: a named one ("Canadian dollars", "€m", "C$")
    before a bare sign; "$" alone is USD (SEC filers)."""
    low = text.casefold()
    words = currency_words()
    for word in words:
        if len(word) > 1 and re.search(rf"(?<![a-z]){re.escape(word)}(?![a-z])", low):
            return currency_of(word, text)
    for sym in (w for w in words if len(w) == 1 and not w.isalnum()):
        if sym in low:
            return currency_of(sym, text)
    return ""


def _column_kind(header: str, v: TableVocab) -> str:
    for kind, rx in v.kind_res():
        if rx.search(header):
            return kind
    return "value"


def _statement(text: str, v: TableVocab) -> str:
    for name, rx in v.statement_res():
        if rx.search(text):
            return name
    return ""


def _columns(
    header: list[list[str]], width: int, fye: FiscalYearEnd, v: TableVocab
) -> list[Column]:
    cols = []
    # "Quarters Ended" / "As of" in the label column of a header row heads every column
    lead = " ".join(
        h[0]
        for h in header
        if h[0] and (_PERIOD_WORDS.search(h[0]) or (len(h[0]) < 30 and _AS_OF_DAY.fullmatch(h[0])))
    )
    for j in range(1, width):
        text = " ".join([lead] + [h[j] for h in header if h[j]]).strip()
        kind = _column_kind(text, v)
        plain = _EXCEPT_PCT.sub("", text)  # "(In millions, except percentages)"
        col = Column(
            j, text, kind, percent="%" in plain or bool(re.search(r"\bpercent", plain, re.I))
        )
        if kind in ("pct_change", "bp_change", "change_amount"):
            pair = change_pair(text, fye)
            if pair:
                col.period, col.prior = pair
            elif (
                kind == "change_amount"
                and parse_period(text, fye)
                and not re.search(
                    r"vs\.?|versus|compared|change|variance|increase|decrease", text, re.I
                )
            ):
                col.kind = "value"
        if col.kind in ("value", "pct_of_total") and col.period is None:
            col.period = parse_period(text, fye)
        cols.append(col)
    # Two value columns of one period (amortized cost, fair value): their own header words
    # qualify the metric, or the facts would contradict each other.
    for c in cols:
        same = [o for o in cols if o.kind == c.kind == "value" and o.period == c.period]
        if c.period and len(same) > 1:
            words = [h[c.index] for h in header if h[c.index] and not parse_period(h[c.index])]
            c.qualifier = " ".join(w for w in words if w not in ("$", "%"))[:60]
    # A bare '%' under a period that also has an amount column is that column's share.
    bottoms = [header[-1][c.index].strip() if header else "" for c in cols]
    for c, bottom in zip(cols, bottoms, strict=True):
        if c.kind == "value" and bottom in ("%", "(%)", "% of total") and c.period:
            if any(o.kind == "value" and o is not c and o.period == c.period for o in cols):
                c.kind = "pct_of_total"
    # A change column that names no periods compares the two value periods beside it.
    value_periods = [c.period for c in cols if c.kind == "value" and c.period]
    for c in cols:
        own = parse_period(c.header, fye) if c.kind != "value" and c.period is None else None
        if own is not None:
            # "Percent change" over "2024": 2024 against the value column of the year before
            earlier = sorted(
                (p for p in value_periods if p.end < own.end and not p.instant),
                key=lambda p: p.end,
            )
            same = [p for p in value_periods if p.end == own.end]
            if same and earlier:
                c.period, c.prior = same[0], earlier[-1]
                continue
        if c.kind in ("pct_change", "bp_change", "change_amount") and c.period is None:
            left = [p.period for p in cols if p.index < c.index and p.kind == "value" and p.period]
            right = [p.period for p in cols if p.index > c.index and p.kind == "value" and p.period]
            # "2019 | change | 2018 | change | 2017": a change between two value columns
            # compares those two; "2023 | 2022 | % change": the two on its left
            compared: list[Period] = [left[-1], right[0]] if left and right else left[-2:]
            compared = compared if len(compared) == 2 else value_periods[:2]
            if len(compared) == 2 and compared[0].end != compared[1].end:
                cur, prior = sorted(compared, key=lambda p: p.end, reverse=True)
                c.period, c.prior = cur, prior
    seen: set[tuple[str, object, object]] = set()
    for c in cols:
        if c.kind in ("pct_change", "bp_change", "change_amount") and c.period and c.prior:
            key = (c.kind, c.period.end, c.prior.end)
            if key in seen:  # "At constant currency rates" beside "At actual": the first
                c.kind = "repeated_change"
            seen.add(key)
    return cols


def _row_unit(label: str, v: TableVocab) -> str:
    for unit, rx in v.row_unit_res():
        if rx.search(label):
            return unit
    return ""


_PARENS = re.compile(r"\([^)]*\)")
_OPENING = re.compile(
    r"\b(?:beginning|start)\s+of\s+(?:the\s+)?(?:fiscal\s+)?(?:period|year)\b|"
    r"^(?:balance,?\s+)?beginning(?:\s+of\s+year)?\s+balance\b|^balance,?\s+beginning\b|"
    r"^(?:balance|balances)\s+(?:at|as\s+of)\s+(?:the\s+)?beginning\b|"
    r"\s[–-]\s*January\s+1$",
    re.I,
)
# "December 31, 2024": the day a caption, a header cell or a column names
_MONTH_DAY = (
    r"(?:January|February|March|April|May|June|July|August|September|October|November|"
    r"December)\s+\d{1,2},\s+(?:19|20)\d{2}"
)
_AS_OF, _AS_OF_DAY, _PERIODISH = (
    re.compile(before + _MONTH_DAY + after, re.I)
    for before, after in (
        (r"\b(?:as\s+of|at)\s+(", ")"),  # the caption's "as of December 31, 2024"
        (r"\s*", r"\s*"),  # a header's label cell that is a day
        (r"(?:as\s+of\s+|at\s+)?", ""),
    )
)
_LABEL_DAY = re.compile(
    r"\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\.?\s+\d{1,2},\s+(?:19|20)\d{2}\b"
)
# a row label naming its own day ("Balance as of Jan 28, 2024"); a section of percentages
_DAY_CUE, _PCT_SECTION = map(
    lambda p: re.compile(p, re.I),
    (r"\b(?:as\s+of|at|balances?|declared|paid|outstanding)\b", r"\bpercent(?:age)?\b|%|\bmix\b"),
)
# "Shipments per day", "Average employees per store": things counted per unit, not money
_COUNT_RATE_ROW = re.compile(
    r"^(?:average\s+)?(?!(?:revenues|sales|earnings|costs|expenses|charges|fees|prices|"
    r"rates|yields|margins|proceeds|dollars)\b)[a-z][a-z-]*s\s+per\s+[a-z]",
    re.I,
)
# a holdings list's header: the entity column and the ownership column
HOLDINGS_HEAD = re.compile(r"\bsubsidiar|\bname\b|\bentity\b|\bcompany\b", re.I)
HOLDINGS_PCT = re.compile(r"\bown(?:ed|ership)\b|\binterest\b|%\s*(?:held|owned)", re.I)
_PER_UNIT_ROW = re.compile(  # "Revenue per hundredweight", "Average charter rate per day"
    r"\bper\s+(?!(?:basic\s+|diluted\s+|common\s+)?share\b)[a-z][a-z-]*", re.I
)
_ROW_UNIT_PAREN = re.compile(r"\([^()]{1,20}\)\s*$")  # "Revenue (GBP m)", "EBIT (€m)"
_ROW_SCALE = re.compile(r"\s*\((?:[$€£¥]\s*)?in\s+(?:thousands|millions|billions)\)", re.I)
MAX_TITLE_WORDS = 6


# a page's running head, not a table's title: "Table of Contents", "Index", a page number
_PAGE_HEAD = re.compile(r"^(?:table\s+of\s+contents|index|page\s+\d+|\d+)$", re.I)


def table_title(caption: str, context: str, v: TableVocab, names: tuple[str, ...] = ()) -> str:
    """A short title over the table ("Revenues", "Loss From Operations"): the caption rows
    first, then the lines just above it; "" when none is short and plain enough. A page's
    running head ("Table of Contents") and the filer's own name (``names``) are no title."""
    lead = re.compile(v.title_lead, re.I) if v.title_lead else None
    own = {" ".join(n.casefold().replace(".", "").split()) for n in names if n}
    for part in [*reversed(caption.split(" / ")), *reversed(context.split(" / "))]:
        text = _PARENS.sub(" ", part)
        m = lead.search(text) if lead else None
        text = text[m.end() :] if m else text
        text = " ".join(text.split()).strip(" :.-—")
        words = text.split()
        if not words or len(words) > MAX_TITLE_WORDS or not _LETTERS.search(text):
            continue
        if _PAGE_HEAD.match(text) or " ".join(text.casefold().replace(".", "").split()) in own:
            continue
        if text[0].islower():  # "es by Service Offering": a line cut mid-word, no title
            continue
        if _scale(text, v) or parse_period(text) or _PERIOD_WORDS.search(text):
            continue
        return _subject(text) or text
    # no short title: the subject of the sentence just above the table ("Revenue by
    # geographic area for fiscal 2024, 2023 and 2022 were as follows:")
    for part in [*reversed(caption.split(" / ")), *reversed(context.split(" / "))]:
        text = " ".join(_PARENS.sub(" ", part).split())
        if not text or _scale(text, v):
            continue
        return _subject(text)
    return ""


def _subject(text: str) -> str:
    """ "X were as follows:" / "X consisted of the following:" -> X, without its period."""
    m = _AS_FOLLOWS.search(text)
    if m is None or (m.start("subj") == 0 and text[0].islower()):  # cut mid-word
        return ""
    subject = _SUBJECT_TAIL.sub("", " ".join(m.group("subj").split())).strip(" ,/")
    if not subject or len(subject.split()) > MAX_SUBJECT_WORDS or not _LETTERS.search(subject):
        return ""
    return subject[0].upper() + subject[1:]


MAX_SUBJECT_WORDS = 12
_AS_FOLLOWS = re.compile(
    r"(?:^|[.;:]\s+)(?:the\s+|our\s+)?(?P<subj>[A-Za-z][^.;:]{2,160}?)\s+(?:were|was|are|is|"
    r"consisted|consist|consists|totaled|included)\s+(?:as\s+follows|of\s+the\s+following)"
    r"\s*:?\s*$",
    re.I,
)
# "... for fiscal 2024, 2023 and 2022", "... at December 31", "... as of January 31, 2025"
_SUBJECT_TAIL = re.compile(
    r"\s+(?:for|during|in|at|as\s+of|on)\s+(?:the\s+)?(?:fiscal|years?|periods?|quarters?|"
    r"[A-Z][a-z]+\s+\d|\d{4}|december|january|february|march|april|may|june|july|august|"
    r"september|october|november|each)\b.*$",
    re.I,
)


def _names_a_metric(label: str, v: TableVocab) -> bool:
    words = set(re.findall(r"[a-z]+|[\u3400-\u9fff]+", label.casefold()))
    return bool(words & set(v.metric_words)) or any(
        w in label for w in v.metric_words if not w.isascii()
    )


def _generic(label: str, v: TableVocab) -> bool:
    """A row label that alone names nothing: "Total", "Other", "Balance at end of period"."""
    key = label.casefold().strip(" :.")
    return key in v.generic_row_labels or (key.startswith("total") and len(key) <= 6)


# a row stating the share of the row above in a total ("Percentage of total revenue"): it
# names no metric of its own; "% of total company revenues" also says the table is one part
# (segment) of the company, which its rows do not name
_SHARE_ROW = re.compile(
    r"^(?:as\s+a\s+)?(?:%|percent(?:age)?)\s+of\s+(?:the\s+)?(?:total\s+)?"
    r"(?:company\s+|consolidated\s+)?(?:net\s+)?(?:revenues?|sales)\b",
    re.I,
)
_PART_ROW = re.compile(r"(?:%|percent(?:age)?)\s+of\s+total\s+company\b", re.I)
# Schedule I of a 10-K: the registrant alone, not the consolidated group
_PARENT_ONLY = re.compile(
    r"parent\s+company\s+only|condensed\s+financial\s+information\s+of\s+(?:the\s+)?registrant",
    re.I,
)


def _common_size(body: list[list[Cell]]) -> bool:
    """An income statement as percentages of revenue: a revenue (or sales, or total) row
    reads 100 % in every column and no amount of the table is money; its rows are shares
    of revenue, not the metrics' values."""
    parsed = [[parse_amount(c.text) for c in row[1:]] for row in body if row]
    if any(a.currency for row in parsed for a in row if a):
        return False
    for row, amounts in zip((r for r in body if r), parsed, strict=True):
        found = [a for a in amounts if a]
        if (
            len(found) >= 2
            and _HUNDRED_ROW.match(row[0].text)
            and all(a.percent and abs(a.value - 100) < 1e-9 for a in found)
        ):
            return True
    return False


_HUNDRED_ROW = re.compile(r"^\s*(?:total\s+|net\s+)*(?:revenues?|sales)\b", re.I)
# a section that says what its rows' amounts are: "Changes in operating assets and
# liabilities: Inventories" is a change, "Deferred tax liabilities: Equity investments" a tax
# item, never the balance the row label names alone
_QUALIFYING_SECTION = re.compile(
    r"^(?:changes?\s+in\b|\(?increase\)?\s*(?:/\s*)?\(?decrease\)?|\(?decrease\)?\s*(?:/\s*)?"
    r"\(?increase\)?|net\s+changes?\s+in\b|deferred\s+(?:income\s+)?tax\s+(?:assets|liabilities))",
    re.I,
)


def _metric_name(label: str, section: str, v: TableVocab, *, repeated: bool = False) -> str:
    """The row label, under its section when alone it names nothing ("Total", "Other"),
    when the same label sits under several sections ("Granted" under RSUs and PSUs), or
    when the section says what the amounts are ("Changes in operating assets and
    liabilities", "Deferred tax liabilities")."""
    generic = _generic(label, v)
    if section and (generic or repeated or _QUALIFYING_SECTION.match(section)):
        return f"{section.rstrip(' :–—-')}: {label}"
    return label


def _iso(p: Period) -> tuple[str, str]:
    return p.end.isoformat(), p.start.isoformat() if p.start else ""


_SHARE_OF = re.compile(r"\bpercent(?:age)?s?\s+of\b|%\s+of\b", re.I)


def _percent_columns(body: list[list[Cell]]) -> set[int]:
    """Columns whose first and last amounts are percentages and none is money: a tax-rate
    reconciliation's "%" column writes "%" on its first and total rows only, and its
    bare numbers ("1.7" under "21.0 %") are percentages too."""
    by_col: dict[int, list[Amount]] = {}
    for row in body:
        for j, c in enumerate(row[1:], start=1):
            if (a := parse_amount(c.text)) is not None:
                by_col.setdefault(j, []).append(a)
    return {
        j
        for j, amounts in by_col.items()
        if len(amounts) > 2
        and amounts[0].percent
        and amounts[-1].percent
        and not any(a.currency for a in amounts)
    }


def read_table(
    rows: list[list[Cell]],
    ctx: DocContext,
    *,
    context: str = "",
    span: tuple[int, int] = (-1, -1),
) -> TableRead:
    """Metric facts of ``ctx.main_entity`` from a parsed table, and what was dropped."""
    return read_frame(_frame(rows), ctx, context=context, span=span)


def frame_of(header: list[list[str]], body: list[list[Cell]], caption: str = "") -> _Frame:
    """A table whose header rows and body rows are already aligned cell for cell (an HTML
    grid read by its spans: ``html_tables``)."""
    width = max((len(r) for r in body), default=0)
    return _Frame([list(h) for h in header], body, width, caption)


def read_frame(
    frame: _Frame,
    ctx: DocContext,
    *,
    context: str = "",
    span: tuple[int, int] = (-1, -1),
    aligned: bool = False,
    report_end: date | None = None,
) -> TableRead:
    """``read_table`` past the parsing: ``aligned`` header rows already hold one cell per
    column (a spanning label repeated over its columns), so nothing is shifted or filled.
    ``report_end``: the last day the document reports on; a value column of a later period
    is a schedule (maturities, commitments), not a reported value: dropped
    (``future_period``)."""
    v = vocab()
    out = TableRead()
    align = (lambda h, w: [list(r) for r in h]) if aligned else _align_header
    header_text = " ".join(t for h in frame.header for t in h if t)
    around = f"{context} {frame.caption}"
    out.statement = _statement(f"{around} {header_text}", v)
    out.header_rows = len(frame.header)
    amounts = [
        (r, j, c) for r in frame.body for j, c in enumerate(r) if j > 0 and parse_amount(c.text)
    ]
    if not amounts:
        return out
    if not ctx.main_entity:
        out.dropped[Drop.NO_FILER] += len(amounts)
        return out
    fye = fiscal_year_end(f"{around} {header_text}")
    width = frame.width
    header = align(frame.header, width)
    cols = _columns(header, width, fye, v)
    if not any(c.period for c in cols):
        if _is_holdings(frame):  # "Name of Subsidiary | Percentage Owned": stakes
            out.candidates += _stakes(frame, ctx, span)
            return out
        if (
            _period_rows(frame, around) >= 2
        ):  # "October 2024 | 410,225 | $ 141.18": rows are periods
            _read_period_rows(out, frame, header, ctx, v, around, header_text, span)
            return out
        as_of = _AS_OF.findall(around)
        if len(set(as_of)) == 1 and header and aligned:
            # "Equity Compensation Plan Information (as of December 31, 2024)" over
            # columns naming no period: every column is that day's
            header = [["", *([as_of[0]] * (width - 1))], *header]
            cols = _columns(header, width, fye, v)
        if not any(c.period for c in cols):
            out.dropped[Drop.NO_HEADER] += len(amounts)
            return out
    out.columns = cols
    scale_text = f"{around} {' '.join(h[0] for h in header)}"
    table_scale = _scale(f"{scale_text} {header_text}", v)
    except_per_share = bool(re.search(v.except_per_share, scale_text, re.I))
    labels_text = " ".join(r[0].text for r in frame.body[:8] if r)
    table_currency = _currency(f"{around} {header_text}", v) or next(
        (
            a.currency
            for _, _, c in amounts
            if (a := parse_amount(c.text, f"{around} {header_text} {labels_text}")) and a.currency
        ),
        "",
    )
    section = ""
    title = table_title(frame.caption, context, v, (ctx.main_entity, *ctx.aliases))
    if not title and aligned:
        # "Approximate square footage (in millions)" over the one value column of a table
        # whose rows are places: the column names what the rows measure
        names = {_column_name(_PERIODISH.sub("", c.header)) for c in cols if c.kind == "value"}
        names.discard("")
        if len(names) == 1 and not any(parse_period(n) for n in names):
            title = names.pop()
    out.title = title
    labels_all = [strip_footnotes(r[0].text, v) for r in frame.body if r]
    if any(_PART_ROW.search(lb) for lb in labels_all):
        out.dropped[Drop.PART_UNNAMED] += len(amounts)  # whose part? the rows do not say
        return out
    if _common_size(frame.body):
        out.dropped[Drop.SHARE_OF_TOTAL] += len(amounts)  # "Revenue 100.0 %": shares of it
        return out
    parent_only = bool(_PARENT_ONLY.search(around))
    instant_re = v.instant_re()
    labels = Counter(strip_footnotes(r[0].text, v).casefold() for r in frame.body if r)
    pending: list[list[str]] = []  # a header repeated inside the body ("As of ... 2018")
    pct_section = False
    # the columns' periods come from their own header cells, not a "Fiscal 2024" label
    own_periods = any(parse_period(h[c.index]) for h in header for c in cols if c.index < len(h))
    prev_label = ""
    # "... expressed as a percentage of revenue": shares of a total, not the rows' values
    pct_cols = set() if _SHARE_OF.search(around) else _percent_columns(frame.body)
    for row in frame.body:
        label = strip_footnotes(row[0].text, v) if row else ""
        data = row[1:]
        values = [(j, c, parse_amount(c.text)) for j, c in enumerate(data, start=1)]
        values = [
            (j, c, replace(a, percent=True) if a and j in pct_cols and not a.percent else a)
            for j, c, a in values
        ]
        n_amounts = sum(1 for _, _, a in values if a)
        if n_amounts == 0:
            if any(c.text for c in data):
                pending.append([c.text for c in row])
            elif label and _LETTERS.search(label):
                section = label.rstrip(":")
                pct_section = bool(_PCT_SECTION.search(section))
                # "Fiscal 2023" heading the rows under it, in a table whose columns name
                # no period (segments across, years down): those rows' period
                row_period = parse_period(section, fye) if len(section) < 60 else None
                if row_period and not own_periods:
                    cols = [replace(c, period=row_period) if c.kind == "value" else c for c in cols]
                    out.columns = cols
            continue
        if pending:
            if any(parse_period(t) for h in pending for t in h[1:]):
                cols = _columns(align(pending, width), width, fye, v)
                out.columns = cols
            pending = []
        if not label or not _LETTERS.search(label) or parse_amount(label) is not None:
            out.dropped[Drop.NO_ROW_LABEL] += n_amounts
            continue
        all_pct = all(a.percent for _, _, a in values if a)
        # a section of percentages writes "%" on its first row only (Amazon's "Net Sales
        # Mix", "Year-over-year Percentage Growth"): its bare numbers are percentages
        pct_rows = pct_section and not any(a.currency for _, _, a in values if a)
        if all_pct and label.casefold() == prev_label.casefold():
            # "Americas $132,426" then "Americas 46.5%": the second row is its share
            out.dropped[Drop.SHARE_OF_TOTAL] += n_amounts
            continue
        prev_label = label
        if not aligned and len(row) < width and any(len(h) > len(row) for h in frame.header):
            out.dropped[Drop.MISALIGNED] += n_amounts  # cells lost: the columns do not line up
            continue
        words = label.split()
        if len(words) > MAX_NAME_WORDS or len(label) > MAX_NAME_CHARS:
            out.dropped[Drop.NO_ROW_LABEL] += n_amounts
            continue
        # "Basic" under "Net loss per share:": the section names the unit
        row_unit = _row_unit(label, v) or (
            _row_unit(section, v) if section and not _names_a_metric(label, v) else ""
        )
        row_scale = _scale(label, v)  # "Revenue (in thousands)": the row states its own
        paren = _ROW_UNIT_PAREN.search(label)  # "Revenue (GBP m)": its currency too
        row_currency = _currency(paren.group(0), v) if paren else ""
        if row_scale or row_currency:
            label = _ROW_SCALE.sub("", label).strip() or label
            if paren and row_currency:
                label = label.replace(paren.group(0), "").strip() or label
        instant = out.statement == "balance_sheet" or bool(instant_re and instant_re.search(label))
        if _SHARE_ROW.match(label):
            out.dropped[Drop.SHARE_OF_TOTAL] += n_amounts  # the share of the row above
            continue
        metric = _metric_name(label, section, v, repeated=labels[label.casefold()] > 1)
        bare = metric == label and _generic(label, v)  # "Total" under no section
        if title and (bare or not _names_a_metric(label, v)):
            metric = f"{title}: {metric}"  # "Revenues: Commercial Airplanes", not a bare name
        elif bare:
            out.dropped[Drop.METRIC_GENERIC] += n_amounts
            continue
        if parent_only:
            metric = f"Parent company only: {metric}"
        cents = bool(_CENTS.search(label))
        row_day = _row_day(label)
        row_cands: list[Candidate] = []
        for j, cell, amount in values:
            if amount is None:
                continue  # blank, a dash or text: not an amount
            col = cols[j - 1] if j - 1 < len(cols) else None
            if col is not None and col.kind == "pct_of_total":
                out.dropped[Drop.SHARE_OF_TOTAL] += 1
                continue
            if col is not None and col.kind == "repeated_change":
                out.dropped[Drop.REPEATED_CHANGE] += 1
                continue
            if col is None or col.period is None:
                out.dropped[Drop.PERIOD_UNKNOWN] += 1
                continue
            if report_end and col.period.end > report_end + timedelta(days=7):
                out.dropped[Drop.FUTURE] += 1
                continue
            if row_day is not None and col.kind == "value" and col.prior is None:
                # "Balance as of Jan 28, 2024", "Dividends declared March 14, 2024": the
                # row's own day, not its column's year
                col = replace(col, period=row_day)
            if pct_rows and not amount.percent and row_unit != "%":
                amount = replace(amount, percent=True)  # "International 11" under "12 %"
            # "Approximate square footage" / "# of shares to be issued" over the column: its
            # unit where the row names none (or only a count of places: "locations")
            # the column's own (lowest) header cell, not a label spanning several columns
            # ("Basic Earnings Per Share" over "Income Allocation | Shares | Earnings per Share")
            leaf = next(
                (h[col.index] for h in reversed(header) if col.index < len(h) and h[col.index]),
                col.header,
            )
            col_words = re.sub(v.except_per_share, " ", _PARENS.sub(" ", leaf), flags=re.I)
            col_unit = _row_unit(col_words, v) if col.kind == "value" else ""
            if col_unit in ("sq ft", "shares", "USD/share") and row_unit in ("", "count"):
                cell_unit = col_unit
            else:
                cell_unit = row_unit
            unit, value = _unit_value(
                amount,
                col,
                cell_unit,
                row_scale or table_scale,
                except_per_share,
                row_currency or table_currency,
                bool(_PER_UNIT_ROW.search(label)),
                bool(_COUNT_RATE_ROW.match(label)),
            )
            if cents and unit.endswith("/share"):
                value = round(value / 100, 6)  # "EPS (cents)": base unit is the currency
            if unit in (Drop.UNIT_UNKNOWN, Drop.SCALE_UNKNOWN):
                out.dropped[unit] += 1
                continue
            if col.kind == "change_amount" and unit in ("%", "bp"):  # "Change" over "7%"
                col = replace(col, kind="pct_change" if unit == "%" else "bp_change")
            row_cands.append(
                _candidate(
                    ctx,
                    f"{metric} ({col.qualifier})" if col.qualifier else metric,
                    label,
                    section,
                    out.statement,
                    col,
                    cell,
                    row,
                    value,
                    unit,
                    span,
                    instant,
                )
            )
        kept = fold_changes(row_cands)
        out.folded += len(row_cands) - len(kept)
        out.candidates += kept
    return out


MAX_FACT_PROPS = 16  # a Triple holds 20 attributes; the verifier adds a few


def fold_changes(cands: list[Candidate]) -> list[Candidate]:
    """A change cell of a row ("7%", "$ 267", "(12) bp" under "Change") becomes attributes
    of the row's value fact of the later period (``change_value`` + ``change_unit`` for a %
    or bp change, ``change_bp`` for a bp change beside a % one, ``change_amount`` for one in
    the currency, ``compared_to``): it restates
    two reported values, so it is no fact of its own. A change with no value fact of its
    period in the row (a change-only table) stays a change fact."""
    values = {
        (c.tail, c.props.get("period")): c for c in cands if c.props.get("column_kind") == "value"
    }
    kept: list[Candidate] = []
    for c in cands:
        kind = c.props.get("column_kind")
        later = str(c.props.get("period", "")).split(" vs ")[0]
        target = values.get((c.tail, later)) if kind != "value" else None
        if target is None:
            kept.append(c)
            continue
        tp = target.props
        if kind == "change_amount":
            if "change_amount" in tp or len(tp) >= MAX_FACT_PROPS:
                kept.append(c)
                continue
            tp["change_amount"] = c.props["value"]
        elif "change_value" not in tp and len(tp) < MAX_FACT_PROPS - 1:
            tp["change_value"], tp["change_unit"] = c.props["value"], c.props["unit"]
        elif kind == "bp_change" and "change_bp" not in tp and len(tp) < MAX_FACT_PROPS:
            tp["change_bp"] = c.props["value"]  # beside a % change
        else:
            kept.append(c)
            continue
        prior = str(c.props.get("period", "")).partition(" vs ")[2]
        if prior and len(tp) < MAX_FACT_PROPS:
            tp.setdefault("compared_to", prior)
    return kept


def _is_holdings(frame: _Frame) -> bool:
    head = frame.header[-1] if frame.header else []
    return (
        len(head) >= 2
        and bool(HOLDINGS_HEAD.search(head[0]))
        and bool(HOLDINGS_PCT.search(head[-1]))
    )


def _stakes(frame: _Frame, ctx: DocContext, span: tuple[int, int]) -> list[Candidate]:
    """The filer's stake in each subsidiary of a holdings list ("Tessaro Diagnostics
    S.p.A. | 65%"): ``HAS_STAKE_IN`` with ``stake_pct``."""
    out = []
    for row in frame.body:
        if len(row) < 2:
            continue
        name, pct = strip_footnotes(row[0].text), parse_amount(row[-1].text)
        if pct is None or not pct.percent or not 0 < pct.value <= 100 or not _LETTERS.search(name):
            continue
        if name.casefold().startswith("total"):
            continue
        s, e = span
        if row[0].start >= 0:
            s, e = row[0].start, row[-1].start + len(row[-1].text)
        out.append(
            Candidate(
                ctx.main_entity,
                ctx.main_type,
                "HAS_STAKE_IN",
                name,
                "Company",
                s,
                e,
                Component.TABLE,
                "table_holdings",
                None,
                {"stake_pct": pct.value, "raw": row[-1].text[:20]},
                0.85,
            )
        )
    return out


def _period_rows(frame: _Frame, context: str = "") -> int:
    return sum(
        1
        for r in frame.body
        if r and (parse_span(strip_footnotes(r[0].text)) or _month_in(r[0].text, context))
    )


_QUARTER_ENDED = re.compile(
    r"\bquarter\s+ended\s+(?:January|February|March|April|May|June|July|August|September|"
    r"October|November|December)\s+\d{1,2},\s+((?:19|20)\d{2})",
    re.I,
)


def _month_in(label: str, context: str) -> Period | None:
    """ "October" in a table of the months of "the quarter ended December 31, 2024": that
    month of the quarter's year (a month after the quarter's end is no match)."""
    m = _QUARTER_ENDED.search(context) if context else None
    name = strip_footnotes(label).strip().rstrip(".").lower()
    if not m or name not in MONTHS_FULL:
        return None
    return parse_span(f"{name.capitalize()} {m.group(1)}")


_COLUMN_NAME_CUT = re.compile(
    r"^(?:total\s+number\s+of\s+|number\s+of\s+|total\s+|approximate\s+)|"
    r"\s+(?:as\s+part\s+of|that\s+may|under\s+the)\b.*$|\s*\([^)]*\)\s*$",
    re.I,
)


def _column_name(text: str) -> str:
    """A column header as a metric name the verifier keeps (five words at most, words of
    the header): "Total Number of Shares Purchased as Part of Publicly Announced Plans" ->
    "Shares Purchased"; "Dollar Value Remaining (in millions)" -> "Dollar Value Remaining"."""
    name = " ".join(text.split())
    for _ in range(3):
        cut = _COLUMN_NAME_CUT.sub("", name).strip()
        if cut == name:
            break
        name = cut
    return name if 0 < len(name.split()) <= 5 else ""


def _read_period_rows(
    out: TableRead,
    frame: _Frame,
    header: list[list[str]],
    ctx: DocContext,
    v: TableVocab,
    around: str,
    header_text: str,
    span: tuple[int, int],
) -> None:
    """A table whose rows are the periods (an issuer-purchases table: "October 2024 |
    410,225 | $ 141.18 | $ 1,071"): one fact per row and column, the column's header its
    metric, the row's stretch of days its period. A "Total" row has no period of its own
    and gives nothing; share counts are read as written (these tables print them whole)."""
    line = max(header, key=lambda h: len({t for t in h[1:] if t})) if header else []
    table_scale = _scale(around, v)  # a column's own "(in millions)" is that column's
    table_currency = _currency(f"{around} {header_text}", v) or next(
        (
            a.currency
            for r in frame.body
            for c in r[1:]
            if (a := parse_amount(c.text)) and a.currency
        ),
        "",
    )
    for row in frame.body:
        if not row:
            continue
        period = parse_span(strip_footnotes(row[0].text)) or _month_in(row[0].text, around)
        cells = [(j, c, parse_amount(c.text)) for j, c in enumerate(row[1:], start=1)]
        if period is None:
            out.dropped[Drop.PERIOD_UNKNOWN] += sum(1 for _, _, a in cells if a)
            continue
        for j, cell, amount in cells:
            head = line[j] if j < len(line) else ""
            metric = _column_name(strip_footnotes(head, v))
            if amount is None or not metric:
                if amount is not None:
                    out.dropped[Drop.NO_ROW_LABEL] += 1
                continue
            money = re.search(r"\bdollar\s+value\b|\$|\bprice\b|\bamount\b", head, re.I)
            row_unit = _row_unit(head, v) or (
                "shares" if re.search(r"\bshares\b", head, re.I) and not money else ""
            )
            scale = _scale(head, v) or table_scale
            if row_unit == "shares" and not amount.currency and scale is None:
                scale = 1.0  # "410,225" shares: whole counts
            col = Column(j, head, "value", period)
            unit, value = _unit_value(
                amount, col, row_unit, scale, False, amount.currency or table_currency
            )
            if unit in (Drop.UNIT_UNKNOWN, Drop.SCALE_UNKNOWN):
                out.dropped[unit] += 1
                continue
            out.candidates.append(
                _candidate(
                    ctx, metric, metric, "", out.statement, col, cell, row, value, unit, span
                )
            )


def _unit_value(
    a: Amount,
    col: Column,
    row_unit: str,
    scale: float | None,
    except_per_share: bool,
    currency: str,
    rate_row: bool = False,
    count_row: bool = False,
) -> tuple[str, float]:
    """(unit, value in base units), or (drop reason, 0). ``rate_row``: the row is an amount
    per unit of something other than a share ("Revenue per container"): its currency
    cells are read as written, never scaled by the table's "(in millions)"."""
    if col.kind == "bp_change" or a.bp:
        return "bp", a.value
    if col.kind == "pct_change" or a.percent or (col.percent and col.kind != "change_amount"):
        return "%", a.value
    if row_unit == "%":
        return "%", a.value
    cur = currency or a.currency  # the table's stated currency over a cell's bare sign
    if rate_row and cur and a.currency:  # "$ 32.47" per hundredweight: a rate, no scale
        return cur, a.value
    if count_row and not a.currency and not row_unit:  # "Shipments per day  61,210"
        return "count", a.value
    if row_unit == "USD/share":
        return (f"{cur}/share", a.value) if cur else (Drop.UNIT_UNKNOWN, 0.0)
    if row_unit == "shares" and not a.currency and scale is None:
        if abs(a.value) >= 1e6 and a.value == int(a.value):
            return "shares", a.value  # "68,303,017": whole shares, printed in full
        return Drop.SCALE_UNKNOWN, 0.0  # '275' shares is 275 million more often than not
    if row_unit == "sq ft" and not a.currency:
        return "sq ft", a.value * (scale or 1)
    if row_unit in ("shares", "count", "tons") and not a.currency:
        factor = scale if scale and (row_unit == "shares" or not except_per_share) else 1
        return row_unit, a.value * factor
    if not cur:
        return Drop.UNIT_UNKNOWN, 0.0
    if scale is None:
        return Drop.SCALE_UNKNOWN, 0.0
    return cur, round(a.value * scale, 6)


def _row_day(label: str) -> Period | None:
    """The one full date a row label names ("Balance as of Jan 28, 2024"), as an instant."""
    days = _LABEL_DAY.findall(label)
    if len(days) != 1 or not _DAY_CUE.search(label):
        return None  # "Notes due May 15, 2026" names a maturity, not the row's day
    p = parse_period(days[0])
    return Period(p.end.isoformat(), p.end, None) if p is not None else None


def _year_before(d: date) -> date:
    try:
        return d.replace(year=d.year - 1)
    except ValueError:  # February 29
        return d.replace(year=d.year - 1, day=28)


def _candidate(
    ctx: DocContext,
    metric: str,
    label: str,
    section: str,
    statement: str,
    col: Column,
    cell: Cell,
    row: list[Cell],
    value: float,
    unit: str,
    span: tuple[int, int],
    instant: bool = False,
) -> Candidate:
    assert col.period is not None
    if col.prior is None and _OPENING.search(label):
        # "Cash ..., beginning of period" under FY2024: the balance on the day before it;
        # under "January 26, 2025" in a roll-forward: a year before that date
        p = col.period
        opening = p.start - timedelta(days=1) if p.start else _year_before(p.end)
        col = replace(col, period=Period(opening.isoformat(), opening, None))
    end, start = _iso(col.period)
    if instant and col.prior is None:
        start = ""  # a balance: the amount at the period's end, not over the period
    props: dict[str, str | float] = {
        "value": value,
        "unit": unit,
        "period_end": end,
        "column_kind": col.kind,
        "raw": cell.text[:60],
        "row_label": label[:MAX_NAME_CHARS],
    }
    if start:
        props["period_start"] = start
    if col.period.fiscal_year:
        props["fiscal_year"] = float(col.period.fiscal_year)
    if col.period.basis != "stated":
        props["period_basis"] = col.period.basis
    if col.prior is not None:
        props["period"] = f"{col.period.label} vs {col.prior.label}"
        props["compared_to_end"] = col.prior.end.isoformat()
    else:
        props["period"] = col.period.label
    if section:
        props["section"] = section[:80]
    if statement:
        props["statement"] = statement
    s, e = span
    if row[0].start >= 0 and cell.start >= 0:
        s, e = row[0].start, cell.start + len(cell.text)
    # A change is known at the end of its later period; starting it there also keeps it
    # apart from the value fact of the same metric (the graph keys a fact by its start).
    when = col.period.end if col.prior is not None else (col.period.start if start else None)
    when = when or col.period.end
    return Candidate(
        ctx.main_entity,
        ctx.main_type,
        "DISCLOSES",
        metric,
        "FinMetric",
        s,
        e,
        Component.TABLE,
        "table_change" if col.prior is not None else "table_value",
        datetime(when.year, when.month, when.day, tzinfo=UTC),
        props,
        0.9,
    )


def table_facts(
    rows: list[list[Cell]], ctx: DocContext, *, context: str = "", span: tuple[int, int] = (-1, -1)
) -> list[Candidate]:
    """The facts of ``read_table`` alone (what was dropped is in ``read_table``'s result)."""
    return read_table(rows, ctx, context=context, span=span).candidates


def read_chunk_table(text: str, ctx: DocContext, *, context: str = "") -> TableRead:
    """A table chunk (HTML or Markdown) -> its facts; spans index ``text``."""
    rows = parse_html(text) if "<t" in text.lower() else parse_markdown(text)
    return read_table(rows, ctx, context=context, span=(0, len(text)))
