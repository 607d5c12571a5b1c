"""Issue 43: news shapes - central-bank decisions worded as decisions and in half points,
quoted people at their own employer (marked ``quoted``, never an executive of the story's
company). Sentences written for this test; people and firms are invented."""

from __future__ import annotations

from kg.extract import DocContext
from kg.extract.fastpath import extract_patterns

FED = DocContext(doc_id="fed", main_entity="Fed", main_type="Institution")
NEWS = DocContext(doc_id="news", main_entity="Hollis Mining", main_type="Company")


def facts(text: str, ctx: DocContext = NEWS) -> dict[tuple[str, str, str], dict]:
    return {(c.head, c.relation, c.tail): c.props for c in extract_patterns(text, ctx, "en")}


def test_policy_decisions_in_other_words() -> None:
    got = facts("The Bank of England on Thursday cut rates by half a point to 1 percent.")
    cut = got[("Bank of England", "SETS_POLICY", "rates")]
    assert (cut["action"], cut["change_value"], cut["value"]) == ("cut", 50.0, 1.0)
    got = facts("The ECB decided to raise its key rate by a quarter point.")
    assert got[("ECB", "SETS_POLICY", "rate")]["change_value"] == 25.0
    # "the central bank" is the story's bank only when the story is about one
    held = facts(
        "He dissented on the central bank's decision to leave monetary policy unchanged.", FED
    )
    assert held[("Fed", "SETS_POLICY", "monetary policy")]["action"] == "hold"
    assert not facts("the central bank's decision to cut rates.", DocContext(doc_id="x"))


def test_quoted_people_at_their_own_employer() -> None:
    got = facts(
        '"Demand is soft," said Dana Reyes, chief U.S. economist at Harwell Securities in '
        "New York. Corvane analyst Tomas Eriksen said the outlook was mixed."
    )
    reyes = got[("Dana Reyes", "EXECUTIVE_OF", "Harwell Securities")]
    assert (reyes["role"], reyes["quoted"]) == ("chief U.S. economist", "yes")
    assert got[("Tomas Eriksen", "EXECUTIVE_OF", "Corvane")]["role"] == "analyst"
    assert not [k for k in got if k[2] == "Hollis Mining"]  # not the story's company


def test_instant_view_comment_lines() -> None:
    got = facts(
        'COMMENTS: LENA BRODSKY, HEAD OF RESEARCH, TALBOT TRADING, STAMFORD, CONNECTICUT: "We '
        'expected this." OMAR FELL, CHIEF MARKET ANALYST AT NORTHGATE FX IN LONDON: "Soft."'
    )
    assert got[("LENA BRODSKY", "EXECUTIVE_OF", "TALBOT TRADING")]["role"] == "HEAD OF RESEARCH"
    assert ("OMAR FELL", "EXECUTIVE_OF", "NORTHGATE FX") in got


def test_results_story_quarter_from_title_and_dateline() -> None:
    from datetime import UTC, datetime

    from kg.extract.figures import sentence_period

    title = "Quorvane's main businesses lukewarm in first quarter\n"
    assert sentence_period("Total revenue fell 3.6 percent.", title, "2013-04-12") == (
        "2013-Q1",
        "header_document_date",
    )
    # a fourth quarter reported in January is last year's
    q4 = "Chicken scare hit Hollis sales in fourth quarter\n"
    assert sentence_period("Sales fell.", q4, "2013-01-23")[0] == "2012-Q4"
    assert sentence_period(
        "Sales fell.", "Two quarters: first quarter, second quarter\n", "2013-08-01"
    ) == ("", "none")
    ctx = DocContext(
        doc_id="r",
        title=title.strip(),
        main_entity="Quorvane",
        event_time=datetime(2013, 4, 12, tzinfo=UTC),
    )
    got = {
        c.tail: c.props
        for c in extract_patterns("Total revenue fell 3.6 percent to $25.12 billion.", ctx, "en")
    }
    assert got["revenue"]["period"] == "2013-Q1"


def test_titles_before_names_and_bare_of() -> None:
    got = facts(
        "Corvane Corp ( CRV.N ) Chief Executive Dana Reyes reiterated her view. The Fed's Vice "
        'Chair aside, Fed Governor Tomas Eriksen spoke. "Prices are up," said Lena Hart, of '
        "Talbot Asset Management."
    )
    assert got[("Dana Reyes", "EXECUTIVE_OF", "Corvane Corp")]["role"] == "Chief Executive"
    assert ("Corvane Corp", "HAS_CEO", "Dana Reyes") in got
    assert got[("Tomas Eriksen", "EXECUTIVE_OF", "Fed")]["role"] == "Governor"
    assert got[("Lena Hart", "EXECUTIVE_OF", "Talbot Asset Management")]["quoted"] == "yes"


def test_one_employer_where_the_names_nest() -> None:
    from datetime import UTC, datetime

    from core.records import Triple
    from kg.extract.verify import nested_employers

    def job(head: str, tail: str) -> Triple:
        return Triple(
            id=f"{head}-{tail}", source="t", event_time=datetime(2024, 1, 1, tzinfo=UTC),
            head=head, head_type="Person", relation="EXECUTIVE_OF", tail=tail, tail_type="Company",
        )  # fmt: skip

    kept = nested_employers(
        [
            job("Dana Reyes", "Chicago Fed"),
            job("Dana Reyes", "Fed"),
            job("周明远", "白宫国家经济委员会"),
            job("周明远", "美国白宫国家经济委员会"),
            job("Tomas Eriksen", "Fed"),
            job("Dana Reyes", "Federal Express"),  # no whole-word nesting: kept
        ]
    )
    assert [(t.head, t.tail) for t in kept] == [
        ("Dana Reyes", "Chicago Fed"),
        ("周明远", "美国白宫国家经济委员会"),
        ("Tomas Eriksen", "Fed"),
        ("Dana Reyes", "Federal Express"),
    ]


def test_a_plan_is_no_product() -> None:
    from kg.extract.types import Candidate
    from kg.extract.verify import Verifier

    text = "Quorvane, which plans to sell sensor arrays, said so. Quorvane makes industrial pumps."
    cut = text.index(" Quorvane makes")
    cands = [
        Candidate("Quorvane", "Company", "PRODUCES", "sensor arrays", "Product", 0, cut),
        Candidate(
            "Quorvane", "Company", "PRODUCES", "industrial pumps", "Product", cut + 1, len(text)
        ),
    ]
    kept, stats = Verifier().verify(cands, text, NEWS)
    assert [v.cand.tail for v in kept] == ["industrial pumps"]
    assert stats.dropped["planned"] == 1
