"""``livekg up`` on the bundled sample day, through the CLI, as a user runs it: with the
embedded FalkorDB, and with an external graph through ``Neo4jStore`` (a database of
its own on a real Bolt server, tests/bolt_server.py), where ``up`` must load the static
universe itself and start no graph."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest

from core.runtime_state import pid_alive
from tests.bolt_server import BoltServer
from tests.conftest import neo4j_graph
from tests.e2e.browser import ARGS, CHROMIUM, CJK_RENDERS_JS, watch_failures

_SAMPLES = Path(__file__).resolve().parents[2] / "connectors" / "samples"


def _lines(name: str) -> int:
    return sum(1 for line in (_SAMPLES / name).open() if line.strip())


SAMPLE_NEWS = _lines("news.jsonl")
SAMPLE_DOCS = SAMPLE_NEWS + _lines("social.jsonl") + _lines("filings.jsonl")
SAMPLE_TICKS = _lines("ticks.jsonl") + _lines("ticks_history.jsonl")  # + indicator history


EXTRA_ENV: dict[str, str] = {}  # the graph backend's settings (set by ``backend``)


@pytest.fixture(params=["falkordb", "neo4j"])
def backend(request: pytest.FixtureRequest) -> Iterator[str]:
    if request.param == "neo4j":
        server: BoltServer = request.getfixturevalue("bolt_server")
        database = server.create_database()
        graph = neo4j_graph(server, database)
        EXTRA_ENV.update({f"LIVEKG_GRAPH__{k.upper()}": v for k, v in graph.items()})
        try:
            yield request.param
        finally:
            EXTRA_ENV.clear()
            server.drop_database(database)
        return
    yield request.param


def livekg(*args: str, data_dir: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LIVEKG_")} | EXTRA_ENV
    return subprocess.run(
        [sys.executable, "-m", "cli.main", *args, "--data-dir", str(data_dir)],
        capture_output=True, text=True, timeout=timeout, env=env, check=False,
    )  # fmt: skip


def status(data_dir: Path) -> dict[str, Any]:
    out = livekg("status", "--json", data_dir=data_dir, timeout=60)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def wait_status(data_dir: Path, ok: Any, timeout: float = 180) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    snap: dict[str, Any] = {}
    while time.monotonic() < deadline:
        snap = status(data_dir)
        if ok(snap):
            return snap
        time.sleep(1)
    raise AssertionError(f"status never matched: {json.dumps(snap)[:2000]}")


def flowed(snap: dict[str, Any]) -> bool:
    nodes = snap.get("graph", {}).get("nodes", {})
    topics = snap.get("topics", {})
    return (
        topics.get("docs.clean", 0) >= SAMPLE_DOCS
        and topics.get("sentiment.scored", 0) >= SAMPLE_DOCS  # one score per doc and entity
        and topics.get("alerts.sentiment", 0) >= 1  # the sample day has sentiment shifts
        and topics.get("alerts.indicator", 0) >= 1  # ... and a SHIBOR overnight jump
        and nodes.get("Document", 0) == SAMPLE_DOCS
        and nodes.get("Observation", 0) == SAMPLE_TICKS
        and topics.get("kg.triples", 0) >= 40  # facts extracted from the sample documents
    )


FACTS = {  # one fact per kind of sample document, with its source document
    "news": "MATCH (:Person {name: 'Maria Chen'})-[r:EXECUTIVE_OF]->(c {name: 'Northwind Robotics'}) "
    "RETURN r.doc_ids AS docs",
    "filing": "MATCH ()-[r:DISCLOSES]->(m:FinMetric {name: 'Capital expenditures'}) "
    "RETURN r.doc_ids AS docs",
    "commentary": "MATCH (:Institution)-[r:SETS_POLICY]->(:Policy {name: '7天期逆回购'}) "
    "RETURN r.doc_ids AS docs",
}


def extracted_facts(data_dir: Path) -> None:
    for kind, cypher in FACTS.items():
        env = {k: v for k, v in os.environ.items() if not k.startswith("LIVEKG_")} | EXTRA_ENV
        env["LIVEKG_DATA_DIR"] = str(data_dir)  # `kg query` finds the running graph there
        out = subprocess.run(
            [sys.executable, "-m", "cli.main", "kg", "query", cypher, "--json"],
            capture_output=True, text=True, timeout=60, env=env, check=False,
        )  # fmt: skip
        assert out.returncode == 0, out.stderr
        rows = json.loads(out.stdout.strip().splitlines()[-1])["rows"]
        assert rows and rows[0]["docs"], f"no {kind} fact with provenance: {out.stdout[-500:]}"


def first_report(api: str, since: float, within_s: float = 600.0) -> dict[str, Any]:
    """The bond report the worker publishes on start, made after ``since`` (a wall-clock
    time). A liveness limit, not a timing: on a quiet machine it comes about a minute
    after `up`; at a load average of 25-44 it took 295 s (2026-11-28)."""
    deadline = since + within_s
    while time.time() < deadline:
        r = httpx.get(f"{api}/reports/latest", timeout=10)
        if r.status_code == 200 and r.json().get("headline"):
            body = r.json()
            made = datetime.fromisoformat(body.get("created_at") or body["at"]).timestamp()
            assert made >= since - 1, "the report is not this start's"
            return body
        time.sleep(2)
    raise AssertionError(f"no bond report {within_s:.0f} s after up")


def first_screen(api: str) -> None:
    """What a newcomer sees after ``up``: the dashboard loads with no console error and no
    failed request, its sentiment panel lists entities the sample has scores for (and
    draws them), and the sample's Chinese names render with a CJK font, not boxes."""
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        failures = watch_failures(page)
        page.goto(f"{api}/")
        expect(page.locator("#alerts-state")).to_have_text("live", timeout=20_000)
        expect(page.locator("#report-headline li").first).to_be_visible(timeout=20_000)
        expect(page.locator("#sent-entities")).not_to_have_value("", timeout=20_000)
        listed = page.locator("#sent-entities").input_value().split(",")
        for entity in listed:
            assert httpx.get(f"{api}/sentiment", params={"entity": entity}).json()["points"]
        expect(page.locator("#sentiment-chart")).to_contain_text(listed[0])
        expect(page.locator("#alerts li").first).to_be_visible(timeout=20_000)
        zh = [
            t
            for t in page.locator("#alerts li").all_inner_texts()
            if re.search(r"[\u4e00-\u9fff]", t)
        ]
        assert zh, "the sample's alerts name no Chinese entity"
        sample = "".join(re.findall(r"[\u4e00-\u9fff]", zh[0]))[:4]
        assert page.evaluate(CJK_RENDERS_JS, sample), f"{sample!r} renders as boxes"
        page.wait_for_timeout(2000)  # the page's first refreshes have all answered
        browser.close()
    assert failures == [], failures


