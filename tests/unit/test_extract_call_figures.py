"""Issue 43/42: earnings-call figures read by the transcript's structure (kg/extract/calls.py
turns, kg/extract/calls_figures.py subjects). Every company and person here is invented."""

from __future__ import annotations

import asyncio

from kg.extract import DocContext
from kg.extract.calls import speaker_field, transcript_turns
from kg.extract.calls_figures import call_figures, metrics_in
from kg.extract.model_tier import profile_of
from kg.extract.pipeline import ExtractDoc, Extractor
from kg.extract.types import Mode

CALL = DocContext(
    doc_id="call", kind="filing", title="QRV Q2 2023 earnings call", main_entity="Quorvane"
)


def _read(text: str) -> dict[str, dict[str, object]]:
    return {c.tail: c.props for c in call_figures(text, CALL, transcript_turns(text))}


# -- the turn reader -------------------------------------------------------------------------


def test_speaker_fields_with_titles_and_firms() -> None:
    assert speaker_field("Jo Bell - Analyst") == ("Jo Bell", "Analyst")
    assert speaker_field("Jo Bell -- Harwell Securities -- Analyst") == (
        "Jo Bell",
        "Harwell Securities -- Analyst",
    )
    assert speaker_field("Sam Ray, Chief Financial Officer") == (
        "Sam Ray",
        "Chief Financial Officer",
    )
    assert speaker_field('Earl C. "Duke" Tamsin') == ('Earl C. "Duke" Tamsin', "")
    assert speaker_field("Unknown speaker") == ("Unknown speaker", "")
    for no in ("KEY POINTS", "Revenue in the quarter was up", "Note that 2023"):
        assert speaker_field(no) is None


def test_first_asking_speaker_is_the_analyst_whatever_the_layout() -> None:
    labelled = (
        "Operator: Next, a question from the line.\n"
        "Jo Bell -- Harwell Securities -- Analyst: Hi. What about margins? Can you say?\n"
        "Sam Ray -- Chief Financial Officer: It was up 50 basis points.\n"
        "Jo Bell -- Harwell Securities -- Analyst: Thanks.\n"
    )
    assert [(t.speaker, t.role) for t in transcript_turns(labelled)] == [
        ("Operator", "operator"), ("Jo Bell", "analyst"), ("Sam Ray", "management"),
        ("Jo Bell", "analyst"),
    ]  # fmt: skip
    # management greets first; the short "How are you?" is no question; a second
    # executive who asks back is still management
    greeting = (
        "Ann Lee: Good morning, Jo. How are you?\n"
        "Jo Bell: Fine. On margins, where do you expect them to land this year? Any color?\n"
        "Ann Lee: Margin should be in the low teens.\n"
        "Tom Ode: Should I add to that? We see the same.\n"
    )
    roles = {t.speaker: t.role for t in transcript_turns(greeting)}
    assert roles == {"Ann Lee": "management", "Jo Bell": "analyst", "Tom Ode": "management"}
    unnamed = (
        "Unknown speaker: Hi, thanks for taking our question. Where is inflation biggest?\n"
        "Ann Lee: Mostly in freight.\nUnknown speaker: Got it.\n"
    )
    assert transcript_turns(unnamed)[0].role == "analyst"


def test_the_tier_profiles_a_call_by_the_same_turn_reader() -> None:
    text = "Jo Bell: How is pricing? Can you comment?\nAnn Lee: Pricing was up 3%.\n"
    assert profile_of("news", "en", text) == "call"
    assert profile_of("news", "en", "Note: the bank held rates.\nRates: unchanged.") == "firms"


# -- figures and their subjects -------------------------------------------------------------


def test_pronoun_and_elliptic_answers_take_the_asked_metric() -> None:
    text = (
        "Dana Whitfield: Can you talk about gross margin in the quarter? Thanks.\n\n"
        "Marcus Oyelaran: Sure. It was up 50 basis points. We feel good about that.\n"
    )
    got = _read(text)
    assert set(got) == {"gross margin"}
    m = got["gross margin"]
    assert (m["raw"], m["unit"], m["measure"]) == ("50 basis points", "bp", "change")
    assert (m["period"], m["speaker"], m["kind"]) == ("2023-Q2", "Marcus Oyelaran", "actual")
    assert m["subject_from"] == "context"


