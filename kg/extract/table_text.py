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

from kg.extract.table_periods import parse_period
from kg.extract.tables import parse_amount

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
    fye = _FYE_PHRASE.search(text[:20_000])
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
_FYE_PHRASE = re.compile(
    r"\b(?:fiscal\s+)?years?\s+ended\s+(January|February|March|April|May|June|July|August|"
    r"September|October|November|December)\s+(\d{1,2})\b",
    re.I,
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
