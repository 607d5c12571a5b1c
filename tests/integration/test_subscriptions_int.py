"""Subscriptions on the embedded stack: a real worker (graph sink + subscriptions) on the
real broker and graph. Each example subscription fires once when its condition becomes
true, not before (a canary change proves the earlier changes were evaluated), and not a
second time after a kill -9 of the worker, a restart and a replay of the same records.
Per-key isolation through the HTTP API on the same graph.

The companies are fictional (TEST_*); the 2s10s ticks and the PBOC records are
synthetic test records, marked so in their source, in the test's own graph."""

from __future__ import annotations

import base64
import json
import os
import signal
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import httpx
import pytest
from typer.testing import CliRunner

from cli.groups import app as cli
from cli.main import _load
from core.records import Alert, DeadLetter, GraphChange, IndicatorTick, Record, Triple
from core.runtime_state import Endpoints
from evaluation.scorers.cypher_fixture import load_graph
from kg.cypher import CypherQA
from kg.graph.static import StaticBundle, load_bundle
from kg.graph.store import GraphStore
from kg.subscribe import service
from kg.subscribe.changes import change_id
from kg.subscribe.model import Subscription, SubscriptionSpec
from ops.runtime import free_port, spawn_worker, stop_pid
from serving.app import create_app
from serving.services import Services
from tests.conftest import Isolated
from tests.integration.streamkit import produce, read_topic, wait_for

_load()  # the CLI's command modules
SRC = "test-synthetic"
T0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
FICTIONAL = ["TEST_BANK_A", "TEST_BANK_D", "TEST_CO_B", "TEST_CO_C"]
CANARY = "TEST_CANARY"


def examples() -> dict[str, SubscriptionSpec]:
    """The issue's examples, each as the subscription a user would register."""
    return {
        "downgrade": SubscriptionSpec(
            name="an issuer in my watchlist is downgraded",
            cypher="MATCH (c:Entity)-[f:INVOLVED_IN]->(e:Event) "
            "WHERE c.id IN $watchlist AND toLower(e.name) CONTAINS 'downgrade' "
            "RETURN c.id AS issuer, e.name AS event, f.id AS fact_id, f.doc_ids AS doc_ids",
            params={"watchlist": ["TEST_BANK_A", "TEST_BANK_D"]},
            condition={"kind": "new_rows"},
        ),
        "spread": SubscriptionSpec(
            name="the 2s10s spread turns negative",
            cypher="MATCH (a:Indicator {id: 'US10Y'}), (b:Indicator {id: 'US2Y'}) "
            "RETURN round((a.last_value - b.last_value) * 10000) / 100 AS spread_bp",
            condition={
                "kind": "threshold",
                "column": "spread_bp",
                "threshold": 0,
                "direction": "below",
            },
        ),
        "acquisition": SubscriptionSpec(
            name="a company I follow announces an acquisition",
            cypher="MATCH (c:Entity)-[f:INVOLVED_IN]->(e:Event) WHERE c.id IN $follow "
            "AND (toLower(e.name) CONTAINS 'acqui' OR toLower(e.name) CONTAINS 'takeover') "
            "RETURN c.id AS company, e.name AS event, f.id AS fact_id, f.doc_ids AS doc_ids",
            params={"follow": ["TEST_CO_B"]},
            condition={"kind": "new_rows"},
        ),
        "bank_news": SubscriptionSpec(
            name="more than three negative news items on one bank within an hour",
            cypher="MATCH (b:Entity)-[f:IMPACTED_BY]->(x) WHERE b.id IN $banks "
            "RETURN b.id AS bank, f.id AS fact_id, f.valid_from AS at, f.doc_ids AS doc_ids",
            params={"banks": ["TEST_BANK_A", "TEST_BANK_D"]},
            condition={
                "kind": "count_window",
                "count": 3,
                "window_s": 3600,
                "key_column": "bank",
                "time_column": "at",
            },
        ),
        "mlf": SubscriptionSpec(name="MLF", question="央行开展MLF操作时提醒我"),
    }


def canary_spec() -> SubscriptionSpec:
    return SubscriptionSpec(
        name="canary",
        cypher=f"MATCH (e:Entity {{id: '{CANARY}'}}) RETURN e.round AS round",
    )


def fact(head: str, rel: str, tail: str, tail_type: str, minutes: int, doc: str) -> Triple:
    return Triple(
        source=SRC,
        event_time=T0 + timedelta(minutes=minutes),
        head=head,
        head_type="Institution" if head == "PBOC" else "Company",
        relation=rel,
        tail=tail,
        tail_type=tail_type,
        doc_id=doc,
    )


