"""The dashboard in headless Chromium (Playwright driving the system browser): it loads,
an alert published to the broker appears in the live feed, a question gets an answer,
the bond report panel shows the sample day's headline and curve table, the sentiment
panel lists the entities that have scores (a Chinese name among them, drawn with a CJK
font, not boxes), nothing fails on the way (no console error, no 4xx/5xx), and
screenshots are saved (``LIVEKG_SCREENSHOTS`` dir, else the test's tmp dir)."""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path

import uvicorn

from core.records import Alert, AlertKind, Evidence, SentimentLabel, SentimentScore, utcnow
from evaluation.scorers.cypher_fixture import load_graph
from kg.graph.store import GraphStore
from kg.report import build_bond_report, reports_dir
from ops.runtime import free_port
from serving.app import create_app
from serving.services import Services
from streams.publisher import Publisher
from tests.e2e.browser import ARGS, CHROMIUM, CJK_RENDERS_JS, needs_chromium, watch_failures
from tests.unit.test_report import sample_docs, sample_series


@needs_chromium
async def test_dashboard_live_alert_and_question(iso, graph: GraphStore, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from playwright.async_api import async_playwright, expect

    shots = Path(os.environ.get("LIVEKG_SCREENSHOTS") or tmp_path)
    await asyncio.to_thread(shots.mkdir, parents=True, exist_ok=True)
    await load_graph(graph)
    settings = iso.settings.with_overrides(
        api={"api_keys": ["dash-key"]}, query={"rank_with_embeddings": False}
    )
    # the sample day's bond report, stored where the API reads it (as the worker does)
    report = await build_bond_report(
        None, settings.report, at="2024-09-18T22:00:00Z", series=sample_series(),
        docs=sample_docs(), out_dir=reports_dir(settings.data_dir, settings.report),
    )  # fmt: skip
    app = create_app(settings, Services(settings, store=graph))
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    )
    serving = asyncio.create_task(server.serve())
    pub = Publisher(iso.bootstrap)
    try:
        for _ in range(200):
            if server.started:
                break
            await asyncio.sleep(0.05)  # uvicorn has no started event
        scores = [  # two entities with scores; the dashboard's default list comes from them
            SentimentScore(
                id=f"e2e-score-{i}",
                source="e2e",
                event_time=utcnow(),
                doc_id=f"doc-{i}",
                entities=[entity],
                label=SentimentLabel.POSITIVE,
                probabilities={SentimentLabel.POSITIVE: 0.8, SentimentLabel.NEGATIVE: 0.1},
                score=0.7,
                model_id="e2e",
            )
            for i, entity in enumerate(["贵州茅台", "贵州茅台", "AAPL"])
        ]
        await pub.send_many(
            iso.topic("sentiment.scored"),
            [(s.key().encode(), s.model_dump_json().encode()) for s in scores],
        )
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
            page = await browser.new_page(viewport={"width": 1400, "height": 1000})
            failures = watch_failures(page)
            await page.goto(f"http://127.0.0.1:{port}/?key=dash-key")
            await expect(page.locator("#alerts-state")).to_have_text("live", timeout=20_000)
            await expect(page.locator("#graph canvas").first).to_be_attached(timeout=20_000)
            await expect(page.locator("#sent-entities")).to_have_value(
                "贵州茅台,AAPL", timeout=20_000
            )
            await expect(page.locator("#sentiment-chart")).to_contain_text("贵州茅台")
            assert await page.evaluate(CJK_RENDERS_JS, "贵州茅台"), "Chinese renders as boxes"
            await page.screenshot(path=str(shots / "dashboard-loaded.png"), full_page=True)

            alert = Alert(
                id="e2e-alert-1",
                source="e2e",
                event_time=utcnow(),
                kind=AlertKind.INDICATOR_MOVE,
                entity_id="US10Y",
                severity="critical",
                message="US10Y up 25 bp in one hour (e2e)",
                evidence=Evidence(source_ids=["tick-1", "tick-2"], values={"move_bp": 25.0}),
            )
            await pub.send_many(
                iso.topic("alerts.indicator"),
                [(alert.key().encode(), alert.model_dump_json().encode())],
            )
            item = page.locator("#alerts li.critical", has_text="US10Y up 25 bp")
            await expect(item).to_be_visible(timeout=10_000)
            await item.click()  # the evidence is one click away
            await expect(item.locator("pre")).to_contain_text("tick-1")
            await page.screenshot(path=str(shots / "dashboard-alert.png"), full_page=True)

            await page.fill("#question", "Who is the CEO of Apple?")
            await page.click("#ask-button")
            await expect(page.locator("#answer")).to_have_text("Tim Cook", timeout=20_000)
            await expect(page.locator("#rows")).to_contain_text("PERSON_TIM_COOK")
            await page.fill("#question", "哪些基金持有贵州茅台？")
            await page.click("#ask-button")
            await expect(page.locator("#answer")).to_contain_text("E Fund", timeout=20_000)
            await page.screenshot(path=str(shots / "dashboard-answer.png"), full_page=True)

            top = report.headline[0]
            headline = page.locator("#report-headline li").first
            await expect(headline).to_contain_text(top.indicator, timeout=20_000)
            await expect(headline).to_contain_text(f"{top.change_bp:+.1f} bp")
            row = page.locator("#report-curve tr", has_text="10Y").last
            await expect(row).to_contain_text("3.70")  # the real 10Y par yield that day
            await expect(page.locator("#report-conclusions li").first).to_be_visible()
            await page.screenshot(path=str(shots / "dashboard-report.png"), full_page=True)
            await browser.close()
        assert failures == [], failures
        names = ("dashboard-loaded.png", "dashboard-alert.png", "dashboard-answer.png",
                 "dashboard-report.png")  # fmt: skip
        for name in names:
            data = await asyncio.to_thread((shots / name).read_bytes)
            assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    finally:
        pub.close()
        server.should_exit = True
        with contextlib.suppress(Exception):
            await asyncio.wait_for(serving, 10)
