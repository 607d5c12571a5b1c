"""Issue 43: earnings-call Q&A read by its turns. Who asks and who answers comes from the
transcript; figures management speaks are the company's (with the call's quarter and the
speaker), figures an analyst states in his question are not. Every company and person here
is invented."""

from __future__ import annotations

import asyncio

from kg.extract import DocContext
from kg.extract.calls import answer_spans, asked_spans, transcript_turns
from kg.extract.fastpath import extract_patterns
from kg.extract.pipeline import ExtractDoc, Extractor
from kg.extract.types import Mode

QA = (
    "Dana Whitfield: Hi, thanks for taking my question. I think you talked about 12 new "
    "logos. Can you talk about margins? Is 30% gross margin the right way to think about it?\n\n"
    "Marcus Oyelaran: Sure, Dana. We had 14 client wins so far this year, and we expect to "
    "expand margin by 20 basis points to 40 basis points for the full year. Total bookings "
    "were up about 18% versus last quarter. We saw a 25% increase in renewals.\n\n"
    "Dana Whitfield: Great, thanks.\n\n"
    "Priya Castellano: And just to add, we have a backlog of over $310 million, our "
    "strongest ever.\n"
)
CALL = DocContext(
    doc_id="call", kind="filing", title="QRV Q2 2023 earnings call", main_entity="Quorvane"
)


def test_roles_come_from_the_transcript() -> None:
    turns = transcript_turns(QA)
    roles = {t.speaker: t.role for t in turns}
    assert roles == {
        "Dana Whitfield": "analyst",
        "Marcus Oyelaran": "management",
        "Priya Castellano": "management",
    }
    spans = answer_spans(turns, 0, len(QA))
    assert [s for _, _, s in spans] == ["Marcus Oyelaran", "Priya Castellano"]
    asked = asked_spans(turns, 0, len(QA))
    assert QA[asked[0][0] : asked[0][1]].startswith("Hi, thanks for taking my question")


def test_operator_introduces_the_analyst() -> None:
    text = (
        "Operator: Our next question comes from Lena Brodsky with Harwell Securities.\n"
        "Lena Brodsky: Good morning. Thank you.\n"
        "Tomas Eriksen: Good morning, Lena. Revenue was $1.2 billion.\n"
    )
    roles = {t.speaker: t.role for t in transcript_turns(text)}
    assert roles == {
        "Operator": "operator",
        "Lena Brodsky": "analyst",
        "Tomas Eriksen": "management",
    }


def test_news_with_labelled_lines_is_no_transcript() -> None:
    news = (
        "WASHINGTON (Reuters) - The central bank held rates.\n"
        "KEY POINTS: * Rates unchanged at 1 percent.\n"
        "COMMENTS: Jane Roe, economist: 'As expected.'\n"
    )
    assert transcript_turns(news) == []
    assert transcript_turns("Revenue: $4 million.\nCosts: $3 million.\n") == []


def test_spoken_figures_only_in_management_answers() -> None:
    turns = transcript_turns(QA)
    got = {
        (c.tail, c.props.get("raw"), c.props.get("speaker"), c.props.get("period"))
        for c in extract_patterns(QA, CALL, "en", answer_spans(turns, 0, len(QA)))
    }
    assert ("client wins", "14", "Marcus Oyelaran", "FY2023") in got
    assert ("margin", "20 basis points to 40 basis points", "Marcus Oyelaran", "FY2023") in got
    assert ("bookings", "18%", "Marcus Oyelaran", "2023-Q2") in got
    assert ("renewals", "25%", "Marcus Oyelaran", "2023-Q2") in got
    assert ("backlog", "$310 million", "Priya Castellano", "2023-Q2") in got
    # the analyst's "12 new logos" and "30% gross margin" are his, not the company's
    assert not any(raw in ("12", "30%") for _, raw, _, _ in got)
    # without the transcript's turns the answer-scoped shapes do not run
    assert not [c for c in extract_patterns(QA, CALL, "en") if c.rule.endswith("_call")]


def test_the_pipeline_drops_what_the_analyst_states() -> None:
    text = (
        "Dana Whitfield: So revenue was $900 million in the quarter? Can you comment?\n\n"
        "Marcus Oyelaran: Yes. Revenue was $950 million in the quarter.\n"
    )
    doc = ExtractDoc(
        id="c1", text=text, title="QRV Q2 2023 earnings call", kind="filing", company="Quorvane"
    )
    result = asyncio.run(Extractor(use_nlp=False).extract(doc, Mode.FAST))
    revenue = [t for t in result.triples if t.relation == "DISCLOSES" and t.tail == "Revenue"]
    assert [t.attributes.get("raw") for t in revenue] == ["$950 million"]
    assert revenue[0].attributes.get("speaker") == "Marcus Oyelaran"
    assert revenue[0].attributes.get("period") == "2023-Q2"
    assert result.stats.dropped["analyst_turn"] >= 1


def test_where_management_says_the_company_operates() -> None:
    text = (
        "Dana Whitfield: Where are you taking share? Can you comment?\n\n"
        "Marcus Oyelaran: It has been consistent across both the U.S. and Latin America. "
        "We have also operated in Poland for 15 years. Our teams in the field are busy.\n"
    )
    turns = transcript_turns(text)
    got = {
        (c.head, c.tail)
        for c in extract_patterns(text, CALL, "en", answer_spans(turns, 0, len(text)))
        if c.relation == "OPERATES_IN"
    }
    assert {("Quorvane", "U.S."), ("Quorvane", "Latin America"), ("Quorvane", "Poland")} <= got
    doc = ExtractDoc(
        id="c2", text=text, title="QRV Q2 2023 earnings call", kind="filing", company="Quorvane"
    )
    result = asyncio.run(Extractor(use_nlp=False).extract(doc, Mode.FAST))
    kept = {t.tail for t in result.triples if t.relation == "OPERATES_IN"}
    assert {"U.S.", "Latin America", "Poland"} <= kept and "the field" not in kept