def tick(indicator: str, value: float, minutes: int) -> IndicatorTick:
    return IndicatorTick(
        source=SRC, event_time=T0 + timedelta(minutes=minutes), indicator_id=indicator, value=value
    )


def phase_one() -> list[Record]:
    """Near misses: none of these makes a condition true."""
    return [
        fact("TEST_CO_C", "INVOLVED_IN", "credit rating downgrade", "Event", 1, "doc-1"),
        fact("TEST_BANK_A", "INVOLVED_IN", "bond issuance", "Event", 1, "doc-2"),
        fact("TEST_CO_C", "INVOLVED_IN", "acquisition of Widget Ltd", "Event", 2, "doc-3"),
        fact("TEST_CO_B", "INVOLVED_IN", "annual general meeting", "Event", 2, "doc-4"),
        fact("TEST_BANK_A", "IMPACTED_BY", "deposit outflows", "RiskFactor", 3, "doc-5"),
        fact("TEST_BANK_A", "IMPACTED_BY", "loan losses", "RiskFactor", 10, "doc-6"),
        fact("TEST_BANK_A", "IMPACTED_BY", "funding stress", "RiskFactor", 20, "doc-7"),
        fact("TEST_BANK_D", "IMPACTED_BY", "fraud probe", "RiskFactor", 0, "doc-8"),
        fact("TEST_BANK_D", "IMPACTED_BY", "fine", "RiskFactor", 120, "doc-9"),
        fact("PBOC", "SETS_POLICY", "7-day reverse repo operation", "Policy", 3, "doc-10"),
        tick("US10Y", 4.30, 1),
        tick("US2Y", 4.10, 1),
    ]


def phase_two() -> dict[str, Record]:
    """One record per example that makes its condition true."""
    return {
        "downgrade": fact(
            "TEST_BANK_A", "INVOLVED_IN", "credit rating downgrade", "Event", 30, "doc-11"
        ),
        "spread": tick("US2Y", 4.40, 30),
        "acquisition": fact(
            "TEST_CO_B", "INVOLVED_IN", "acquisition of Gadget Co", "Event", 30, "doc-12"
        ),
        "bank_news": fact(
            "TEST_BANK_A", "IMPACTED_BY", "rating outlook cut", "RiskFactor", 40, "doc-13"
        ),
        "mlf": fact("PBOC", "SETS_POLICY", "MLF operation", "Policy", 31, "doc-14"),
    }


def send(iso: Isolated, records: list[Record]) -> None:
    produce(iso.bootstrap, iso.topic("kg.triples"), [r for r in records if isinstance(r, Triple)])
    ticks = [r for r in records if isinstance(r, IndicatorTick)]
    if ticks:
        produce(iso.bootstrap, iso.topic("raw.ticks"), ticks)


async def prepare(graph: GraphStore) -> CypherQA:
    await load_graph(graph, None)  # the bundled universe: PBOC (央行), US10Y, US2Y
    bundle = StaticBundle(
        entities=[{"id": i, "type": "Company", "name": f"{i} (fictional)"} for i in FICTIONAL]
    )
    await load_bundle(graph, bundle, source="test")
    await graph.execute(f"CREATE (:Entity {{id: '{CANARY}', round: 0}})")
    return CypherQA(graph, await CypherQA.load_lexicon(graph))


async def register_all(graph: GraphStore, qa: CypherQA, owner: str) -> dict[str, Subscription]:
    async def factory() -> CypherQA:
        return qa

    specs = {**examples(), "canary": canary_spec()}
    return {k: await service.register(graph, owner, s, qa=factory) for k, s in specs.items()}


def alerts(iso: Isolated, expect: int) -> list[Alert]:
    raw = read_topic(iso.bootstrap, iso.topic("alerts.events"), expect=expect, timeout=90)
    return [Alert.model_validate_json(v) for v in raw]


async def canary(iso: Isolated, graph: GraphStore, n: int, sub: Subscription) -> None:
    """Change the canary and wait for its n-th alert: graph.changes has one partition,
    so every change published before it has been evaluated by then."""
    await graph.execute(f"MATCH (e:Entity {{id: '{CANARY}'}}) SET e.round = {n}")
    change = GraphChange(
        id=f"canary-{n}",
        source=SRC,
        event_time=T0,
        kind="triple",
        record_id=f"canary-{n}",
        entity_ids=[CANARY],
    )
    produce(iso.bootstrap, iso.topic("graph.changes"), [change])

    async def arrived() -> bool:
        got = read_topic(iso.bootstrap, iso.topic("alerts.events"), expect=10_000, timeout=2)
        ids = {Alert.model_validate_json(v).change_id for v in got}
        return f"canary-{n}" in ids

    await wait_for(arrived, f"canary alert {n}", timeout=120)


