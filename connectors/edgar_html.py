"""A filing's HTML tables kept as tables: their grid (rows, cells, column and row spans)
and the lines above them, for the extractor to read by structure.

``connectors.text.html_document`` flattens a table to rows of its non-empty cells, which
loses which header cell spans which numbers (a 10-K's "$" / number / ")" cells under one
"2024" header). ``filing_document`` keeps its text and replaces each flattened table by
one cell holding the table as plain HTML: ``<table><caption>`` the short lines above it
(title, "(in millions, except per share data)") ``</caption><tr><td colspan="3">``... with
the spans, the cells' text and nothing else (no styles, no inline XBRL). The extractor
(``kg.extract.html_tables``) reads such a cell as a grid.
"""

from __future__ import annotations

import html as htmlmod
import re

import lxml.etree
import lxml.html

from connectors.text import HtmlDoc, html_document

_WS = re.compile(r"\s+")
MAX_TABLE_HTML = 120_000
CAPTION_LINES = 4


def _tag(el: lxml.etree._Element) -> str:
    t = el.tag if isinstance(el.tag, str) else ""
    return t.split("}")[-1].lower()


def _cell_text(el: lxml.etree._Element) -> str:
    return _WS.sub(" ", " ".join(el.itertext())).replace("\xa0", " ").strip()


def _hidden(el: lxml.etree._Element) -> bool:
    for a in [el, *el.iterancestors()]:
        if _tag(a) in ("script", "style", "head", "ix:header", "title"):
            return True
        if "display:none" in (a.get("style") or "").replace(" ", "").lower():
            return True
    return False


def _int(v: str | None, cap: int) -> int:
    try:
        return max(1, min(int(v or 1), cap))
    except ValueError:
        return 1


def table_html(table: lxml.etree._Element, caption: str = "") -> str:
    """The table as plain HTML: rows, cells with their spans, text only."""
    out = ["<table>"]
    if caption:
        out.append(f"<caption>{htmlmod.escape(caption)}</caption>")
    for tr in table.iter("tr"):
        cells = []
        for td in tr:
            if _tag(td) not in ("td", "th"):
                continue
            span = _int(td.get("colspan"), 120)
            rspan = _int(td.get("rowspan"), 20)
            attrs = (f' colspan="{span}"' if span > 1 else "") + (
                f' rowspan="{rspan}"' if rspan > 1 else ""
            )
            cells.append(f"<td{attrs}>{htmlmod.escape(_cell_text(td))}</td>")
        if cells:
            out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</table>")
    return "".join(out)


def _caption(text: str, pos: int, since: int = 0) -> str:
    above = text[max(0, since, pos - 2000) : pos]
    # the lines above, not the rows of a table above (tab-separated in the text)
    lines = [" ".join(ln.split()) for ln in above.splitlines() if ln.strip() and "\t" not in ln]
    # a long line is the paragraph that ends "... as follows (in millions):"
    return " / ".join(ln[-160:] for ln in lines[-CAPTION_LINES:])


def is_table_html(rows: list[list[str]]) -> bool:
    """A record table that is one cell of ``table_html`` (not rows of cells)."""
    return len(rows) == 1 and len(rows[0]) == 1 and rows[0][0].startswith("<table")


def filing_document(source: str | bytes) -> HtmlDoc:
    """``html_document(with_tables=True)``, each table as one cell of plain HTML."""
    doc = html_document(source, with_tables=True)
    if not doc.tables:
        return doc
    try:
        root = lxml.html.fromstring(source)
    except (lxml.etree.ParserError, ValueError):
        return doc
    grids = []
    for t in root.iter():
        if _tag(t) != "table" or any(_tag(a) == "table" for a in t.iterancestors()):
            continue
        if _hidden(t):
            continue
        if any(_cell_text(td) for td in t.iter() if _tag(td) in ("td", "th")):
            grids.append(t)
    if len(grids) != len(doc.tables):  # the two readings disagree: keep the flat rows
        return doc
    tables = []
    since = 0  # the end of the table above: its one-cell rows are no caption of this one
    for el, pos, rows in zip(grids, doc.table_pos, doc.tables, strict=True):
        markup = table_html(el, _caption(doc.text, pos, since))
        last = "\t".join(rows[-1]) if rows else ""
        at = doc.text.find(last, pos) if last else -1
        since = at + len(last) if at >= 0 else pos
        tables.append([[markup]] if len(markup) <= MAX_TABLE_HTML else rows)
    return HtmlDoc(doc.text, tables, list(doc.table_pos))
