"""Precision checks on English sentence facts that carry over to unseen text: a
sentence-initial word naming a kind of metric is no owner, shares sold are no product
(sentences written for these tests; invented company names)."""

from __future__ import annotations

from kg.extract import DocContext
from kg.extract.deps_en import dependency_candidates
from kg.extract.nlp_en import nlp
from kg.extract.types import Candidate, Component
from kg.extract.verify import Verifier, VerifyStats


def _figure(head: str, metric: str, text: str) -> Candidate:
    props = {"amount": "$3.2 billion", "value": 3.2e9, "unit": "USD", "period": "FY2021"}
    return Candidate(head, "Company", "DISCLOSES", metric, "FinMetric", 0, len(text),
                     Component.PATTERN, "t", None, props, 0.9)  # fmt: skip


def test_a_metric_kind_first_in_the_sentence_is_no_owner() -> None:
    for head, metric in (("Advertising", "costs"), ("Subscription", "revenue"),
                         ("Membership", "fee revenue"), ("Rental", "income")):  # fmt: skip
        text = f"{head} {metric} were $3.2 billion for fiscal 2021."
        stats = VerifyStats()
        assert Verifier().reflect([_figure(head, metric, text)], text,
                                  DocContext(doc_id="t"), stats) == []  # fmt: skip
        assert stats.dropped["not_an_owner"] == 1


def test_a_name_first_in_the_sentence_stays_the_owner() -> None:
    for head in ("Norvale", "NRVL"):
        text = f"{head} revenue was $3.2 billion for fiscal 2021."
        kept = Verifier().reflect([_figure(head, "revenue", text)], text,
                                  DocContext(doc_id="t"), VerifyStats())  # fmt: skip
        assert [c.head for c in kept] == [head]
    text = "In 2021, Subscription revenue of Norvale was $3.2 billion."  # not first: kept
    kept = Verifier().reflect([_figure("Subscription", "revenue", text)], text,
                              DocContext(doc_id="t"), VerifyStats())  # fmt: skip
    assert len(kept) == 1


def test_shares_sold_are_no_product() -> None:
    doc = nlp()("In 2017, Norvale Robotics sold 69.75 million ordinary shares of Tessly N.V.")
    rels = {(c.head, c.relation) for s in doc.sents for c in dependency_candidates(s)}
    assert ("Norvale Robotics", "PRODUCES") not in rels
    doc = nlp()("Norvale Robotics sells industrial welding robots.")
    rels = {(c.relation, c.tail) for s in doc.sents for c in dependency_candidates(s)}
    assert ("PRODUCES", "industrial welding robots") in rels


def _party(head: str, ht: str, rel: str, tail: str, tt: str, text: str) -> Candidate:
    return Candidate(head, ht, rel, tail, tt, 0, len(text), Component.PATTERN, "t", None, {},
                     0.9)  # fmt: skip


def test_a_region_or_nationality_is_no_company_party() -> None:
    text = "Veldran President Ana Kosta said the talks would go on."
    for employer in ("Veldran", "Chinese", "Brazil"):
        c = _party("Ana Kosta", "Person", "EXECUTIVE_OF", employer, "Company", text)
        stats = VerifyStats()
        kept = Verifier().reflect([c], text, DocContext(doc_id="t"), stats)
        assert (kept == []) == (employer != "Veldran")
    c = _party("Asian", "Company", "PRODUCES", "inch up ahead", "Product", text)
    assert Verifier().reflect([c], text, DocContext(doc_id="t"), VerifyStats()) == []