def changes_seen(iso: Isolated, expect: int) -> int:
    return len(read_topic(iso.bootstrap, iso.topic("graph.changes"), expect=expect, timeout=90))


@pytest.fixture
def worker_env(iso: Isolated, tmp_path: Path) -> Iterator[dict]:
    settings = iso.settings.with_overrides(
        streams={"processors": ["graph_sink", "subscriptions"], "batch_size": 50}
    )
    env: dict = {"settings": settings, "data": tmp_path / "worker", "procs": []}
    env["ep"] = Endpoints(kafka_bootstrap=iso.bootstrap, falkordb_url=iso.falkordb_url)
    yield env
    for proc in env["procs"]:
        stop_pid(proc.pid)
    log = env["data"] / "worker.log"
    if log.exists():  # shown when the test failed
        print(log.read_text(errors="replace")[-6000:])


def start(env: dict) -> None:
    proc, _ = spawn_worker(env["settings"], env["ep"], env["data"])
    env["procs"].append(proc)


def by_subscription(got: list[Alert], subs: dict[str, Subscription]) -> dict[str, set[str]]:
    """Example name -> the distinct alert ids published for it."""
    names = {s.id: k for k, s in subs.items()}
    out: dict[str, set[str]] = {k: set() for k in subs}
    for a in got:
        out[names[a.subscription_id or ""]].add(a.id)
    return out


async def test_examples_fire_once_not_before_not_twice_after_kill(
    iso: Isolated, graph: GraphStore, worker_env: dict
) -> None:
    qa = await prepare(graph)
    subs = await register_all(graph, qa, owner="key-owner")
    assert subs["mlf"].translated_from and subs["mlf"].params["anchors"] == ["PBOC"]
    start(worker_env)

    first = phase_one()
    send(iso, first)
    changes_seen(iso, expect=len(first))
    await canary(iso, graph, 1, subs["canary"])
    got = alerts(iso, expect=1)
    assert {a.change_id for a in got} == {"canary-1"}, "a near miss fired"

    second = phase_two()
    send(iso, list(second.values()))
    got = alerts(iso, expect=1 + len(second))
    fired = by_subscription(got, subs)
    for name, rec in second.items():
        assert len(fired[name]) == 1, (name, [a.message for a in got])
        (alert,) = [a for a in got if a.subscription_id == subs[name].id]
        assert alert.change_id == change_id(rec.id), name  # fired by the change that did it
        assert alert.answer and alert.diff, name
    downgrade = next(a for a in got if a.subscription_id == subs["downgrade"].id)
    assert "doc-11" in downgrade.evidence.source_ids
    assert downgrade.diff["added"][0]["issuer"] == "TEST_BANK_A"
    spread = next(a for a in got if a.subscription_id == subs["spread"].id)
    assert spread.diff["value"] == pytest.approx(-10.0) and spread.diff["previous"] == 20.0
    news = next(a for a in got if a.subscription_id == subs["bank_news"].id)
    assert news.diff["keys"] == ["TEST_BANK_A"] and news.diff["counts"]["TEST_BANK_A"] == 4

    # kill -9, restart, replay everything: no alert fires a second time
    os.kill(worker_env["procs"][-1].pid, signal.SIGKILL)
    worker_env["procs"][-1].wait(30)
    start(worker_env)
    send(iso, [*first, *second.values()])
    changes_seen(iso, expect=2 * (len(first) + len(second)) + 1)
    await canary(iso, graph, 2, subs["canary"])
    got = alerts(iso, expect=2 + len(second))
    again = by_subscription(got, subs)
    for name in second:
        assert again[name] == fired[name], name
    assert len(again["canary"]) == 2
    stored = {s.id: s for s in await service.listing(graph, "key-owner")}
    assert stored[subs["downgrade"].id].last_alert_id in fired["downgrade"]


