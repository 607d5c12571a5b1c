"""The critic's word lists are data (extract_lexicon_en.json, validated at load) and its
sentences are the pattern splitter's."""

from __future__ import annotations

import json
from importlib import resources

import pytest
from pydantic import ValidationError

from kg.extract import DocContext
from kg.extract.deps_en import LEXICON_FILE, DepLexicon, lexicon
from kg.extract.figures import header_period
from kg.extract.types import Candidate, Component
from kg.extract.verify import Verifier, VerifyStats, fact_key, header_year, sentence_of


def _raw() -> dict[str, object]:
    text = resources.files("kg.data").joinpath(LEXICON_FILE).read_text(encoding="utf-8")
    return json.loads(text)


def test_critic_lists_load_from_the_lexicon() -> None:
    lex = lexicon()
    assert "drive" in lex.street_words and "state" in lex.place_kinds
    assert lex.cues("negation_cues").search("X did not acquire Y")
    assert lex.cues("hedge_cues").search("is in talks to buy")
    assert lex.cues("forward_cues").search("we expect revenue of $2 billion")
    assert not lex.cues("negation_cues").search("X acquired Y in knots")  # whole words


def test_the_gates_lists_are_the_lexicons() -> None:
    """The gate's word lists live in the lexicon: abstract subjects, placeholders, the words
    around a metric's name, corporate suffixes (case kept) and the verbs of its regexes."""
    lex = lexicon()
    assert "the registrant" in lex.abstract_references and "本公司" in lex.self_references
    assert "pertaining" in lex.metric_openers and "non-gaap" in lex.metric_links
    assert "LLC" in lex.corporate_suffixes and "plc" in lex.corporate_suffixes
    assert lex.alternation("hurt_verbs").startswith("(?:affected|")
    assert lex.cues("cross_reference_cues").search("the risks set forth below")
    mr = Candidate("Mr. Coben", "Person", "EXECUTIVE_OF", "Acme Inc.", "Company")
    assert fact_key(mr) == fact_key(Candidate("Coben", "Person", "EXECUTIVE_OF", "Acme", "Company"))
    ctx = DocContext(doc_id="d", title="t", main_entity="Norvale", kind="news")
    kept, _ = Verifier().verify(
        [Candidate("The Company", "Company", "PRODUCES", "pumps", "Product", 0, 20)],
        "The Company makes pumps.",
        ctx,
    )
    assert [k.cand.head for k in kept] == ["Norvale"]  # an abstract subject: the main entity
    issues = Verifier().critique(
        [Candidate("Acme Inc. and Brill LLC", "Company", "PRODUCES", "pumps", "Product", 0, 40)],
        "Acme Inc. and Brill LLC make pumps.",
        ctx,
    )
    assert [i.rule for i in issues if i.rule == "compound_name"] == ["compound_name"]


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("negation_cues", ["not", "(unclosed"]),
        ("street_words", ["Drive"]),
        ("day_words", []),
        ("change_verbs", ["grew", "(unclosed"]),
        ("determiners", ["The"]),
        ("corporate_suffixes", [" Inc"]),
    ],
)
def test_lexicon_rejects_bad_lists(key: str, value: list[str]) -> None:
    raw = _raw()
    raw[key] = value
    with pytest.raises(ValidationError):
        DepLexicon.model_validate(raw)


def test_sentence_of_uses_the_pattern_splitter() -> None:
    text = "Acme Holdings, Inc. makes pumps in Ohio. It sells valves.\nNext line here."
    start = text.index("pumps")
    assert sentence_of(text, start, start + 5).strip() == "Acme Holdings, Inc. makes pumps in Ohio."
    two = sentence_of(text, start, text.index("valves") + 6).strip()
    assert two.startswith("Acme") and two.endswith("sells valves.")
    assert sentence_of(text, text.index("Next"), len(text)).strip() == "Next line here."