def test_headline_words_are_trimmed_from_names() -> None:
    text = "Norvale Robotics CEO Ana Kosta Announces Retirement"
    c = _party("Ana Kosta Announces", "Person", "EXECUTIVE_OF", "Norvale Robotics", "Company",
               text)  # fmt: skip
    stats = VerifyStats()
    kept = Verifier().reflect([c], text, DocContext(doc_id="t"), stats)
    assert [(k.head, k.tail) for k in kept] == [("Ana Kosta", "Norvale Robotics")]
    assert stats.repaired["headline_name"] == 1
    text = "Says Norvale Robotics CEO Ana Kosta's Plan Is Working"
    c = _party("Says Norvale Robotics", "Company", "HAS_CEO", "Ana Kosta's Plan", "Person", text)
    kept = Verifier().reflect([c], text, DocContext(doc_id="t"), VerifyStats())
    assert [(k.head, k.tail) for k in kept] == [("Norvale Robotics", "Ana Kosta")]
    text = "Were Quite Challenging, Says CFO"
    c = _party("Were Quite Challenging", "Person", "EXECUTIVE_OF", "Says", "Company", text)
    assert Verifier().reflect([c], text, DocContext(doc_id="t"), VerifyStats()) == []


def _dep(text: str) -> set[tuple[str, str, str]]:
    doc = nlp()(text)
    return {(c.head, c.relation, c.tail) for s in doc.sents for c in dependency_candidates(s)}


def test_corporate_acts_and_results_are_no_products() -> None:
    for text in (
        "Norvale Robotics launches equity offering; shares down 3% after hours.",
        "Norvale Robotics to sell its welding business segment for $40 million.",
        "Norvale Robotics released its annual earnings on Thursday.",
        "Norvale Robotics unveils welding robots #economy #robots",
    ):
        got = {t for h, r, t in _dep(text) if r == "PRODUCES"}
        assert not got & {"equity offering", "welding business segment", "annual earnings",
                          "economy", "robots"}, (text, got)  # fmt: skip


def test_a_capitalised_legal_word_or_an_exchange_is_no_kind_of_company() -> None:
    got = _dep("Is It Smart To Buy Norvale Robotics Corporation (NYSE:NRVL) Before It Goes?")
    assert not [f for f in got if f[1] == "BELONGS_TO"]
    got = _dep("Welding robot maker Norvale Robotics said on Monday it hired 200 people.")
    assert ("Norvale Robotics", "BELONGS_TO", "Welding robot maker") in got


def _one(head: str, ht: str, rel: str, tail: str, tt: str, text: str, **props: object) -> list:
    c = Candidate(head, ht, rel, tail, tt, 0, len(text), Component.NLP, "t", None, dict(props),
                  0.7)  # fmt: skip
    return Verifier().reflect([c], text, DocContext(doc_id="t"), VerifyStats())


def test_checks_read_in_the_sentence_of_10k_prose() -> None:
    text = "In 2022, Small and Medium Business revenues were $12.6 billion."
    assert _one("Norvale", "Company", "DISCLOSES", "Medium Business revenues", "FinMetric", text,
                value="$12.6 billion", period="2022") == []  # fmt: skip
    text = "Our GPU business could be materially adversely affected by crypto mining."
    assert _one("Norvale", "Company", "IMPACTED_BY", "GPU business", "RiskFactor", text) == []
    text = "Besides the risks of international operations discussed above, we face others."
    tail = "international operations discussed above"
    assert _one("Norvale", "Company", "IMPACTED_BY", tail, "RiskFactor", text) == []
    text = "See Business - Government Regulation in this Form 10-K."
    assert _one("Norvale", "Company", "COMPLIES_WITH", "Government Regulation", "Regulation",
                text) == []  # fmt: skip
    text = "Sustained periods of high inflation may increase certain of our expenses."
    tail = "Sustained periods of high inflation"
    assert len(_one("Norvale", "Company", "IMPACTED_BY", tail, "RiskFactor", text)) == 1


def test_a_growth_rate_is_the_change_and_the_level_the_value() -> None:
    text = "Direct revenues grew 14% from $18.7 billion in fiscal 2022 to $21.3 billion in 2023."
    kept = _one("Norvale", "Company", "DISCLOSES", "Direct revenues", "FinMetric", text,
                value="14%", period="2023")  # fmt: skip
    assert [(k.props["value"], k.props["change"]) for k in kept] == [("$21.3 billion", "14%")]