def test_two_metrics_in_play_give_no_fact() -> None:
    text = (
        "Dana Whitfield: How did revenue and EBITDA trend? Can you comment?\n\n"
        "Marcus Oyelaran: Yes. It was up about 5%.\n"
    )
    assert _read(text) == {}


def test_spoken_bands_ranges_and_multiples_with_their_periods() -> None:
    text = (
        "Dana Whitfield: How do you see the year? Can you comment?\n\n"
        "Marcus Oyelaran: We expect loan growth in the mid-single digits for the full year. "
        "Next quarter, we expect revenue of $410 million to $430 million. "
        "We're trending toward three to four times leverage by the end of the year.\n"
    )
    got = _read(text)
    growth = got["loan growth"]
    assert (growth["low_value"], growth["high_value"], growth["unit"]) == (4.0, 6.0, "%")
    assert (growth["period"], growth["kind"]) == ("FY2023", "guidance")
    revenue = got["revenue"]
    assert (revenue["low_value"], revenue["high_value"]) == (410e6, 430e6)
    assert revenue["period"] == "2023-Q3"  # "next quarter" on a Q2 call
    lev = got["leverage"]
    assert (lev["low_value"], lev["high_value"], lev["unit"]) == (3.0, 4.0, "x")


def test_figures_of_the_past_of_others_and_of_the_analyst_are_no_facts() -> None:
    text = (
        "Dana Whitfield: Revenue was $900 million last quarter, right? Can you comment?\n\n"
        "Marcus Oyelaran: Two years ago revenue was $500 million. We closed $10 million deals "
        "this quarter. It costs $1.25 per gallon.\n"
    )
    assert _read(text) == {}


def test_a_figure_of_a_noun_is_of_that_noun() -> None:
    text = (
        "Dana Whitfield: What about capital? Can you comment?\n\n"
        "Marcus Oyelaran: We have $414 million of equity capital today, and pricing is about "
        "3% to 4% in that number. We saw a 90% increase in production there.\n"
    )
    got = _read(text)
    assert (got["production"]["value"], got["production"]["measure"]) == (90.0, "change")
    assert got["equity capital"]["value"] == 414e6
    assert (got["pricing"]["low_value"], got["pricing"]["high_value"]) == (3.0, 4.0)


def test_metric_names_keep_their_qualifiers() -> None:
    text = "our organic loan growth and C&I production costs and the R&D tax audit"
    assert [m.name for m in metrics_in(text)] == ["organic loan growth", "C&I production costs"]


def test_the_pipeline_keeps_the_company_period_and_speaker() -> None:
    text = (
        "Dana Whitfield: Where is net interest margin heading? Can you comment?\n\n"
        "Marcus Oyelaran: Yeah. We think it lands in the low teens next year.\n"
    )
    doc = ExtractDoc(
        id="c9", text=text, title="QRV Q2 2023 earnings call", kind="filing", company="Quorvane"
    )
    result = asyncio.run(Extractor(use_nlp=False).extract(doc, Mode.FAST))
    got = [t for t in result.triples if t.tail == "net interest margin"]
    assert len(got) == 1 and got[0].head == "Quorvane"
    a = got[0].attributes
    assert (a["period"], a["speaker"], a["kind"], a["raw"]) == (
        "FY2024", "Marcus Oyelaran", "guidance", "low teens",
    )  # fmt: skip


def test_the_tier_reads_management_answers_with_the_question_beside() -> None:
    from kg.extract.model_tier import call_windows

    text = (
        "QRV Q2 2023 earnings call\n\n"
        "Dana Whitfield: Revenue was $900 million last quarter. How is gross margin? Thanks.\n\n"
        "Marcus Oyelaran: It was up 50 basis points, and we feel good about the mix.\n"
    )
    wins = call_windows(text, 1200)
    assert len(wins) == 1  # the analyst's turn (and his $900 million) is no window
    off, answer, asked, speaker = wins[0]
    assert text[off : off + len(answer)] == answer and answer.startswith("It was up 50")
    assert asked.startswith("Revenue was $900 million") and speaker == "Marcus Oyelaran"