def _check(
    head: str, rel: str, tail: str, tail_type: str, text: str, title: str = "", **props: object
) -> tuple[list[Candidate], VerifyStats]:
    c = Candidate(head, "Company", rel, tail, tail_type, 0, len(text), Component.PATTERN, "t",
                  None, dict(props), 0.9)  # fmt: skip
    stats = VerifyStats()
    kept = Verifier().reflect([c], text, DocContext(doc_id="t", title=title), stats)
    return kept, stats


def test_a_change_is_no_level() -> None:
    """'Revenue increased $13.6 billion' states a change (kept as one); 'the effect ... was an
    increase in ... net income of $3.0 billion' an effect (dropped); 'resulted in actuarial
    loss of $491 million' states a level."""
    kept, stats = _check("Norvale", "DISCLOSES", "Revenue", "FinMetric",
                         "Revenue increased $13.6 billion or 7% driven by growth.",
                         raw="$13.6 billion", value=13.6e9, unit="USD", period="FY2023")  # fmt: skip
    assert [k.props["measure"] for k in kept] == ["change"]
    text = ("The effect for fiscal year 2023 was an increase in operating income of $3.7 billion "
            "and net income of $3.0 billion.")  # fmt: skip
    kept, stats = _check("Norvale", "DISCLOSES", "net income", "FinMetric", text,
                         raw="$3.0 billion", value=3e9, unit="USD", period="FY2023")  # fmt: skip
    assert kept == [] and stats.dropped["effect_as_level"] == 1
    text = "The effect was an increase in sales of $40 thousand and net income of $9 thousand."
    kept, stats = _check("Norvale", "DISCLOSES", "net income", "FinMetric", text,
                         raw="$9 thousand", value=9e3, unit="USD", period="FY2023")  # fmt: skip
    assert kept == [] and stats.dropped["effect_as_level"] == 1  # the vocabulary's scales
    text = "A decrease in the discount rate resulted in actuarial loss of $491 million in 2020."
    kept, _ = _check("Norvale", "DISCLOSES", "actuarial loss", "FinMetric", text,
                     raw="$491 million", value=4.91e8, unit="USD", period="FY2020")  # fmt: skip
    assert len(kept) == 1


def test_the_comparison_period_is_not_the_facts() -> None:
    text = "Direct revenues grew 14% from $18.7 billion in fiscal 2022 to $21.3 billion."
    kept, stats = _check("Norvale", "DISCLOSES", "Direct revenues", "FinMetric", text,
                         raw="14%", value=14.0, unit="%", measure="change",
                         period="FY2022")  # fmt: skip
    assert kept == [] and stats.dropped["comparison_period"] == 1
    text = (
        "FISCAL 2023 COMPARED TO FISCAL 2022 For fiscal 2023, gross profit rose 4% to $2 billion."
    )
    kept, _ = _check("Norvale", "DISCLOSES", "gross profit", "FinMetric", text,
                     raw="$2 billion", value=2e9, unit="USD", period="FY2023")  # fmt: skip
    assert len(kept) == 1  # a heading in capitals is no comparison


def test_a_quarter_takes_the_headers_year() -> None:
    text = "Norvale Reports Fourth-Quarter and Full-Year 2022 Results\nFourth-quarter revenue was $4 billion."
    kept, _ = _check("Norvale", "DISCLOSES", "revenue", "FinMetric", text,
                     raw="$4 billion", value=4e9, unit="USD", period="Q4")  # fmt: skip
    assert [k.props["period"] for k in kept] == ["2022-Q4"]
    kept, _ = _check("Norvale", "DISCLOSES", "revenue", "FinMetric",
                     "Norvale reported a 26% slump in fourth-quarter profit.",
                     raw="26%", value=26.0, unit="%", period="Q4")  # fmt: skip
    assert [k.props["period"] for k in kept] == ["Q4"]  # no year anywhere: left as it is


