"""Space-aligned plain-text tables are read in any English document, by their layout.

The company is invented (Quillmere Robotics); the text says so."""

from __future__ import annotations

import asyncio

from kg.extract.pipeline import ExtractDoc, Extractor, bundled_index
from kg.extract.table_text import scan_aligned

NEWS = """Quillmere Robotics posts higher sales as warehouse orders recover

Quillmere Robotics Inc. (synthetic example) reported results for its fiscal year on Tuesday.
Sales rose on demand from logistics customers, the company said in a statement.

(in millions, except per share data)      2025        2024     % Change
Net sales                               $ 1,204     $ 1,050        15%
Operating income                            188         141        33%
Net income                                  122          97        26%
Diluted earnings per share              $  2.41     $  1.93

Chief executive Dana Whitcombe said the company expects further growth in 2026.
"""

SEGMENTS = """Quillmere Robotics net sales by segment for the years ended June 30:

($ in thousands)                       Year Ended June 30,
                                       2025            2024
Net sales
  Picking Systems                  $ 402,118       $ 371,650
  Field Service                       88,304          91,277
  Total net sales                  $ 490,422       $ 462,927
"""

PROSE = [
    "Revenue was $1,204 million in 2025  and $1,050 million in 2024, up 15%.\n"
    "Operating income rose to $188 million  from $141 million.\n",
    "In 2025 2024 and 2023 we opened 12  14  and 9 stores.\n",
    "Our 2025 targets:\n  Revenue growth   8%\n",
    "Year   2025\nSales  120  130\n",  # one amount row only: not enough to be a table
]


def _facts(doc: ExtractDoc) -> tuple[dict[tuple[str, str], dict], dict[str, int]]:
    ex = Extractor(index=bundled_index(), use_nlp=False)
    res = asyncio.run(ex.extract(doc))
    facts = {
        (t.tail, str(t.attributes["period"])): t.attributes
        for t in res.triples
        if t.extractor.startswith("table")
    }
    return facts, dict(res.stats.dropped)


def test_a_news_article_table_gives_facts_with_period_unit_and_kind() -> None:
    doc = ExtractDoc(id="q1", text=NEWS, kind="news", company="Quillmere Robotics Inc.")
    facts, _ = _facts(doc)
    sales = facts[("Net sales", "FY2025")]
    assert (sales["value"], sales["unit"], sales["column_kind"], sales["raw"]) == (
        1.204e9,
        "USD",
        "value",
        "$ 1,204",
    )
    assert facts[("Net income", "FY2024")]["value"] == 97e6
    assert facts[("Diluted earnings per share", "FY2025")]["unit"] == "USD/share"
    assert facts[("Diluted earnings per share", "FY2025")]["value"] == 2.41
    sales = facts[("Net sales", "FY2025")]
    assert (sales["change_unit"], sales["compared_to"]) == ("%", "FY2024")  # the Change column
    assert all(f["unit"] and f["period_end"] for f in facts.values())
    assert len(facts) == 8  # the three Change cells are attributes of the 2025 facts


def test_a_document_without_kind_reads_the_table_and_counts_cells_it_cannot_attribute() -> None:
    doc = ExtractDoc(id="q2", text=NEWS)  # no kind, no company: nobody to attribute to
    assert doc.kind == "news"
    facts, dropped = _facts(doc)
    assert facts == {}
    assert dropped["table_no_filer"] == 11


def test_segment_rows_take_their_heading_and_the_fiscal_year_end() -> None:
    """A news table is the subject's only where its caption names it (the verifier's support
    rule for news: the chunk must name the company or say "we")."""
    tables = scan_aligned(SEGMENTS).tables
    assert len(tables) == 1
    labels = [r[0] for r in tables[0].rows]
    assert "Net sales: Picking Systems" in labels and "Total net sales" in labels
    doc = ExtractDoc(id="q3", text=SEGMENTS, kind="news", company="Quillmere Robotics Inc.")
    facts, _ = _facts(doc)
    picking = facts[("Net sales: Picking Systems", "FY2025")]
    assert (picking["value"], picking["period_end"]) == (402_118_000, "2025-06-30")
    assert facts[("Total net sales", "FY2024")]["value"] == 462_927_000


def test_prose_with_numbers_is_no_table() -> None:
    for text in PROSE:
        assert scan_aligned(text).tables == [], text


STATS = """Quillmere Robotics operating statistics (synthetic example)

                                      Year Ended December 31,
                                   2025          2024      Change
Revenue (in thousands)         $ 1,204,310   $ 1,050,002       15%
Units shipped (tons)                34,902        36,775       (5)%
Shipments per day                   49,210        51,644
"""


def test_row_scale_row_units_and_a_change_column_of_percentages() -> None:
    doc = ExtractDoc(id="q4", text=STATS, kind="news", company="Quillmere Robotics Inc.")
    facts, dropped = _facts(doc)
    assert facts[("Revenue", "FY2025")]["value"] == 1_204_310_000  # the row's own scale
    assert facts[("Units shipped (tons)", "FY2024")]["unit"] == "tons"
    rev = facts[("Revenue", "FY2025")]
    assert (rev["change_unit"], rev["change_value"]) == ("%", 15.0)  # a Change column of %
    # things counted per unit of time are counts as printed (third pass; before, dropped)
    assert (
        facts[("Shipments per day", "FY2025")]["unit"],
        facts[("Shipments per day", "FY2025")]["value"],
    ) == ("count", 49_210)
    assert not dropped.get("table_scale_unknown")
