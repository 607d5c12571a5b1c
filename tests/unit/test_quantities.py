"""One vocabulary of scales, currencies and units (kg/data/quantity_vocab.json) and the
rule that decides what "¥" means."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from evaluation.scorers.extract_gold import canonical_unit as gold_unit
from kg.extract.figures import PRIOR, parse_figure
from kg.extract.tables import from_data, parse_amount, read_table
from kg.extract.types import DocContext
from kg.graph.quantities import (
    VOCAB_PATH,
    canonical_unit,
    currency_of,
    figure_currencies,
    load_vocab,
    scale,
    spelled_scales,
)
from kg.report.numbers import extract_numbers


def test_vocab_loads_and_every_reader_shares_it() -> None:
    v = load_vocab()
    assert v.scales["bn"] == 1e9 and v.scales["亿元"] == 1e8
    assert scale("Millions") == 1e6 and scale("万亿") == 1e12 and scale("dozen") is None
    # the sentence reader, the table reader and the report checker agree on one scale
    assert parse_figure("$2.5 bn").value == pytest.approx(2.5e9)
    assert extract_numbers("revenue of 2.5 bn")[0][0].value == pytest.approx(2.5e9)
    assert extract_numbers("净投放1200亿")[0][0].value == pytest.approx(1.2e11)
    assert gold_unit("亿元") == canonical_unit("RMB") == "cny"
    assert canonical_unit("USD/share") == "usd/share" and canonical_unit("基点") == "bp"
    assert canonical_unit("USD per share") == canonical_unit("EUR/share").replace("eur", "usd")
    assert canonical_unit("homes") == canonical_unit("count") == "count"
    assert canonical_unit("tons") == "tons" and canonical_unit("x") == "x"
    spelled = spelled_scales()  # the critic's listed figures ("of $3.7 billion and ...")
    assert {"million", "billions", "crore"} <= set(spelled) and not {"bn", "m", "亿"} & set(spelled)


def _write(tmp_path: Path, **change: object) -> Path:
    data = json.loads(VOCAB_PATH.read_text(encoding="utf-8"))
    data.update(change)
    p = tmp_path / "v.json"
    p.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return p


@pytest.mark.parametrize(
    "change",
    [
        {"scales": {"million": -1}},
        {"scales": {"Million": 1e6}},  # keys are casefolded
        {"currencies": {"$": "dollar"}},  # ISO codes only
        {"currencies": {"¥": "JPY"}},  # ¥ is ambiguous: it may not also be plain
        {"ambiguous_signs": {"¥": {"rules": [{"context": "(", "code": "CNY"}], "default": "JPY"}}},
        {"unknown_field": 1},
        {"after_figure": ["kroner"]},  # a word after a figure must be a currency key
    ],
)
def test_bad_vocab_fails_at_load(tmp_path: Path, change: dict[str, object]) -> None:
    with pytest.raises((ValidationError, ValueError)):
        load_vocab(_write(tmp_path, **change))


@pytest.mark.parametrize(
    ("figure", "context", "code"),
    [
        ("¥3.2 billion", "Kitaura Motors said operating profit rose to ¥3.2 billion.", "JPY"),
        ("¥3.2 billion", "Revenue was ¥3.2 billion, or 21.5 billion yen at the new rate.", "JPY"),
        ("¥120亿", "公司营收¥120亿", "CNY"),
        ("¥5,000", "营业收入为¥5,000万元", "CNY"),
        ("¥800 million", "Hengfeng Tech reported revenue of ¥800 million (RMB).", "CNY"),
        ("¥80", "净利润¥80，同比增长", "CNY"),  # Chinese text
        ("¥1,000", "合同金额¥1,000日元", "JPY"),  # 日元 is the yen even in Chinese
    ],
)
def test_yen_sign_by_context(figure: str, context: str, code: str) -> None:
    assert currency_of("¥", context) == code
    fig = parse_figure(figure, context=context)
    assert fig is not None and fig.unit == code


def test_plain_signs_ignore_context() -> None:
    assert currency_of("$", "人民币") == "USD"
    assert currency_of("RMB") == currency_of("元") == "CNY"
    assert currency_of("¥") == "JPY"  # a bare ¥ in English: the yen
    assert currency_of("points") == ""


def test_table_yen_sign_by_the_tables_language() -> None:
    en = parse_amount("¥1,200", "Segment results (in millions of yen)")
    zh = parse_amount("¥1,200", "主要财务数据 营业收入")
    assert en is not None and en.currency == "JPY"
    assert zh is not None and zh.currency == "CNY"
    ctx = DocContext(doc_id="d", main_entity="Kitaura Motors Co.", kind="filing")
    rows = [
        ["", "2024", "2023"],
        ["Net sales", "¥1,200", "¥1,100"],
        ["Operating income", "¥300", "¥250"],
    ]
    read = read_table(from_data(rows), ctx, context="(in millions)")
    assert {c.props["unit"] for c in read.candidates} == {"JPY"}
    assert read.candidates[0].props["value"] == pytest.approx(1.2e9)
    zh_rows = [["", "2024", "2023"], ["营业收入", "¥1,200", "¥1,100"], ["净利润", "¥300", "¥250"]]
    read = read_table(from_data(zh_rows), ctx, context="(in millions)")
    assert {c.props["unit"] for c in read.candidates} == {"CNY"}
    read = read_table(from_data(rows), ctx, context="单位：万元")  # 万元 names the currency
    assert {c.props["unit"] for c in read.candidates} == {"CNY"}
    assert read.candidates[0].props["value"] == pytest.approx(1.2e7)


def test_the_sentence_figure_regex_reads_the_vocabularys_currencies() -> None:
    """FIGURE's currencies are built from quantity_vocab.json: every sign, code and word is
    read, before the number or (``after_figure``) after it."""
    before, after = figure_currencies()
    v = load_vocab()
    assert set(before) | set(after) == set(v.currencies) | set(v.ambiguous_signs)
    assert set(after) == set(v.after_figure) and not set(before) & set(after)
    assert "hk$" in before and "usd" in before and "euros" in after and "元" in after
    assert parse_figure("HK$12.5 million").unit == "HKD"
    assert parse_figure("Rs. 500 crore").value == pytest.approx(5e9)
    assert parse_figure("3.2 billion euros").unit == "EUR"
    assert parse_figure("640 million U.S.  dollars").unit == "USD"  # any whitespace
    assert parse_figure("12 billion Swedish kronor").unit == "SEK"
    assert parse_figure("500亿日元").unit == "JPY"
    assert parse_figure("4,100") is None  # no unit, no figure


def test_a_prior_figure_reads_the_vocabularys_currencies() -> None:
    """The prior figure after a fact ("down from EUR2.30") has FIGURE's currencies."""
    m = PRIOR.search("EPS amounted to EUR1.37, down from EUR2.30.")
    assert m is not None and m.group("fig") == "EUR2.30"
    m = PRIOR.search("sales of C$4.1 billion, compared with C$3.9 billion a year earlier")
    assert m is not None and (m.group("fig"), m.group("when")) == (
        "C$3.9 billion",
        "a year earlier",
    )
    m = PRIOR.search("a loss of 80 million yuan, compared with 95 million yuan in 2023")
    assert m is not None and m.group("fig") == "95 million yuan"
