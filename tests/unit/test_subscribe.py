"""Subscriptions' pure logic: what a query reads, the index, conditions, diffs, the
alert payload, change records and the request model."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import httpx
import pytest
from pydantic import ValidationError

from core.errors import ReadOnlyViolation
from core.records import GraphChange, IndicatorTick, Triple
from kg.graph.ontology import default_ontology
from kg.subscribe.alert import alert_id, build_alert
from kg.subscribe.changes import change_id, tick_changes, triple_changes
from kg.subscribe.conditions import evaluate, row_digest, state_of, window_counts
from kg.subscribe.index import SubscriptionIndex
from kg.subscribe.model import (
    Condition,
    Subscription,
    SubscriptionSpec,
    owner_of,
    subscription_id,
)
from kg.subscribe.reads import Reads, query_reads
from kg.subscribe.translate import acronyms
from serving.feeds import AlertEvent, for_subscriptions
from streams.processors.subscriptions import WEBHOOK_ATTEMPTS, post_webhook

T = datetime(2026, 11, 20, tzinfo=UTC)


def change(cid: str, ids=(), rels=(), labels=()) -> GraphChange:
    return GraphChange(
        id=cid,
        source="t",
        event_time=T,
        kind="triple",
        record_id=cid,
        entity_ids=list(ids),
        relation_types=list(rels),
        labels=list(labels),
    )


# -- what a query reads ------------------------------------------------------------------


def test_reads_labels_relations_and_ids_from_params_and_literals() -> None:
    r = query_reads(
        "MATCH (c:Entity)-[f:INVOLVED_IN]->(e:Event) WHERE c.id IN $w RETURN c.id",
        {"w": ["A", "B"]},
    )
    assert r == Reads(
        frozenset({"Entity", "Event"}), frozenset({"INVOLVED_IN"}), frozenset({"A", "B"})
    )
    r = query_reads("MATCH (a:Indicator {id: 'US10Y'}), (b {id: $b}) RETURN 1", {"b": "US2Y"})
    assert r.entity_ids == {"US10Y", "US2Y"} and r.labels == {"Indicator"}
    assert query_reads("MATCH (a) WHERE a.id IN ['x', 'y'] RETURN a").entity_ids == {"x", "y"}


def test_reads_ignore_strings_and_comments_and_widen_on_unknown_ids() -> None:
    r = query_reads("MATCH (n:Company {name: ':Fake'}) // :Other\nRETURN n")
    assert r.labels == {"Company"}
    # an id compared with something not a string: not pinned, indexed by labels instead
    r = query_reads("MATCH (a:Company), (b:Company) WHERE a.id = b.parent RETURN a")
    assert r.entity_ids == frozenset() and r.labels == {"Company"}
    assert query_reads("MATCH (a)-[f:X|Y]->(b) RETURN a").relation_types == {"X", "Y"}


def test_reads_refuse_what_the_guard_cannot_lex() -> None:
    with pytest.raises(ReadOnlyViolation):
        query_reads("MATCH (n {name: 'open}) RETURN n")


# -- the index -----------------------------------------------------------------------------


def test_index_files_by_the_most_selective_read_and_wakes_only_those() -> None:
    idx = SubscriptionIndex()
    assert idx.add("ids", Reads(frozenset({"Company"}), frozenset({"X"}), frozenset({"A"}))) == (
        "entity"
    )
    assert idx.add("rel", Reads(frozenset({"Company"}), frozenset({"X"}))) == "relation"
    assert idx.add("lab", Reads(frozenset({"Entity", "Indicator"}))) == "label"
    assert idx.add("any", Reads(frozenset({"Entity"}))) == "all"
    assert idx.wake(change("c1", ids=["B"], rels=["Y"], labels=["Company"])) == {"any"}
    assert idx.wake(change("c2", ids=["A"])) == {"ids", "any"}
    assert idx.wake(change("c3", rels=["X"])) == {"rel", "any"}
    assert idx.wake(change("c4", labels=["Entity", "Indicator"])) == {"lab", "any"}
    idx.remove("ids")
    idx.remove("missing")  # no error
    assert idx.wake(change("c5", ids=["A"])) == {"any"} and len(idx) == 3
    assert not idx.by_entity  # no empty buckets left behind


def test_index_re_adding_moves_a_subscription() -> None:
    idx = SubscriptionIndex()
    idx.add("s", Reads(entity_ids=frozenset({"A"})))
    idx.add("s", Reads(entity_ids=frozenset({"B"})))
    assert idx.wake(change("c", ids=["A"])) == set()
    assert idx.wake(change("c", ids=["B"])) == {"s"}


def test_wake_all_attributes_to_the_change_that_touches_most_of_what_is_read() -> None:
    idx = SubscriptionIndex()
    idx.add("news", Reads(frozenset({"Entity"}), frozenset({"IMPACTED_BY"}), frozenset({"B"})))
    first = change("involved", ids=["B"], rels=["INVOLVED_IN"])
    second = change("impacted", ids=["B"], rels=["IMPACTED_BY"])
    third = change("impacted-again", ids=["B"], rels=["IMPACTED_BY"])
    assert idx.wake_all([first, second, third]) == {"news": "impacted"}
    assert idx.wake_all([first]) == {"news": "involved"}


def test_ten_thousand_subscriptions_wake_a_few() -> None:
    idx = SubscriptionIndex()
    for i in range(10_000):
        idx.add(f"s{i}", Reads(entity_ids=frozenset({f"E{i % 2000}"})))
    assert len(idx.wake(change("c", ids=["E7"]))) == 5


# -- conditions ----------------------------------------------------------------------------


def test_answer_changed_and_new_rows() -> None:
    changed = Condition(kind="answer_changed")
    base = state_of(changed, [{"v": 1}])
    assert not evaluate(changed, base, [{"v": 1}]).fired
    out = evaluate(changed, base, [{"v": 2}])
    assert out.fired and out.diff == {"added": [{"v": 2}], "removed": 1}
    new_rows = Condition(kind="new_rows")
    base = state_of(new_rows, [{"fact_id": "f1"}])
    assert not evaluate(new_rows, base, []).fired  # a row gone is not a new row
    assert evaluate(new_rows, base, [{"fact_id": "f1"}, {"fact_id": "f2"}]).fired
    # a restated fact (more doc ids, same fact id) is the same row
    assert row_digest({"fact_id": "f1", "doc_ids": ["a"]}) == row_digest(
        {"fact_id": "f1", "doc_ids": ["a", "b"]}
    )


def test_threshold_fires_on_crossing_only() -> None:
    below = Condition(kind="threshold", column="spread", threshold=0)
    s0 = state_of(below, [{"spread": 20.0}])
    assert s0 == {"holds": False}  # the value is not state: it is not written per tick
    assert evaluate(below, s0, [{"spread": 19.0}]).state == s0
    out = evaluate(below, s0, [{"spread": -5.0}], previous_value=20.0)
    assert out.fired and out.diff["previous"] == 20.0 and out.diff["value"] == -5.0
    assert not evaluate(below, out.state, [{"spread": -9.0}]).fired  # still below: no repeat
    back = evaluate(below, out.state, [{"spread": 3.0}])
    assert not back.fired and not back.state["holds"]
    assert evaluate(below, back.state, [{"spread": -1.0}]).fired  # crosses again
    assert evaluate(below, None, [{"spread": -1.0}]).fired  # first value already beyond
    assert not evaluate(below, None, []).fired  # no value: nothing holds
    above = Condition(kind="threshold", column="v", threshold=5, direction="above")
    assert evaluate(above, state_of(above, [{"v": 5}]), [{"v": 5.5}]).fired
    assert not evaluate(above, None, [{"v": "n/a"}]).fired


def test_count_window() -> None:
    cond = Condition(kind="count_window", count=3, window_s=3600, key_column="k", time_column="t")
    hour = 3_600_000
    rows = [{"k": "A", "t": t} for t in (0, 10, 20)] + [{"k": "B", "t": t * hour} for t in range(5)]
    assert window_counts(cond, rows) == {"A": 3, "B": 2}  # B's are an hour apart
    base = state_of(cond, rows)
    assert base["over"] == []
    out = evaluate(cond, base, [*rows, {"k": "A", "t": 30}])
    assert out.fired and out.diff["keys"] == ["A"] and out.diff["counts"] == {"A": 4}
    assert not evaluate(cond, out.state, [*rows, {"k": "A", "t": 30}, {"k": "A", "t": 40}]).fired
    assert not evaluate(cond, base, [*rows, {"k": "A", "t": hour + 30}]).fired  # outside


def test_conditions_need_their_parameters() -> None:
    with pytest.raises(ValidationError, match="column"):
        Condition(kind="threshold", threshold=1)
    with pytest.raises(ValidationError, match="window_s"):
        Condition(kind="count_window", count=3, key_column="k", time_column="t")


# -- model, alert, changes -------------------------------------------------------------------


def test_spec_takes_exactly_one_query_and_ids_are_stable_per_owner() -> None:
    with pytest.raises(ValidationError):
        SubscriptionSpec(name="x")
    with pytest.raises(ValidationError):
        SubscriptionSpec(name="x", question="q", cypher="MATCH (n) RETURN n")
    with pytest.raises(ValidationError):
        SubscriptionSpec(name="x", question="q", webhook="ftp://x")
    spec = SubscriptionSpec(name="x", question="q")
    assert subscription_id("o1", spec) == subscription_id("o1", spec.model_copy())
    assert subscription_id("o1", spec) != subscription_id("o2", spec)
    assert owner_of("secret") != owner_of("other") and "secret" not in owner_of("secret")
    assert owner_of(None) == "anonymous"


def test_alert_id_is_subscription_plus_change_and_carries_evidence() -> None:
    sub = Subscription(
        name="n",
        cypher="MATCH (n) RETURN n",
        id="sub-1",
        owner="o",
        created_at=0,
        condition={"kind": "new_rows"},
    )
    ch = change("ch-1", ids=["A"], rels=["INVOLVED_IN"])
    ch.doc_ids = ["doc-9"]
    rows = [{"fact_id": "f1", "doc_ids": ["doc-1"], "n": 2}]
    out = evaluate(sub.condition, None, rows)
    a = build_alert(sub, ch, rows, out)
    assert a.id == alert_id("sub-1", "ch-1") == build_alert(sub, ch, rows, out).id
    assert a.id != alert_id("sub-1", "ch-2")
    assert a.subscription_id == "sub-1" and a.change_id == "ch-1" and a.entity_id == "A"
    assert a.evidence.triples == ["ch-1", "f1"] and a.evidence.source_ids == ["doc-9", "doc-1"]
    assert a.answer == rows and a.diff["added"] == rows and a.kind == "subscription"


def test_change_records_derive_their_ids_from_the_records() -> None:
    tick = IndicatorTick(source="t", event_time=T, indicator_id="US2Y", value=4.1)
    (c,) = tick_changes([tick])
    assert c.id == change_id(tick.id) and c.entity_ids == ["US2Y"] and "Indicator" in c.labels
    onto = default_ontology()
    t = Triple(
        source="t",
        event_time=T,
        head="Firm A",
        head_type="Company",
        relation="involved_in",
        tail="merger",
        tail_type="Event",
        doc_id="d1",
    )
    bad = Triple(
        source="t",
        event_time=T,
        head="Firm A",
        head_type="Company",
        relation="DESTROYS",
        tail="x",
        tail_type="Event",
    )
    checks = [
        onto.check(x.head, x.head_type, x.relation, x.tail, x.tail_type, None, None)
        for x in (t, bad)
    ]
    (c,) = triple_changes([t, bad], checks, onto, None)
    assert c.id == change_id(t.id) and c.relation_types == ["INVOLVED_IN"]
    assert {"Entity", "Organization", "Company", "Event"} <= set(c.labels)
    assert c.doc_ids == ["d1"]


def test_acronyms_are_the_terms_of_an_nl_subscription() -> None:
    assert acronyms("央行开展MLF操作时提醒我", ["中国人民银行", "PBOC"]) == ["MLF"]
    assert acronyms("when PBOC cuts the LPR", ["PBOC"]) == ["LPR"]


# -- webhooks ------------------------------------------------------------------------------


async def test_webhook_is_retried_then_raises_for_the_dead_letter() -> None:
    sub = Subscription(name="n", cypher="MATCH (n) RETURN n", id="sub-1", owner="o", created_at=0)
    rows = [{"v": 1}]
    alert = build_alert(sub, change("ch-1", ids=["A"]), rows, evaluate(sub.condition, None, rows))
    calls: list[dict] = []

    def flaky(request: httpx.Request) -> httpx.Response:
        calls.append(json.loads(request.content))
        return httpx.Response(503 if len(calls) < 3 else 200)

    async with httpx.AsyncClient(transport=httpx.MockTransport(flaky)) as client:
        await post_webhook(client, "http://hook.invalid/x", alert)
    assert len(calls) == 3 and calls[-1]["id"] == alert.id
    assert calls[-1]["subscription_id"] == "sub-1"

    calls.clear()

    def down(request: httpx.Request) -> httpx.Response:
        calls.append({})
        return httpx.Response(500)

    async with httpx.AsyncClient(transport=httpx.MockTransport(down)) as c:
        with pytest.raises(httpx.HTTPStatusError):
            await post_webhook(c, "http://hook.invalid/x", alert)
    assert len(calls) == WEBHOOK_ATTEMPTS


def test_sse_filter_keeps_the_named_subscriptions_only() -> None:
    def ev(data: dict) -> AlertEvent:
        return AlertEvent("alerts.events", 0, 1, data, "x", 0.0)

    assert for_subscriptions(ev({"subscription_id": "s1"}), {"s1", "s2"})
    assert not for_subscriptions(ev({"subscription_id": "s3"}), {"s1", "s2"})
    assert not for_subscriptions(ev({"kind": "indicator_move"}), {"s1"})