def test_without_a_company_the_title_ticker_holds_the_call_figures() -> None:
    text = "Jo Bell: How is gross margin? Can you comment?\n\nAnn Lee: It was up 50 basis points.\n"
    doc = ExtractDoc(id="c10", text=text, title="QRV Q2 2023 earnings call", kind="filing")
    result = asyncio.run(Extractor(use_nlp=False).extract(doc, Mode.FAST))
    got = [(t.head, t.tail, t.attributes.get("period")) for t in result.triples]
    assert got == [("QRV", "gross margin", "2023-Q2")]


def test_officers_management_introduces_are_the_companys() -> None:
    text = (
        "Dana Whitfield: Who runs operations now? Can you comment?\n\n"
        "Marcus Oyelaran: I want to introduce Lia Brandt, our new chief operating officer. "
        "And Tom Ode, our friend at the bank, helped too. Paul Ray, our former CFO, retired.\n"
    )
    got = [
        (c.head, c.relation, c.tail, c.props["role"])
        for c in call_figures(text, CALL, transcript_turns(text))
        if c.relation == "EXECUTIVE_OF"
    ]
    assert got == [("Lia Brandt", "EXECUTIVE_OF", "Quorvane", "chief operating officer")]


def test_a_split_the_question_asks_for_is_read_part_by_part() -> None:
    text = (
        "Dana Whitfield: What is your leisure versus corporate mix now? Thank you.\n\n"
        "Marcus Oyelaran: On a pro forma basis, at a pre-COVID level, we are about 28% "
        "leisure, about 36% business transient. Revenue grew 5% organically, 3% currency.\n"
    )
    got = _read(text)
    assert (got["leisure"]["value"], got["business transient"]["value"]) == (28.0, 36.0)
    assert "currency" not in got and "organically" not in got


def test_a_fourth_quarter_call_looks_forward_to_the_next_year() -> None:
    text = (
        "Dana Whitfield: What are the savings, and when do they come?\n\n"
        "Marcus Oyelaran: It's $16 million within the current fiscal year. We expect loan "
        "growth in the mid-single digits for the full year. Those savings will generate "
        "$17 million on an annualized basis.\n"
    )
    q4 = DocContext(doc_id="q4", kind="filing", title="QRV Q4 2023 earnings call",
                    main_entity="Quorvane")  # fmt: skip
    got = [(c.tail, c.props) for c in call_figures(text, q4, transcript_turns(text))]
    by_value = {p.get("value", p.get("low_value")): (tail, p) for tail, p in got}
    assert by_value[4.0][0] == "loan growth"
    assert by_value[4.0][1]["period"] == "FY2024"  # guidance on a Q4 call: next year
    assert by_value[16e6][1]["period"] == "FY2024"  # "the current fiscal year"
    assert by_value[17e6][1]["measure"] == "annualized"
    assert _read(text)["loan growth"]["period"] == "FY2023"  # on a Q2 call: this year


def test_guidance_the_patterns_read_without_a_period_is_the_years() -> None:
    text = (
        "Dana Whitfield: How do you see the year? Can you comment?\n\n"
        "Marcus Oyelaran: Services is expected to grow 6% to 7%. Typically, our churn rate "
        "for the second quarter was somewhere in the range of 12%.\n"
    )
    doc = ExtractDoc(id="c11", text=text, title="QRV Q3 2023 earnings call", kind="filing",
                     company="Quorvane")  # fmt: skip
    result = asyncio.run(Extractor(use_nlp=False).extract(doc, Mode.FAST))
    got = {t.tail: t.attributes.get("period") for t in result.triples}
    assert got.get("Services") == "FY2023"  # not the call's quarter
    assert "churn rate" not in got  # a habitual figure, no fact of the quarter