def test_a_site_under_a_suspension_is_not_operated() -> None:
    text = (
        "The conflict has continued to result in uncertainty and certain of our operations "
        "in Ukraine remain suspended."
    )
    assert not [f for f in _dep(text) if f[1] == "OPERATES_IN"]
    assert ("hotels", "OPERATES_IN", "Texas") in _dep("Our hotels in Texas performed well.")


def test_a_win_is_no_acquisition() -> None:
    text = "Norvale Robotics wins Pentagon contract worth $111 million."
    assert _one("Norvale Robotics", "Company", "INVOLVED_IN", "Pentagon contract", "Event",
                text) == []  # fmt: skip
    text = "Norvale Robotics acquires Tessly Sensors for $40 million."
    assert len(_one("Norvale Robotics", "Company", "INVOLVED_IN", "Tessly Sensors", "Event",
                    text)) == 1  # fmt: skip


def test_an_untagged_proper_noun_subject_makes_products() -> None:
    doc = nlp()("Business Services TWC offers data, video and voice services to businesses.")
    got = {(c.head, c.tail) for s in doc.sents for c in dependency_candidates(s)
           if c.relation == "PRODUCES"}  # fmt: skip
    assert ("TWC", "video and voice services") in got


def test_a_figure_the_sentence_gives_another_party_is_not_the_subjects() -> None:
    ctx = DocContext(doc_id="t", main_entity="Norvale Robotics Inc.")
    for text in (
        "In 2022, the Consumer segment's revenues were $10.5 billion, about 76% of the total.",
        "During 2021, Tessly only generated sales of $885 million in the venture.",
    ):
        tail = "revenues" if "revenues" in text else "sales"
        c = _figure("Norvale Robotics Inc.", tail, text)
        stats = VerifyStats()
        assert Verifier().reflect([c], text, ctx, stats) == [], text
        assert stats.dropped["other_owner"] == 1
    text = "Norvale Robotics's revenues were $3.2 billion for fiscal 2021."
    c = _figure("Norvale Robotics Inc.", "revenues", text)
    assert len(Verifier().reflect([c], text, ctx, VerifyStats())) == 1


def test_a_deal_target_that_is_a_place_or_cut_short_is_no_target() -> None:
    text = "Norvale Robotics buys its first Asia-based welding brand."
    assert _one("Norvale Robotics", "Company", "INVOLVED_IN", "Asia-based", "Event", text) == []
    text = "Norvale Robotics Confirms Deal To Acquire Tessly Sensors For $9.7B"
    kept = _one("Norvale Robotics", "Company", "INVOLVED_IN", "Tessly Sensors For", "Event", text)
    assert [k.tail for k in kept] == ["Tessly Sensors"]


def test_kind_of_company_after_as_with_the_company_as_subject() -> None:
    got = _dep("Norvale Bancorp is registered as a bank holding company under the Act.")
    assert ("Norvale Bancorp", "BELONGS_TO", "bank holding company") in got
    got = _dep("Norvale Robotics will provide a seamless path for riders.")
    assert not [f for f in got if f[1] == "PRODUCES"]


def test_sites_closed_or_ranked_are_not_operated() -> None:
    for text in (
        "Automakers close factories in China due to the outbreak.",
        "It is now one of the best welding shops in Colorado.",
    ):
        assert not [f for f in _dep(text) if f[1] == "OPERATES_IN"], text
    assert [f for f in _dep("Norvale opens new store in Hollywood.") if f[1] == "OPERATES_IN"]


