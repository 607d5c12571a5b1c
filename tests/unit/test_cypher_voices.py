"""Word classes a new voice brings (issue 44, sixth pass), on wordings invented for this
test (none is a dev or test question): sentence-final particles and office requests that
carry no constraint, the store named in the question, Taiwan usage, dates written
day-month-year with hyphens, dotted initials that are no chat abbreviation, relation words
in their other inflections, "the days both were published" as a condition on days, and a
month tenor alone beside its curve's series."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from kg.cypher.respell import Respeller
from kg.cypher.units import parse
from tests.unit.test_cypher_compose import best, frame, lexicon

THU = datetime(2024, 9, 19, tzinfo=UTC)


@pytest.mark.parametrize(
    ("question", "word"),
    [
        ("what did the 2y close at yesterday lah", "lah"),
        ("kindly advise the SOFR close on 2024-09-10", "advise"),
        ("which banks in the database are listed on SSE", "database"),
        ("库里有哪些基金？求大佬", "大佬"),
        ("thank you, could you list the funds managed by Zhang Kun", "thank"),
    ],
)
def test_discourse_words_are_no_content_a_reading_must_place(question: str, word: str) -> None:
    assert word not in frame(question).uncovered


def test_a_content_word_beside_a_particle_is_still_unplaced() -> None:
    # the particle is read, the unknown word is not
    assert "zorb" in frame("which funds do zorbing lah").uncovered  # a light stem


def test_dotted_initials_are_not_the_chat_u() -> None:
    out = Respeller(lexicon()).respell("which U.S. banks are listed, can u say")
    assert "U.S." in out and "you say" in out


@pytest.mark.parametrize(
    ("typed", "start"),
    [("SOFR on 12-Aug-2024", "2024-08-12"), ("DR007 avg for Jul-24", "2024-07-01")],
)
def test_day_month_year_with_hyphens_is_a_date(typed: str, start: str) -> None:
    text = Respeller(lexicon()).respell(typed)
    win = parse(text, THU).time
    assert win is not None
    assert datetime.fromtimestamp(win.start_ms / 1000, UTC).date().isoformat() == start


def test_taiwan_usage_reads_as_the_mainland_words() -> None:
    out = Respeller(lexicon()).respell("美国2年期公债殖利率，联准会")
    assert "国债收益率" in out and "美联储" in out


def test_days_both_were_published_are_a_condition_not_a_question_for_days() -> None:
    f = frame("mean of SOFR minus US_EFFR in july, using the days on which both were published")
    assert f.point_time is None and f.daily == "close"
    assert frame("on which days in july did SOFR close above 5.3").point_time == "day"


@pytest.mark.parametrize(
    ("question", "relation"),
    [
        ("which indicators are tracking a bond issued by the US Treasury", "TRACKS"),
        ("which companies trade on the NASDAQ", "exchange"),
        ("who is managing the E Fund Blue Chip fund", "MANAGES"),
    ],
)
def test_relation_words_in_other_inflections(question: str, relation: str) -> None:
    assert relation in best(question).cypher
    assert not {"track", "trade", "manag"} & set(frame(question).uncovered)


def test_a_month_tenor_alone_is_its_curves_point_beside_that_curves_series() -> None:
    c = best("in july how many days did the 6 month bill close below the 3 month one")
    assert {"US6M", "US3M"} <= {str(v) for v in c.params.values()}
    # alone, "3 month" names no series (a window of three months, a tenor of a bond...)
    assert not any(m.of("entity") for m in lexicon().match("the last 3 month")[1])


@pytest.mark.parametrize(
    ("question", "prop"),
    [
        ("what is the currency of the bond that CN10Y tracks", "currency"),
        ("tenor of the bonds the US Treasury issues", "tenor_years"),
    ],
)
def test_a_property_asked_of_a_set_reached_by_a_relation_is_returned(
    question: str, prop: str
) -> None:
    cy = best(question).cypher
    assert f"t.{prop} AS {prop}" in cy
    # a property the question filters on is no column of its own
    assert "t.currency AS" not in best("which bonds have currency USD").cypher


def test_a_lead_that_names_a_property_is_no_preamble() -> None:
    r = Respeller(lexicon())
    assert r.drop_preamble("pls advise the currency of the bond which is tracked by CN10Y") == (
        "pls advise the currency of the bond which is tracked by CN10Y"
    )
    assert r.drop_preamble("desk here, which banks are listed on SSE").startswith("which")


def test_the_year_of_a_month_is_no_threshold() -> None:
    assert parse("average SOFR over August 2024", THU).comparisons == ()
    assert [
        c.value for c in parse("days SOFR was above 5.3 over August 2024", THU).comparisons
    ] == [5.3]


@pytest.mark.parametrize(
    "question", ["Month-on-month change in China CPI in October?", "China CPI, year on year"]
)
def test_spelled_out_yoy_and_mom_are_read(question: str) -> None:
    assert frame(question).uncovered == ()