def test_ranges_said_in_words() -> None:
    text = (
        "Dana Whitfield: How do you see next year? Can you comment?\n\n"
        "Marcus Oyelaran: We expect revenue growth in the mid-single digits for the full year, "
        "and low-double-digit EPS growth. We want to maintain that mid-single-digit long term.\n"
    )
    doc = ExtractDoc(
        id="c3", text=text, title="QRV Q2 2023 earnings call", kind="filing", company="Quorvane"
    )
    result = asyncio.run(Extractor(use_nlp=False).extract(doc, Mode.FAST))
    got = {t.tail: t.attributes for t in result.triples if t.relation == "DISCLOSES"}
    assert got["revenue growth"]["level"] == "mid-single digits"
    # the adjective form names the growth as said: "low-double-digit EPS growth"
    assert (got["EPS growth"]["unit"], got["EPS growth"]["measure"]) == ("%", "range")
    assert "long term" not in got  # no metric named: no fact


def test_the_business_management_says_it_is_in() -> None:
    text = (
        "Dana Whitfield: Where does the growth come from? Can you comment?\n\n"
        "Marcus Oyelaran: We've been in the sensor-array business for a long time. "
        "It is the growth that we have in the commercial business. We're in the right business.\n"
    )
    turns = transcript_turns(text)
    got = {
        c.tail
        for c in extract_patterns(text, CALL, "en", answer_spans(turns, 0, len(text)))
        if c.relation == "PRODUCES"
    }
    assert got == {"sensor-array"}


def test_one_word_and_nicknamed_speakers() -> None:
    text = (
        "Lou: Hi, this is Lou on for Dana. Can you talk about the services outlook?\n\n"
        'Marcus "Mack" Oyelaran: Sure. By vectors, services is expected to grow 6% to 7%, and we expect '
        "the products business to grow in the low teens.\n\n"
        "Lou: Thanks. And the margin?\n\n"
        "Priya Castellano: We had 9% organic growth in student loans, and we moved from roughly "
        "30% share to 33% share. Now I'm making $1.9 billion of EBITDA a quarter.\n"
    )
    turns = transcript_turns(text)
    assert {t.speaker: t.role for t in turns} == {
        "Lou": "analyst",
        'Marcus "Mack" Oyelaran': "management",
        "Priya Castellano": "management",
    }
    got = {
        c.tail: c.props
        for c in extract_patterns(text, CALL, "en", answer_spans(turns, 0, len(text)))
        if c.relation == "DISCLOSES"
    }
    services = got["services"]
    assert (services["low_value"], services["high_value"], services["unit"]) == (6.0, 7.0, "%")
    assert services["speaker"] == 'Marcus "Mack" Oyelaran'
    assert (got["student loans"]["value"], got["student loans"]["measure"]) == (9.0, "change")
    assert got["student loans"]["metric"] == "organic growth"
    assert (got["share"]["value"], got["share"]["period"]) == (33.0, "2023-Q2")
    assert (got["EBITDA"]["value"], got["EBITDA"]["unit"]) == (1.9e9, "USD")
    assert "grow" not in got  # "to grow in the low teens": a verb, no metric


def test_a_one_word_label_alone_is_no_speaker() -> None:
    story = "Note: figures are preliminary.\nJane Roe: rates held.\nSource: the central bank.\n"
    # one full name and one-word labels said once: no transcript
    assert transcript_turns(story) == []


def test_past_levels_and_analyst_figures_are_not_read() -> None:
    text = (
        "Dana Whitfield: Was it 40% share last year? Can you comment?\n\n"
        "Marcus Oyelaran: Two years ago, I was making $50 million of EBITDA.\n"
    )
    turns = transcript_turns(text)
    got = extract_patterns(text, CALL, "en", answer_spans(turns, 0, len(text)))
    assert not [c for c in got if c.rule.endswith("_call")]


def test_headcount_said_and_a_part_of_it() -> None:
    text = (
        "Dana Whitfield: How many people do you have there? Can you comment?\n\n"
        "Marcus Oyelaran: As you know, we have about 70,000 people. We have 4,000 colleagues "
        "in the Baltics out of our 70,000, and we have 12 people working on it.\n"
    )
    turns = transcript_turns(text)
    got = [
        (c.tail, c.props.get("value"), c.props.get("unit"))
        for c in extract_patterns(text, CALL, "en", answer_spans(turns, 0, len(text)))
        if c.relation == "DISCLOSES"
    ]
    assert got == [("people", 70000.0, "count")]


def test_a_metric_that_opens_the_sentence() -> None:
    text = (
        "Dana Whitfield: How did the quarter go? Can you comment?\n\n"
        "Marcus Oyelaran: Organic growth was 7%. Retention was a little over 80%. "
        "So it was 5%. We were up 4%.\n"
    )
    turns = transcript_turns(text)
    got = {
        c.tail: c.props.get("value")
        for c in extract_patterns(text, CALL, "en", answer_spans(turns, 0, len(text)))
        if c.relation == "DISCLOSES"
    }
    assert got == {"Organic growth": 7.0, "Retention": 80.0}  # no pronoun is a metric
