"""Issue 43: the company of a call when the user gives no name, or only a ticker. It comes
from the transcript (header, operator's welcome, a name in passing that spells the ticker)
or from a table the project holds, never from a guess; with none, the ticker itself. Every
company and person here is invented, except the 10-K cover-page table's entries."""

from __future__ import annotations

import asyncio

from kg.extract.calls import call_company
from kg.extract.pipeline import ExtractDoc, Extractor

QA = (
    "Dana Whitfield: Hi, thanks for taking my question. Can you talk about margins?\n\n"
    "Marcus Oyelaran: Sure, Dana. Our whole Quorvane family did great work, and gross margin "
    "was up 50 basis points this quarter.\n\n"
    "Dana Whitfield: Great, thanks.\n"
)


def test_a_name_in_passing_that_spells_the_ticker() -> None:
    got = call_company("", "QRV Q2 2023 earnings call", QA)
    assert got is not None
    assert (got.name, got.ticker, got.how) == ("Quorvane", "QRV", "transcript")


def test_a_ticker_given_as_the_company_finds_its_dotted_name() -> None:
    text = QA.replace("Quorvane family", "K.L.M. family")
    got = call_company("KLM", "", text)
    assert got is not None and got.name == "K.L.M."


def test_no_name_that_spells_the_ticker_keeps_the_ticker() -> None:
    got = call_company("", "ZXW Q2 2023 earnings call", QA)
    assert got is not None and (got.name, got.how) == ("ZXW", "ticker")


def test_speakers_and_sentence_openers_are_no_company() -> None:
    # "Marcus" spells MRC, "Sure" spells SR: a speaker and a word opening a sentence
    assert call_company("", "MRC Q2 2023 earnings call", QA).how == "ticker"  # type: ignore[union-attr]
    assert call_company("", "SRE Q2 2023 earnings call", QA).how == "ticker"  # type: ignore[union-attr]


def test_the_header_names_the_company() -> None:
    text = "Quorvane Systems Inc (NASDAQ: QRV) Q2 2023 Earnings Call Transcript\n\n" + QA
    got = call_company("", "", text)
    assert got is not None and (got.name, got.ticker, got.how) == (
        "Quorvane Systems Inc", "QRV", "header",
    )  # fmt: skip


def test_the_operators_welcome_names_the_company() -> None:
    text = (
        "Operator: Good day, and welcome to the Brindlecourt Holdings third quarter 2023 "
        "earnings call.\n\n" + QA
    )
    got = call_company("", "BHX Q3 2023 earnings call", text)
    assert got is not None and got.name == "Brindlecourt Holdings"


def test_a_ticker_in_the_cover_page_table() -> None:
    got = call_company("", "CRM Q2 2022 earnings call", QA)
    assert got is not None and (got.name, got.how) == ("Salesforce, Inc.", "table")


def test_a_ticker_the_dictionary_knows_comes_first() -> None:
    got = call_company("", "CRM Q2 2022 earnings call", QA, {"CRM": "Known Name"}.get)
    assert got is not None and got.how == "dictionary"


def test_news_is_no_call() -> None:
    story = "Shares of Quorvane rose 5% on Tuesday after the company beat estimates."
    assert call_company("", "Quorvane beats estimates", story) is None


def test_the_pipeline_files_the_figures_under_the_calls_company() -> None:
    doc = ExtractDoc(id="c1", kind="news", title="QRV Q2 2023 earnings call", text=QA)
    ex = Extractor()
    assert ex.context(doc, QA).main_entity == "Quorvane"
    res = asyncio.run(ex.extract(doc))
    margin = [t for t in res.triples if t.relation == "DISCLOSES" and "margin" in t.tail]
    assert margin and {t.head for t in margin} == {"Quorvane"}


PLACES_QA = (
    "Dana Whitfield: Can you talk about construction delays? Where are they worst?\n\n"
    "Marcus Oyelaran: There are more delays in places like Boston and New York. Like every "
    "other company in Canada, we're short of crews. Either in the U.S. or in Europe, we're "
    "seeing our business grow. We met in Laulima in Hawaii, where we've got our top 100 "
    "executives together. When an M&A opportunity comes up like Howard, we look at it.\n\n"
    "Dana Whitfield: In markets like Denver, are you seeing the same?\n"
)


def test_places_management_names_as_its_markets() -> None:
    from kg.extract.calls import transcript_turns
    from kg.extract.calls_people import call_places
    from kg.extract.types import DocContext

    ctx = DocContext(doc_id="c", kind="filing", title="", main_entity="Quorvane")
    got = {c.tail for c in call_places(PLACES_QA, ctx, transcript_turns(PLACES_QA))}
    # not another company's market, not a meeting place, not a deal, not the analyst's words
    assert got == {"Boston", "New York", "U.S.", "Europe"}


def test_brands_and_platforms_management_names_are_its_products() -> None:
    from kg.extract.calls import transcript_turns
    from kg.extract.calls_people import call_products
    from kg.extract.types import DocContext

    text = (
        "Dana Whitfield: How is the Veltrix brand doing? Can you comment?\n\n"
        "Marcus Oyelaran: We keep amplifying the Korvana brand, and our modules run on the "
        "Brixo platform. The Activewear business grew.\n"
    )
    ctx = DocContext(doc_id="c", kind="filing", title="", main_entity="Quorvane")
    got = {c.tail for c in call_products(text, ctx, transcript_turns(text))}
    assert got == {"Korvana", "Brixo"}  # not a segment, not the analyst's words


def test_initials_with_the_incs_letter_spell_the_ticker() -> None:
    text = QA.replace("Our whole Quorvane family", "All of Brindle Holdings")
    got = call_company("", "BHI Q2 2023 earnings call", text)
    assert got is not None and got.name == "Brindle Holdings"
    assert call_company("", "BHX Q2 2023 earnings call", text).how == "ticker"  # type: ignore[union-attr]


def test_an_officer_handed_the_word_by_role_is_the_companys() -> None:
    from kg.extract.calls import transcript_turns
    from kg.extract.calls_people import call_people
    from kg.extract.types import DocContext

    text = (
        "Dana Whitfield: Is there a limit on how much you can sell? Can you comment?\n\n"
        "Marcus Oyelaran: I'll let my very good CFO, Priya, answer that question.\n\n"
        "Priya Castellano: Dana, thanks for the question. No, there's no direct limit.\n\n"
        "Marcus Oyelaran: And our friend, Dana, knows it well.\n"
    )
    ctx = DocContext(doc_id="c", kind="filing", title="", main_entity="Quorvane")
    got = [
        (c.head, c.tail, c.props["role"]) for c in call_people(text, ctx, transcript_turns(text))
    ]
    assert got == [("Priya Castellano", "Quorvane", "CFO")]  # the analyst is nobody's officer


def test_a_partner_management_names_as_its_own() -> None:
    from kg.extract.calls import transcript_turns
    from kg.extract.calls_people import call_partners
    from kg.extract.types import DocContext

    text = (
        "Dana Whitfield: What about your partnership with Veltrix? Can you comment?\n\n"
        "Marcus Oyelaran: Our relationship with Korvana Lending goes back a long ways. Their "
        "partnership with Brixo is theirs.\n"
    )
    ctx = DocContext(doc_id="c", kind="filing", title="", main_entity="Quorvane")
    got = [(c.relation, c.tail) for c in call_partners(text, ctx, transcript_turns(text))]
    assert got == [("PARTNERS_WITH", "Korvana Lending")]
