"""The number checker: units, bp versus %, rounding, Chinese numerals and 亿/万."""

from __future__ import annotations

import pytest

from kg.report.numbers import Allowed, check_text, extract_numbers, zh_to_number


@pytest.mark.parametrize(
    ("text", "value"),
    [("三点五", 3.5), ("二十五", 25), ("两千亿", 2e11), ("一万二千", 12000), ("十", 10),
     ("一百零五", 105), ("零点二", 0.2), ("三亿五千万", 3.5e8)],
)  # fmt: skip
def test_chinese_numerals(text: str, value: float) -> None:
    assert zh_to_number(text) == pytest.approx(value)


def _allowed() -> Allowed:
    a = Allowed()
    a.add(1.8177, "pct")  # a level in %
    a.add(-3.24, "bp")  # a change in bp ...
    a.add(-0.0324, "pct")  # ... and the same change in percentage points
    a.add(2e11, "count")  # 2000亿 from a retrieved source text
    a.dates.add("2026-11-20")
    return a


def test_rounding_units_and_signs() -> None:
    a = _allowed()
    ok = [
        "CN10Y stood at 1.82% on 2026-11-20.",  # rounded to the written precision
        "It fell 3.2 bp over 1 week.",  # sign in words, value rounded
        "10年期国债收益率下行3.24个基点。",
        "央行开展2000亿元7天期逆回购操作。",  # 亿 scaled; 7天期 is a tenor
        "央行开展两千亿元逆回购。",  # Chinese numeral with 亿
        "The 10Y-2Y spread over 3 months and the 20-day average matter [1].",  # no values
    ]
    for s in ok:
        res = check_text(s, a)
        assert res.removed == [], (s, res.removed)
    bad = {
        "CN10Y stood at 1.9% on 2026-11-20.": ["1.9%"],  # wrong level
        "It fell 3.2% over 1 week.": ["3.2%"],  # bp written as %: a different number
        "It fell 32 bp.": ["32 bp"],
        "央行开展3000亿元逆回购。": ["3000亿"],
        "利率下调二十五个基点。": ["二十五个基点"],
        "CN10Y stood at 1.82% on 2026-10-01.": ["2026-10-01"],  # unknown date
    }
    for s, numbers in bad.items():
        res = check_text(s, a)
        assert res.kept == [] and res.removed[0].numbers == numbers, (s, res)


def test_percent_and_basis_points_are_one_quantity() -> None:
    a = Allowed()
    a.add(25.0, "bp")
    a.add(0.25, "pct")
    assert check_text("The Fed cut by 0.25 percentage points.", a).removed == []
    assert check_text("The Fed cut by 25 basis points.", a).removed == []
    assert check_text("美联储降息百分之零点二五。", a).removed == []


def test_only_unsupported_sentences_are_removed() -> None:
    a = _allowed()
    text = "CN10Y stood at 1.82%. Analysts expect 2.5% next year. It fell 3.2 bp."
    res = check_text(text, a, origin="llm")
    assert res.kept == ["CN10Y stood at 1.82%.", "It fell 3.2 bp."]
    assert [r.sentence for r in res.removed] == ["Analysts expect 2.5% next year."]
    assert res.removed[0].origin == "llm" and res.unsupported_numbers == []


def test_identifiers_and_tenors_are_not_values() -> None:
    nums, _ = extract_numbers("DR007, CN10Y, M2, US 2-year, 1年期, 3个月, [source 3fa2b91c]")
    assert nums == []


def test_a_number_must_belong_to_a_subject_the_sentence_names() -> None:
    from kg.report.facts import Fact
    from kg.report.numbers import allowed_from

    dr = Fact(id="DR007:level@d", kind="level", subject="DR007",
              label="DR007 7-day interbank repo rate (DR007)", value=1.51, unit="%",
              as_of="2026-11-20", text="DR007 7-day interbank repo rate (DR007) was 1.51%.")  # fmt: skip
    a = allowed_from([dr], ["PBOC injected 2000亿元"])
    assert check_text("DR007 stood at 1.51% on 2026-11-20.", a).removed == []
    res = check_text("The yield curve has been increasing by 1.5% over 12 months.", a)
    assert res.kept == [] and res.removed[0].numbers == ["1.5%"]
    assert check_text("The central bank injected 2000亿元.", a).removed == []  # source text
