"""Small text helpers shared by connectors: HTML to text and tables, cashtags, dates."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import lxml.etree
import lxml.html

CASHTAG = re.compile(r"(?<![\w$])\$([A-Za-z]{1,6}(?:\.[A-Za-z]{1,2})?)\b")
_WS = re.compile(r"[ \t\r\f\v]+")
_BLANKS = re.compile(r"\n\s*\n+")


def cashtags(text: str) -> list[str]:
    """``$AAPL`` -> ``AAPL`` in order of first appearance (the text itself is kept verbatim)."""
    seen: dict[str, None] = {}
    for m in CASHTAG.finditer(text):
        seen.setdefault(m.group(1).upper(), None)
    return list(seen)


def parse_time(value: object) -> datetime | None:
    """ISO 8601, RFC 822 (RSS) or epoch seconds -> aware UTC; None if unparsable.

    Out-of-range input (epoch 1e20, NaN, year 1 with a positive offset) is unparsable
    too: a source's bad date must not raise out of a connector's poll.
    """
    if value is None or value == "":
        return None
    try:
        if isinstance(value, datetime):
            dt = value
        elif isinstance(value, int | float):
            dt = datetime.fromtimestamp(float(value), UTC)
        else:
            s = str(value).strip()
            try:
                dt = datetime.fromisoformat(s.replace("Z", "+00:00"))
            except ValueError:
                dt = parsedate_to_datetime(s)
        return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)
    except (TypeError, ValueError, OverflowError, OSError):
        return None


@dataclass
class HtmlDoc:
    text: str
    tables: list[list[list[str]]] = field(default_factory=list)
    table_pos: list[int] = field(default_factory=list)  # char offset of each table in text


def html_to_text(html: str | bytes) -> str:
    return html_document(html).text


def html_document(html: str | bytes, *, with_tables: bool = False) -> HtmlDoc:
    """Visible text (block elements become line breaks) and, optionally, tables as rows.

    Each table is also left in the text as tab-separated rows so no content is lost to
    readers of ``text`` alone; ``table_pos`` says where it sits.
    """
    if not html.strip():
        return HtmlDoc("")
    try:
        root = lxml.html.fromstring(html)
    except lxml.etree.ParserError:  # markup without one element ("</x"): nothing to read
        return HtmlDoc("")
    # Inline-XBRL filings hide a machine-readable header (ix:header in a display:none
    # div); it is not part of the document a reader sees.
    drop = [
        el
        for el in root.iter()
        if isinstance(el.tag, str)
        and (
            el.tag.lower() in ("script", "style", "head", "ix:header", "title")
            or "display:none" in (el.get("style") or "").replace(" ", "").lower()
        )
    ]
    for el in drop:
        if el.getparent() is not None:
            el.drop_tree()
    parts: list[str] = []
    doc = HtmlDoc("")
    block = {"p", "div", "br", "tr", "li", "h1", "h2", "h3", "h4", "h5", "h6", "table"}

    def cell_text(el: object) -> str:
        return _WS.sub(" ", " ".join(el.itertext())).strip()  # type: ignore[attr-defined]

    def walk(el: object) -> None:
        tag = el.tag if isinstance(el.tag, str) else ""  # type: ignore[attr-defined]
        tag = tag.split("}")[-1].lower()
        if tag == "table":
            rows = []
            for tr in el.iter("tr"):  # type: ignore[attr-defined]
                cells = [
                    cell_text(td)
                    for td in tr
                    if isinstance(td.tag, str) and td.tag.lower() in ("td", "th")
                ]
                cells = [c for c in cells if c]
                if cells:
                    rows.append(cells)
            if rows:
                offset = sum(len(p) for p in parts)
                parts.append("\n" + "\n".join("\t".join(r) for r in rows) + "\n")
                if with_tables:
                    doc.tables.append(rows)
                    doc.table_pos.append(offset)
            if el.tail:  # type: ignore[attr-defined]
                parts.append(el.tail)  # type: ignore[attr-defined]
            return
        if el.text:  # type: ignore[attr-defined]
            parts.append(el.text)  # type: ignore[attr-defined]
        for child in el:  # type: ignore[attr-defined]
            walk(child)
        if tag in block:
            parts.append("\n")
        if el.tail:  # type: ignore[attr-defined]
            parts.append(el.tail)  # type: ignore[attr-defined]

    walk(root)
    raw = "".join(parts).replace("\xa0", " ")
    lines = [_WS.sub(" ", ln).strip() if "\t" not in ln else ln.strip() for ln in raw.split("\n")]
    # keep positions roughly right: recompute table offsets after whitespace cleanup
    text = _BLANKS.sub("\n\n", "\n".join(lines)).strip()
    if with_tables and doc.tables:
        positions = []
        cursor = 0
        for rows in doc.tables:
            first = "\t".join(rows[0])
            at = text.find(first, cursor)
            positions.append(at if at >= 0 else cursor)
            cursor = max(cursor, at if at >= 0 else cursor)
        doc.table_pos = positions
    doc.text = text
    return doc