def test_the_critics_header_year_is_header_periods_bare_year() -> None:
    """The critic reads the header's year through ``figures.header_period`` (the whole title
    and chunk opening, a bare four-digit year only), not a regex of its own."""
    ctx = DocContext(doc_id="d", title="Norvale FY24 update")
    body = "\n".join(["x"] * 5) + "\nResults for 2023 and 2022."
    assert header_year(ctx, body) == "2023"  # past the first lines, "FY24" no year
    assert header_period(f"{ctx.title}\n{body}") == ("", "FY2024")  # the documents' reading
    assert header_year(DocContext(doc_id="d", title="Q4 FY2024"), "no year") == ""


def test_names_cut_out_of_a_longer_name() -> None:
    kept, stats = _check("Medium Business", "PRODUCES", "wireless services", "Product",
                         "Small and Medium Business offers wireless services.")  # fmt: skip
    assert kept == [] and stats.dropped["truncated_name"] == 1
    kept, _ = _check("Norvale", "PRODUCES", "ground strike systems", "Product",
                     "Norvale provides air-to-ground strike systems.")  # fmt: skip
    assert kept == []
    text = "We are subject to the Dodd-Frank Wall Street Reform and Consumer Protection Act."
    assert (
        _check("Norvale", "COMPLIES_WITH", "Consumer Protection Act", "Regulation", text)[0] == []
    )
    assert len(_check("Norvale", "COMPLIES_WITH", "Dodd-Frank", "Regulation", text)[0]) == 1
    text = "The Federal Acquisition Regulation (FAR) and Defense Federal Acquisition Regulation Supplement apply."
    assert len(_check("Norvale", "COMPLIES_WITH", "Federal Acquisition Regulation", "Regulation",
                      text)[0]) == 1  # fmt: skip
    assert _check("Norvale", "OPERATES_IN", "Austin", "Region", "M/S B100.T, Austin, Texas")[0]
    kept, _ = _check("S B100.T", "OPERATES_IN", "Austin", "Region", "M/S B100.T, Austin, Texas")
    assert kept == []


def test_a_risk_keeps_its_place() -> None:
    text = "We face risks associated with the deadly conflict in Ukraine."
    kept, _ = _check("Norvale", "IMPACTED_BY", "deadly conflict", "RiskFactor", text)
    assert [k.tail for k in kept] == ["deadly conflict in Ukraine"]


def test_headline_parties() -> None:
    """What a headline names around a deal or an industry (invented names)."""
    kept, _ = _check("Drugmaker Norvale", "INVOLVED_IN", "Tessly", "Event",
                     "Drugmaker Norvale to buy Tessly for $3 billion", role="buyer")  # fmt: skip
    assert [k.head for k in kept] == ["Norvale"]
    kept, _ = _check("Norvale", "INVOLVED_IN", "Tessly", "Event",
                     "Norvale acquires neighbouring Tessly nickel property in Brazil",
                     role="buyer")  # fmt: skip
    assert kept == []
    kept, _ = _check("Norvale", "INVOLVED_IN", "Tessly", "Event",
                     "Norvale to buy Tessly for $3 billion", role="buyer")  # fmt: skip
    assert len(kept) == 1
    kept, _ = _check("Norvale", "INVOLVED_IN", "unit", "Event", "Norvale sells unit to Tessly",
                     role="seller")  # fmt: skip
    assert kept == []
    kept, _ = _check(
        "Norvale", "PRODUCES", "Blinkbox", "Product", "Norvale sells Blinkbox to Tessly"
    )
    assert kept == []
    for tail in ("Rival companies", "buys advice", "CompaniesCar insurer"):
        assert _check("Tessly", "BELONGS_TO", tail, "Industry", f"{tail} Tessly gains")[0] == []
    assert len(_check("Tessly", "BELONGS_TO", "Drugmaker", "Industry", "Drugmaker Tessly gains")[0])


def test_an_acronym_is_no_kind_of_itself_and_bullets_are_no_name() -> None:
    text = "We sell network access to mobile virtual network operators (MVNOs) wholesale."
    assert (
        _check("MVNOs", "BELONGS_TO", "mobile virtual network operators", "Industry", text)[0] == []
    )
    text = "Legal Risks • Government actions may limit our exports."
    v = Verifier()
    c = Candidate("Norvale", "Company", "IMPACTED_BY", "• Government actions", "RiskFactor", 0,
                  len(text), Component.NLP, "t", None, {}, 0.7)  # fmt: skip
    kept, _ = v.verify([c], text, DocContext(doc_id="t", main_entity="Norvale", kind="filing"))
    assert [k.cand.tail for k in kept] == ["Government actions"]


