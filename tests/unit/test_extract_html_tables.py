"""10-K tables read from the filing's HTML by their grid (issue 43), the same tables
flattened to pipe rows, and the EDGAR connector's table cells through the extractor.

The HTML here is written for these tests (an invented filer); the dev-filings test reads
../shared/data/real_docs_dev/10k_html and skips when it is absent."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from connectors.edgar_html import filing_document, is_table_html
from kg.extract import html_tables as H
from kg.extract.pipeline import ExtractDoc, Extractor, bundled_index
from kg.extract.table_periods import FiscalYearEnd, parse_period
from kg.extract.tables import fiscal_note, report_end
from kg.extract.types import Candidate, DocContext

CTX = DocContext(doc_id="t", kind="filing", main_entity="Acme Corp")

COVER = "<p>FORM 10-K</p><p>For the fiscal year ended December 31, 2024</p>"
# oldest year first, "$" and ")" in cells of their own, the years spanning three cells
INCOME = """
<p>CONSOLIDATED STATEMENTS OF OPERATIONS</p><p>(in millions, except per share data)</p>
<table>
<tr><td colspan="3"></td><td colspan="9">Year Ended December 31,</td></tr>
<tr><td colspan="3"></td><td colspan="3">2022</td><td colspan="3">2023</td>
<td colspan="3">2024</td></tr>
<tr><td colspan="3">Net sales</td><td>$</td><td>1,000</td><td></td><td>$</td><td>1,200</td>
<td></td><td>$</td><td>1,500</td><td></td></tr>
<tr><td colspan="3">Other income (expense), net</td><td colspan="2">(12</td><td>)</td>
<td colspan="2">&#8212;</td><td></td><td colspan="2">7</td><td></td></tr>
<tr><td colspan="3">Diluted earnings per share</td><td>$</td><td>1.10</td><td></td><td>$</td>
<td>1.25</td><td></td><td>$</td><td>1.61</td><td></td></tr>
</table>"""
# a "% of net sales" column beside each year's amount, and a change column
MIX = """
<p>Segment results (dollars in millions)</p>
<table>
<tr><td></td><td colspan="4">2024</td><td colspan="4">2023</td><td colspan="2">% Change</td></tr>
<tr><td></td><td colspan="2">Amount</td><td colspan="2">% of net sales</td><td colspan="2">Amount</td>
<td colspan="2">% of net sales</td><td colspan="2"></td></tr>
<tr><td>Retail</td><td>$</td><td>900</td><td>60</td><td>%</td><td>$</td><td>800</td><td>67</td>
<td>%</td><td>13</td><td>%</td></tr>
<tr><td>Wholesale</td><td></td><td>600</td><td>40</td><td>%</td><td></td><td>400</td><td>33</td>
<td>%</td><td>50</td><td>%</td></tr>
<tr><td>Total</td><td>$</td><td>1,500</td><td>100</td><td>%</td><td>$</td><td>1,200</td><td>100</td>
<td>%</td><td>25</td><td>%</td></tr>
</table>"""
# a maturity schedule: years after the report's end are no reported values
MATURITIES = """
<p>Principal payments on long-term debt (in millions)</p>
<table>
<tr><td></td><td colspan="2">2025</td><td colspan="2">2026</td><td colspan="2">2027</td></tr>
<tr><td>Senior notes</td><td>$</td><td>250</td><td>$</td><td>300</td><td>$</td><td>450</td></tr>
<tr><td>Term loan</td><td></td><td>50</td><td></td><td>75</td><td></td><td>100</td></tr>
</table>"""

FILING = f"<html><body>{COVER}{INCOME}{MIX}{MATURITIES}</body></html>"


def facts(html: str = FILING) -> dict[tuple[str, str], dict[str, object]]:
    f = H.read_filing(html)
    out = {}
    for t in f.tables:
        read, _ = H.table_facts(t, CTX, f.fiscal, f.report_end)
        for c in read.candidates:
            out[(c.tail, str(c.props["period"]))] = c.props
    return out


def test_every_value_takes_its_period_from_its_own_header_column() -> None:
    got = facts()
    assert got[("Net sales", "FY2022")]["value"] == 1_000e6  # the oldest year, first column
    assert got[("Net sales", "FY2024")]["value"] == 1_500e6
    assert got[("Net sales", "FY2024")]["period_end"] == "2024-12-31"
    assert got[("Other income (expense), net", "FY2022")]["value"] == -12e6  # "(12" + ")"
    assert ("Other income (expense), net", "FY2023") not in got  # an em-dash is no amount
    eps = got[("Diluted earnings per share", "FY2024")]
    assert eps["value"] == 1.61 and eps["unit"] == "USD/share"  # "except per share data"


def test_percent_of_sales_columns_are_no_facts_and_the_change_folds_into_the_value() -> None:
    got = facts()
    retail = got[("Segment results: Retail", "FY2024")]  # the table's title names the rows
    assert retail["value"] == 900e6 and retail["unit"] == "USD"
    assert got[("Segment results: Retail", "FY2023")]["value"] == 800e6
    assert retail.get("change_value") == 13.0 and retail.get("change_unit") == "%"
    assert not any(p.get("unit") == "%" and p.get("column_kind") == "value" for p in got.values())
    wholesale = got[("Segment results: Wholesale", "FY2023")]
    assert wholesale["value"] == 400e6  # not its "% of net sales" neighbour (33)


def test_columns_after_the_report_end_are_dropped_with_their_reason() -> None:
    f = H.read_filing(FILING)
    assert f.report_end is not None and f.report_end.isoformat() == "2024-12-31"
    read, _ = H.table_facts(f.tables[2], CTX, f.fiscal, f.report_end)
    assert read.candidates == []
    assert read.dropped["future_period"] == 6


def test_a_retailers_fiscal_2024_ends_early_in_2025() -> None:
    text = (
        "For the fiscal year ended February 1, 2025. Net sales in fiscal 2024 rose; "
        "fiscal 2024 had 52 weeks, as did fiscal 2023."
    )
    assert report_end(text).isoformat() == "2025-02-01"  # type: ignore[union-attr]
    note = fiscal_note("", text)
    assert "fiscal 2024 ends in 2025" in note
    from kg.extract.table_periods import fiscal_year_end

    fye = fiscal_year_end(note)
    assert fye == FiscalYearEnd(2, 1, True, 1)
    p = parse_period("Fiscal 2024", fye)
    assert p is not None and p.end.isoformat() == "2025-02-01" and p.label == "FY2024"
    # a filer naming its years by their end (fiscal 2025 ended January 26, 2025): no shift
    text2 = "For the fiscal year ended January 26, 2025. In fiscal 2025 revenue grew."
    assert "ends in" not in fiscal_note("", text2)


def key(c: Candidate) -> tuple[object, ...]:
    p = c.props
    return (c.tail, p["period"], p["value"], p["unit"], p.get("change_value"))


def test_the_flattened_table_gives_the_same_facts() -> None:
    f = H.read_filing(FILING)
    for t in f.tables:
        flat = H.flatten(t)
        html_read, _ = H.table_facts(t, CTX, f.fiscal, f.report_end)
        flat_read = H.flat_facts(flat, CTX, context=t.context, fiscal=f.fiscal, until=f.report_end)
        assert {key(c) for c in html_read.candidates} == {key(c) for c in flat_read.candidates}
    assert " $ " in H.flatten(f.tables[0])  # "$" in a cell of its own
    # "2024 | 2023 | % Change" over five value cells: the years over the value columns of
    # the row below ("Amount | % of net sales" twice), the change over the one left
    mix = H.flat_facts(H.flatten(f.tables[1]), CTX, context=f.tables[1].context)
    got = {(c.tail, c.props["period"]): c.props for c in mix.candidates}
    assert got[("Segment results: Wholesale", "FY2023")]["value"] == 400e6
    assert got[("Segment results: Retail", "FY2024")]["change_value"] == 13.0


FLAT_FAMILIES = """Fiscal Year Ended January 31, | Variance Dollars
(in millions) | 2025 | As a % of Total Revenues | 2024 | As a % of Total Revenues
Assets
Humira | United States | $ | 7,142 | 16 | % | $ | 12,160 | 18 | % | $ | (5,018)
International | 1,851 | 7 | % | 2,244 | 7 | % | (393)
Total | $ | 8,993 | 23 | % | $ | 14,404 | 25 | % | $ | (5,411)
Diluted earnings per share | $ | ( 0.27 ) | 1 | % | $ | 2.95 | 2 | % | —
Other expense | 12 | 1 | % | 9 | (8) | % | 3
Less: Dividends accumulated | 58
"""


def test_flattened_families_read_as_on_the_grid() -> None:
    """Two label cells, a section row under the column headers, a change column the
    upper row names, "$( 0.27 )", a "(8) | %" change cell, and a row whose empty cells
    were lost (dropped, not shifted onto another year)."""
    lt = H.read_flat(FLAT_FAMILIES)
    assert lt is not None and lt.header[0][1:] == ["Fiscal Year Ended January 31,"] * 4 + [
        "Variance Dollars"
    ]
    assert lt.header[1][1:] == [
        "2025",
        "As a % of Total Revenues",
        "2024",
        "As a % of Total Revenues",
        "",
    ]
    assert lt.header[2][0] == "Assets" and not any(lt.header[2][1:])
    labels = [r[0].text for r in lt.body]
    assert labels[:3] == ["Humira: United States", "Humira: International", "Humira: Total"]
    assert lt.body[3][1].text == "$( 0.27 )" and lt.body[4][3].text == "9"
    assert lt.body[4][4].text == "(8)%"
    assert lt.dropped["misaligned_row"] == 1 and "Less: Dividends accumulated" not in labels


def test_edgar_connector_tables_reach_the_extractor_as_grids() -> None:
    doc = filing_document(FILING)
    assert doc.tables and all(is_table_html(t) for t in doc.tables)
    assert "in millions, except per share data" in doc.tables[0][0][0]  # its caption
    ex = Extractor(index=bundled_index(), use_nlp=False)
    res = asyncio.run(
        ex.extract(
            ExtractDoc(
                id="acme-10k",
                kind="filing",
                company="Acme Corp",
                form_type="10-K",
                title="ACME CORP 10-K for 2024-12-31",
                text=doc.text,
                tables=doc.tables,
            )
        )
    )
    got = {(t.tail, t.attributes.get("period")): t.attributes for t in res.triples}
    assert got[("Net sales", "FY2022")]["value"] == 1_000e6
    assert got[("Segment results: Retail", "FY2023")]["value"] == 800e6
    assert not any(str(p).startswith("FY2025") for _, p in got)


RATE_BLOCKS = """Years ended December 31, | 2024 | 2023
Amount | Rate | Amount | Rate
U.S. federal statutory tax | ($ 2,564 ) | 21.0 | % | ($ 421 ) | 21.0 | %
State income taxes | 223 | 1.8 | 75 | 3.7
Valuation allowance | 3,145 | ( 25.8 ) | 1,150 | ( 57.3 )
Income tax expense | ($ 381 ) | 3.1 | % | $ 237 | ( 11.8 ) | %
"""
LEVELS = """(in millions) | Fair Value Measurements Using
Quoted Prices (Level 1) | Observable Inputs (Level 2)
Total | (Level 1) | (Level 2)
Cash equivalents | $ | 41 | $ | 30 | $ | 11
Money market funds | 6,726 | 6,726 | —
"""


def test_flat_header_blocks_total_column_and_rate_column() -> None:
    """ "Years ended December 31," before the years is the label column's and the years
    sit over the "Amount | Rate" blocks; a group row one cell short of a row starting
    with "Total" leaves the total alone; a column whose first and last amounts are "%"
    (a tax-rate reconciliation) makes its bare numbers percentages."""
    lt = H.read_flat(RATE_BLOCKS)
    assert lt is not None and lt.header[0] == [
        "Years ended December 31,",
        "2024",
        "2024",
        "2023",
        "2023",
    ]
    read = H.flat_facts(RATE_BLOCKS, CTX, context="(in millions)")
    got = {(c.tail, c.props["period"]): c.props for c in read.candidates}
    state = [
        p for (t, per), p in got.items() if t.startswith("State income taxes") and per == "FY2023"
    ]
    assert {(p["value"], p["unit"]) for p in state} == {(75e6, "USD"), (3.7, "%")}
    levels = H.read_flat(LEVELS)
    assert levels is not None
    assert levels.header[1][1:] == ["", "Quoted Prices (Level 1)", "Observable Inputs (Level 2)"]
    assert not H.is_flattened("| | 2024 | 2023 |\n|---|---|---|\n| Revenue | 10 | |")
    assert H.is_flattened(LEVELS) and H.is_flattened(RATE_BLOCKS)


def _extract(doc: ExtractDoc) -> set[tuple[str, object, object]]:
    ex = Extractor(index=bundled_index(), use_nlp=False)
    res = asyncio.run(ex.extract(doc))
    return {(t.tail, t.attributes.get("period"), t.attributes.get("value")) for t in res.triples}


def test_flattened_text_reaches_the_extractor_with_the_grids_facts() -> None:
    """A document whose tables arrive as pipe rows (no spans, "$" in cells of their own)
    gives the facts the EDGAR connector's grids give (``read_text_table``)."""
    f = H.read_filing(FILING)
    rows = lambda t: "\n".join(f"| {line} |" for line in H.flatten(t).splitlines())  # noqa: E731
    text = f"{COVER}\n\n" + "\n\n".join(
        f"{t.context.replace(' / ', chr(10))}\n{rows(t)}" for t in f.tables
    )
    text = text.replace("<p>", "").replace("</p>", "\n")
    meta = {"kind": "filing", "company": "Acme Corp", "form_type": "10-K", "title": "ACME 10-K"}
    flat = _extract(ExtractDoc(id="acme-text", text=text, **meta))
    doc = filing_document(FILING)
    grid = _extract(ExtractDoc(id="acme-grid", text=doc.text, tables=doc.tables, **meta))
    assert ("Segment results: Wholesale", "FY2023", 400e6) in flat
    assert ("Net sales", "FY2022", 1_000e6) in flat
    assert not any(p == "FY2023" and v == 100.0 for _, p, v in flat)  # no "Total 100%"
    assert flat == grid