def left_behind(data: Path) -> list[str]:
    """Live processes whose command line names the data directory (the JVM broker does)."""
    found = []
    for p in psutil.process_iter(["pid", "cmdline", "status"]):
        cmd = " ".join(p.info["cmdline"] or [])
        if str(data) in cmd and p.info["status"] != psutil.STATUS_ZOMBIE:
            found.append(f"{p.info['pid']} {cmd[:200]}")
    return found


@pytest.mark.timeout(900)  # two starts, the dashboard and a Neo4j: past 600 s at load 20-40
def test_up_status_down_and_restart(tmp_path: Path, backend: str) -> None:
    data = tmp_path / "data"
    t_up = time.time()
    started = livekg("up", "--detach", "--no-llm", data_dir=data)
    assert started.returncode == 0, started.stdout + started.stderr
    try:
        snap = wait_status(data, flowed)
        assert snap["topics"]["raw.ticks"] == SAMPLE_TICKS, snap
        assert snap["topics"]["dlq"] == 0, snap
        services = snap["services"]
        assert {"broker", "worker-0", "api"} <= set(services)
        assert snap["broker"]["kind"] == services["broker"]["kind"] == "kafka", snap["broker"]
        assert str(snap["broker"]["version"]).startswith("4."), snap["broker"]
        assert ("graph" in services) == (backend == "falkordb")  # external: none started
        assert snap["graph"]["nodes"].get("Company", 0) > 0  # the static universe loaded
        assert all(s["alive"] for s in services.values())
        extracted_facts(data)

        api = snap["endpoints"]["api_url"]
        assert httpx.get(f"{api}/healthz").json()["ok"] is True
        assert "livekg" in httpx.get(f"{api}/").text
        assert httpx.get(f"{api}/api/status").json()["topics"]["raw.news"] == SAMPLE_NEWS
        assert "livekg_http_requests_total" in httpx.get(f"{api}/metrics").text
        worker_metrics = httpx.get(f"http://127.0.0.1:{services['worker-0']['port']}/metrics").text
        assert 'livekg_events_in_total{agent="tick_sink",topic="raw.ticks"}' in worker_metrics
        assert "livekg_event_latency_seconds_bucket" in worker_metrics
        report = first_report(api, t_up)
        assert report["as_of"] == "2024-09-18" and report["tables"]["curve"]["rows"]
        assert report["unsupported_numbers"] == [] and report["conclusions"]
        if Path(CHROMIUM).exists():  # set-up installs it (and the CJK font) where it can
            first_screen(api)
        nodes_before = snap["graph"]["nodes"]
    finally:
        down = livekg("down", data_dir=data)
    assert down.returncode == 0, down.stderr
    for svc in snap["services"].values():
        assert not pid_alive(svc["pid"]), f"{svc} still running after down"
    assert left_behind(data) == [], "processes left behind by down"
    # no client noise while the broker starts (librdkafka printed "Connection refused")
    console = started.stdout + started.stderr + (data / "logs" / "supervisor.log").read_text()
    assert "Connection refused" not in console, console[-3000:]
    # ... and no client library line at all: librdkafka's go to logs/kafka-clients.log
    assert not re.search(r"^%\d\|", console, re.M) and "rdkafka" not in console, console[-3000:]

    # restart on the same data directory: state resumes, the sample is not replayed twice
    again = livekg("up", "--detach", "--no-llm", data_dir=data)
    assert again.returncode == 0, again.stdout + again.stderr
    try:
        snap2 = wait_status(data, flowed)
        time.sleep(3)  # give a wrongful second replay time to show up
        snap2 = status(data)
        why = json.dumps({"before": nodes_before, "after": snap2}, default=str)[:3000]
        assert snap2["topics"]["raw.news"] == SAMPLE_NEWS, why
        assert snap2["topics"]["raw.ticks"] == SAMPLE_TICKS, why
        assert snap2["graph"]["nodes"]["Document"] == nodes_before["Document"], why
        assert snap2["graph"]["nodes"]["Observation"] == nodes_before["Observation"], why
    finally:
        livekg("down", data_dir=data)
    assert left_behind(data) == [], "processes left behind by down"