def test_products_under_a_condition_or_qualities_are_not_stated() -> None:
    text = (
        "To the extent Norvale Robotics introduces welding robots before we do, we may be "
        "more vulnerable to its pricing."
    )
    assert not [f for f in _dep(text) if f[1] == "PRODUCES"]
    got = _dep("Norvale Robotics offers developer productivity and welding robots.")
    assert {t for h, r, t in got if r == "PRODUCES"} == {"welding robots"}


def test_addresses_ownership_suffixes_and_size_words_are_no_parties() -> None:
    text = "Our offices are at 2485 Augustine Drive, Santa Clara, California."
    assert _one("Augustine Drive", "Company", "OPERATES_IN", "Santa Clara", "Region", text) == []
    text = "In addition to Norvale-owned and Tessly-owned digital platforms in 40 countries."
    kept = _one("Norvale", "Company", "HAS_STAKE_IN", "Tessly-owned", "Company", text)
    assert [k.tail for k in kept] == ["Tessly"]
    text = "Larger firms such as Norvale Robotics are subject to more supervision."
    assert _one("Norvale Robotics", "Company", "BELONGS_TO", "larger", "Industry", text) == []


def test_a_kind_of_place_becomes_the_place_it_names() -> None:
    text = "Norvale Robotics was incorporated in 1967 under the laws of the State of Oregon."
    kept = _one("Norvale Robotics", "Company", "OPERATES_IN", "State", "Region", text)
    assert [k.tail for k in kept] == ["Oregon"]
    text = "Norvale Robotics expanded in the state."
    assert _one("Norvale Robotics", "Company", "OPERATES_IN", "state", "Region", text) == []


def test_deal_terms_sold_or_offered_are_no_products() -> None:
    for tail in ("half of stake", "50 percent premium", "new takeover bid", "more SAB assets"):
        text = f"Norvale Robotics offers {tail} to Tessly."
        assert _one("Norvale Robotics", "Company", "PRODUCES", tail, "Product", text) == [], tail


def test_the_seller_of_an_acquisition() -> None:
    got = _dep("In May 2017, Norvale Robotics completed its acquisition of Tessly Sensors Inc. "
               "from Quorra Holdings Limited for $2.9 billion.")  # fmt: skip
    assert ("Quorra Holdings Limited", "INVOLVED_IN", "Tessly Sensors Inc") in got
    got = _dep("The company occasionally makes purchases of ferrous materials from Quorra Steel.")
    assert not [f for f in got if f[1] == "INVOLVED_IN"]


def test_headline_buying_shapes_are_no_deals() -> None:
    text = "Merger Monday: Norvale buys Tessly, Quorra Bank buys Vant Brokerage"
    assert _one("Norvale", "Company", "INVOLVED_IN", "Quorra Bank", "Event", text) == []
    text = "3 Top Energy Stocks to Buy Right Now"
    assert _one("Top Energy Stocks", "Company", "INVOLVED_IN", "Right Now", "Event", text) == []
    text = "Norvale Wins with an Emphatic Majority"
    assert _one("Norvale", "Company", "INVOLVED_IN", "Emphatic Majority", "Event", text) == []
    text = "Norvale buys Tessly, Quorra Bank sells Vant Brokerage"
    assert len(_one("Norvale", "Company", "INVOLVED_IN", "Tessly", "Event", text)) == 1


def test_a_day_or_a_country_is_no_person() -> None:
    text = "Ruling Over Removal As Norvale Chairman On Wednesday"
    assert _one("Norvale", "Company", "HAS_CHAIRMAN", "Wednesday", "Person", text) == []


def test_the_seller_is_not_the_buyers_target() -> None:
    text = "Norvale to acquire luxury dealerships from Quorra Place in cash deal."
    c = Candidate("Norvale", "Company", "INVOLVED_IN", "Quorra Place", "Event", 0, len(text),
                  Component.PATTERN, "t", None, {"role": "buyer"}, 0.9)  # fmt: skip
    assert Verifier().reflect([c], text, DocContext(doc_id="t"), VerifyStats()) == []