DEV = Path(os.environ.get("LIVEKG_SHARED", "../shared")) / "data/real_docs_dev/10k_html"
if not DEV.is_dir():
    DEV = Path("/work/shared/data/real_docs_dev/10k_html")
# the blind gold's TEST filings are left alone (development reads only the others)
HELD_OUT = ("googl-", "ibm-", "nke-")


@pytest.mark.skipif(not DEV.is_dir(), reason="real_docs_dev filings absent")
def test_dev_filings_html_and_flattened_tables_agree() -> None:
    """Every table of the 11 dev filings read from the HTML and from its flattened pipe
    rows (``evaluation/scorers/table_agreement.py``). Measured 2026-11-28: 83.7% of
    1,018 tables agreed before the flat reader learnt the families in
    docs/extraction.md, 94.7% after; what still differs is named there (cells the
    flattening loses, group labels over some columns only)."""
    from evaluation.scorers.table_agreement import run

    got = run(DEV.parent)
    assert got.filings == 11  # the blind TEST filings are not read
    assert got.equal / got.tables >= 0.94
    assert got.both / got.html_facts >= 0.9
    # no fact of the flat reading sits under another period than the same cell's on
    # the grid: a value the text cannot place is dropped, not shifted
    shifted = [
        (d["filing"], d["table"])
        for d in got.differences
        for h in d["html_only"]
        for f in d["flat_only"]
        if h[0] == f[0] and h[2] == f[2] and h[1] != f[1]
    ]
    assert len(shifted) <= 2, shifted
