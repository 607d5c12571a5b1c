"""Shapes of real news and Chinese wraps (issue 43), in wordings written for these tests,
and the real-document gold support of the scorer (texts by id, a 10-K scored on the
cells its gold line annotates)."""

from __future__ import annotations

import asyncio
import gzip
import json
from pathlib import Path

from evaluation.scorers.extract_gold import (
    attach_texts,
    cell_key,
    doc_fields,
    read_gold,
    score,
    source_meta,
)
from kg.extract.pipeline import ExtractDoc, Extractor, bundled_index

EX = Extractor(index=bundled_index(), use_nlp=False)


def facts(text: str, kind: str = "news", lang: str = "en") -> list[tuple[str, str, str, dict]]:
    doc = ExtractDoc(id="t", text=text, kind=kind, lang=lang, event_time="2024-05-02T00:00:00Z")
    res = asyncio.run(EX.extract(doc))
    return [(t.head, t.relation, t.tail, t.attributes) for t in res.triples]


def test_central_bank_decisions_in_any_wording() -> None:
    cut = facts(
        "The Fed on Wednesday lowered a key U.S. interest rate by a quarter percentage point."
    )
    (head, _rel, tail, a) = next(f for f in cut if f[1] == "SETS_POLICY")
    assert (head, tail, a["action"]) == ("Fed", "interest rate", "cut")
    assert a["chg"] == "quarter" and a["chg_unit"] == "percentage point"
    assert a["change_value"] == 25.0 and a["change_unit"] == "bp"
    hike = facts("The Bank of Canada raised its policy rate by 50 basis points to 4.25 percent.")
    a = next(f[3] for f in hike if f[1] == "SETS_POLICY")
    assert a["action"] == "raise" and a["chg"] == "50" and a["val"] == "4.25 percent"
    hold = facts("The Bank of England held interest rates at 0.5 percent on Thursday.")
    a = next(f[3] for f in hold if f[1] == "SETS_POLICY")
    assert a["action"] == "hold" and a["val"] == "0.5 percent"
    # a forecast of a move is no decision
    assert not any(f[1] == "SETS_POLICY" for f in facts("Economists expect the Fed to cut rates."))


def test_indicator_changes_and_levels() -> None:
    got = facts("Factory output rose 0.8 percent. Retail sales fell 1.2 percent in March.")
    sales = next(f for f in got if f[0] == "Retail sales")
    assert sales[2] == "1.2 percent" and sales[3]["dir"] == "fell"
    assert sales[3]["period"] == "2024-03" and sales[3]["change_value"] == 1.2  # story of May 2
    level = facts("The unemployment rate fell to 4.1 percent, the lowest in a year.")
    assert any(f[0] == "unemployment rate" and f[2] == "4.1 percent" for f in level)


def test_chinese_index_and_futures_moves() -> None:
    got = facts(
        "国债期货全线收跌，10年期主力合约跌0.15%；中证转债指数收盘涨0.36%。", "commentary", "zh"
    )
    moves = {(f[0], f[2]): f[3]["dir"] for f in got if f[1] == "HAS_VALUE"}
    units = {f[0]: f[3].get("unit") for f in got if f[1] == "HAS_VALUE"}
    assert units["10年期主力合约"] == "%"  # a move of 0.15%, not 0.15 bp
    assert moves[("10年期主力合约", "0.15%")] == "跌"
    assert moves[("中证转债指数", "0.36%")] == "涨"


def test_source_metadata_gives_the_day_and_the_calls_quarter() -> None:
    assert source_meta("x@1:ReutersNews1/20070209/us-usa-idUS")["event_time"].startswith(
        "2007-02-09"
    )
    assert source_meta("x@1:_posts/2024-8-16-wind-Daily.md#债券")["event_time"].startswith(
        "2024-08-16"
    )
    assert source_meta("x@1:dataset/ACN_q1_2022.txt#q_and_a[1:2]")["title"].startswith(
        "ACN Q1 2022"
    )


def test_real_document_gold_loads_texts_by_id_and_scores_a_10k_on_its_cells(
    tmp_path: Path,
) -> None:
    root = tmp_path / "real"
    (root / "10k_html").mkdir(parents=True)
    news = {"id": "n1", "kind": "news", "lang": "en", "text": "The Fed on Tuesday cut interest "
            "rates by half a point.", "source": "r@1:News/20080122/x"}  # fmt: skip
    (root / "news.jsonl").write_text(json.dumps(news) + "\n")
    html = (
        "<p>For the fiscal year ended December 31, 2024</p><p>Results (in millions)</p>"
        "<table><tr><td></td><td colspan='2'>2024</td><td colspan='2'>2023</td></tr>"
        "<tr><td>Revenue</td><td>$</td><td>120</td><td>$</td><td>100</td></tr>"
        "<tr><td>Cost</td><td></td><td>70</td><td></td><td>60</td></tr></table>"
    )
    with gzip.open(root / "10k_html" / "acme-10-k.html.gz", "wt") as fh:
        fh.write(html)
    gold = tmp_path / "gold.jsonl"
    gold.write_text(
        json.dumps({"id": "n1", "kind": "news", "gold": [{"head": "Fed", "relation":
                    "SETS_POLICY", "tail": "interest rates"}]}) + "\n"
        + json.dumps({"id": "acme-10-k.html.gz", "kind": "tenk", "company": "Acme Corp",
                      "gold": [{"head": "Acme Corp", "relation": "DISCLOSES", "tail": "Revenue",
                                "attributes": {"value": "120", "scale": "millions",
                                               "period": "2024-12-31", "row": "Revenue"}}]})
        + "\n"
    )  # fmt: skip
    docs = attach_texts(read_gold(gold), root)
    assert docs[0].text.startswith("The Fed") and docs[1].text
    assert doc_fields(docs[1])["kind"] == "filing" and doc_fields(docs[1])["company"] == "Acme Corp"
    assert docs[1].model_extra["scored_cells"] == [cell_key("Revenue", "120")]
    preds = {
        "n1": [("Fed", "SETS_POLICY", "interest rates", {})],
        "acme-10-k.html.gz": [
            ("Acme Corp", "DISCLOSES", "Revenue",
             {"value": 120e6, "unit": "USD", "period": "FY2024", "period_end": "2024-12-31",
              "row_label": "Revenue", "raw": "$120"}),
            ("Acme Corp", "DISCLOSES", "Cost", {"row_label": "Cost", "raw": "70"}),
        ],
    }  # fmt: skip
    s = score(docs, preds, strict_attrs=True)
    assert (s.overall.tp, s.overall.fp, s.overall.fn) == (2, 0, 0)
    assert s.unscored["outside_gold_cells"] == 1  # "Cost" is no cell the gold speaks about