async def test_a_key_sees_and_removes_only_its_own(iso: Isolated, graph: GraphStore) -> None:
    settings = iso.settings.with_overrides(api={"api_keys": ["key-a", "key-b"]})
    app = create_app(settings, Services(settings, store=graph))
    body = canary_spec().model_dump(mode="json", exclude_none=True)
    await graph.execute(f"CREATE (:Entity {{id: '{CANARY}', round: 0}})")
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
        a, b = {"X-API-Key": "key-a"}, {"X-API-Key": "key-b"}
        made = await client.post("/subscriptions", json=body, headers=a)
        assert made.status_code == 201, made.text
        sid = made.json()["id"]
        assert "key-a" not in made.text  # the owner is a digest, never the key
        assert [s["id"] for s in (await client.get("/subscriptions", headers=a)).json()] == [sid]
        assert (await client.get("/subscriptions", headers=b)).json() == []
        assert (await client.get(f"/subscriptions/{sid}", headers=b)).status_code == 404
        assert (await client.delete(f"/subscriptions/{sid}", headers=b)).status_code == 404
        assert (await client.get(f"/subscriptions/{sid}", headers=a)).status_code == 200
        # SSE filtered by subscription: only the caller's own
        other = await client.get(f"/subscriptions/stream?subscription={sid}", headers=b)
        assert other.status_code == 404
        assert (await client.get("/subscriptions", headers={})).status_code == 401
        bad = {**body, "cypher": "MATCH (n) DETACH DELETE n"}
        refused = await client.post("/subscriptions", json=bad, headers=a)
        assert refused.status_code == 400 and "refused" in refused.text
        # a query the graph cannot parse is the caller's error, not an outage (found by
        # the schemathesis run: it was a 503)
        broken = await client.post("/subscriptions", json={**body, "cypher": "API requests"},
                                   headers=a)  # fmt: skip
        assert broken.status_code == 422 and "does not run" in broken.text
        assert (await client.delete(f"/subscriptions/{sid}", headers=a)).status_code == 200
        assert (await client.get("/subscriptions", headers=a)).json() == []


def test_cli_add_list_remove_per_key(iso: Isolated, graph: GraphStore) -> None:
    runner = CliRunner()
    env = {**iso.graph_env(), "LIVEKG_DATA_DIR": str(iso.settings.data_dir)}
    spec = canary_spec()
    add = runner.invoke(
        cli,
        ["subscribe", "add", "canary", "--cypher", spec.cypher or "", "--api-key", "k1"],
        env=env,
    )
    assert add.exit_code == 0, add.output
    sid = json.loads(add.output.strip().splitlines()[-1])["subscription"]["id"]
    listed = runner.invoke(cli, ["subscribe", "list", "--api-key", "k1"], env=env)
    assert [s["id"] for s in json.loads(listed.output)["subscriptions"]] == [sid]
    other = runner.invoke(cli, ["subscribe", "list", "--api-key", "k2"], env=env)
    assert json.loads(other.output)["subscriptions"] == []
    assert runner.invoke(cli, ["subscribe", "remove", sid, "--api-key", "k2"], env=env).exit_code
    bad = runner.invoke(
        cli,
        ["subscribe", "add", "x", "--cypher", "MATCH (n) DETACH DELETE n", "--api-key", "k1"],
        env=env,
    )
    assert bad.exit_code == 1 and "ReadOnlyViolation" in bad.output
    gone = runner.invoke(cli, ["subscribe", "remove", sid, "--api-key", "k1"], env=env)
    assert gone.exit_code == 0 and json.loads(gone.output)["removed"] == sid


class _Hook(BaseHTTPRequestHandler):
    received: ClassVar[list[dict]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        type(self).received.append(json.loads(body))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        return


async def test_webhooks_deliver_and_dead_letter_after_retries(
    iso: Isolated, graph: GraphStore, worker_env: dict
) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hook)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    dead_port = free_port()  # nothing listens there
    try:
        await graph.execute(f"CREATE (:Entity {{id: '{CANARY}', round: 0}})")
        base = canary_spec().model_dump()
        ok = await service.register(
            graph,
            "key-h",
            SubscriptionSpec(**{**base, "webhook": f"http://127.0.0.1:{server.server_port}/hook"}),
        )
        bad = await service.register(
            graph,
            "key-h",
            SubscriptionSpec(
                **{**base, "name": "unreachable", "webhook": f"http://127.0.0.1:{dead_port}/x"}
            ),
        )
        start(worker_env)
        await canary(iso, graph, 1, ok)

        async def delivered() -> bool:
            return any(b.get("subscription_id") == ok.id for b in _Hook.received)

        await wait_for(delivered, "the webhook POST", timeout=60)
        letters = [
            DeadLetter.model_validate_json(v)
            for v in read_topic(iso.bootstrap, iso.topic("dlq"), expect=1, timeout=60)
        ]
        (letter,) = [d for d in letters if d.error_type == "webhook_failed"]
        alert = Alert.model_validate_json(base64.b64decode(letter.raw_value_b64))
        assert alert.subscription_id == bad.id and str(dead_port) in letter.error
    finally:
        server.shutdown()