def _listed(tail: str, text: str, raw: str, value: float, kind: str = "filing") -> list:
    c = Candidate("Norvale", "Company", "DISCLOSES", tail, "FinMetric", 0, len(text),
                  Component.PATTERN, "kpi_years_respectively_en", None,
                  {"raw": raw, "value": value, "unit": "USD", "period": "FY2019"}, 0.9)  # fmt: skip
    ctx = DocContext(doc_id="t", kind=kind, main_entity="Norvale")
    return Verifier().reflect([c], text, ctx, VerifyStats())


def test_a_list_shape_names_no_cut_metric_and_no_bare_amount() -> None:
    text = ("The Company's total expense for its defined contribution plans was $127 million, "
            "$98 million and $84 million in 2019, 2018 and 2017, respectively.")  # fmt: skip
    assert _listed("defined contribution plans", text, "$127 million", 1.27e8) == []
    text = "Advertising costs were $3.2 billion and $3.7 billion for fiscal 2019 and 2018."
    assert len(_listed("Advertising costs", text, "$3.2 billion", 3.2e9)) == 1
    text = "Total global defined contribution expense was $340, $317 and $272 in 2019."
    assert _listed("Total global defined contribution expense", text, "$340", 340.0) == []
    assert len(_listed("Total global defined contribution expense", text, "$340", 340.0,
                       kind="news")) == 1  # fmt: skip


def test_the_subject_rules_one_noun_metric_is_no_cut_name() -> None:
    def nlp_metric(tail: str, text: str) -> list:
        c = Candidate("Norvale", "Company", "DISCLOSES", tail, "FinMetric", 0, len(text),
                      Component.NLP, "metric", None,
                      {"value": "$1.5 billion", "period": "fiscal 2020"}, 0.7)  # fmt: skip
        return Verifier().reflect([c], text, DocContext(doc_id="t", kind="filing"), VerifyStats())

    assert nlp_metric("revenue", "Membership fee revenue was $1.5 billion for fiscal 2020.") == []
    assert nlp_metric("sales", "For 2020, the net reduction in sales was $1.5 billion.") == []
    assert len(nlp_metric("revenue", "In fiscal 2020 our revenue was $1.5 billion.")) == 1


def test_a_weekday_before_the_verb_is_no_other_owner() -> None:
    """'X on Wednesday reported revenue of ...' is X's figure (the news dateline shape);
    another company that 'reported' the figure still owns it."""
    text = "Halvorsen Robotics on Wednesday reported revenue of $412 million for the quarter."
    ctx = DocContext(doc_id="t", main_entity="Halvorsen Robotics")
    c = Candidate("Halvorsen Robotics", "Company", "DISCLOSES", "revenue", "FinMetric", 0,
                  len(text), Component.PATTERN, "t", None,
                  {"raw": "$412 million", "value": 4.12e8, "unit": "USD", "period": "2025-Q3"},
                  0.9)  # fmt: skip
    stats = VerifyStats()
    assert len(Verifier().reflect([c], text, ctx, stats)) == 1
    assert stats.dropped.get("other_owner", 0) == 0
    other = "Brightwell Logistics reported revenue of $412 million for the quarter."
    c2 = Candidate("Halvorsen Robotics", "Company", "DISCLOSES", "revenue", "FinMetric", 0,
                   len(other), Component.PATTERN, "t", None,
                   {"raw": "$412 million", "value": 4.12e8, "unit": "USD", "period": "2025-Q3"},
                   0.9)  # fmt: skip
    stats = VerifyStats()
    assert Verifier().reflect([c2], other, ctx, stats) == []
    assert stats.dropped["other_owner"] == 1
