"""The subscriptions panel in headless Chromium (Playwright, Debian's chromium): add a
natural-language subscription on the dashboard, publish a matching event to the broker,
and see the alert a real worker (graph sink + subscriptions) fires appear in the live
feed and the panel's "last fired" column. The event is a synthetic test record."""

from __future__ import annotations

import asyncio
import contextlib
import os
from datetime import UTC, datetime
from pathlib import Path

import uvicorn

from core.records import Triple
from core.runtime_state import Endpoints
from evaluation.scorers.cypher_fixture import load_graph
from kg.graph.store import GraphStore
from ops.runtime import free_port, spawn_worker, stop_pid
from serving.app import create_app
from serving.services import Services
from tests.e2e.browser import ARGS, CHROMIUM, needs_chromium
from tests.integration.streamkit import produce


@needs_chromium
async def test_add_subscription_on_the_dashboard_and_see_its_alert(  # type: ignore[no-untyped-def]
    iso, graph: GraphStore, tmp_path: Path
) -> None:
    from playwright.async_api import async_playwright, expect

    shots = Path(os.environ.get("LIVEKG_SCREENSHOTS") or tmp_path)
    await asyncio.to_thread(shots.mkdir, parents=True, exist_ok=True)

    await load_graph(graph, None)  # the bundled universe: PBOC is 央行
    settings = iso.settings.with_overrides(
        api={"api_keys": ["dash-key"]},
        query={"rank_with_embeddings": False},
        streams={"processors": ["graph_sink", "subscriptions"]},
    )
    ep = Endpoints(kafka_bootstrap=iso.bootstrap, falkordb_url=iso.falkordb_url)
    worker, _ = spawn_worker(settings, ep, tmp_path / "worker")
    app = create_app(settings, Services(settings, store=graph))
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    )
    serving = asyncio.create_task(server.serve())
    try:
        for _ in range(200):
            if server.started:
                break
            await asyncio.sleep(0.05)  # uvicorn has no started event
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
            page = await browser.new_page(viewport={"width": 1400, "height": 1100})
            await page.goto(f"http://127.0.0.1:{port}/?key=dash-key")
            await expect(page.locator("#alerts-state")).to_have_text("live", timeout=20_000)

            await page.fill("#sub-name", "MLF")
            await page.select_option("#sub-kind", "question")
            await page.fill("#sub-query", "央行开展MLF操作时提醒我")
            await page.select_option("#sub-condition", "new_rows")
            await page.click("#sub-add")
            await expect(page.locator("#sub-status")).to_contain_text("registered", timeout=30_000)
            sub_id = await page.locator("#sub-status").get_attribute("data-id")
            assert sub_id and sub_id.startswith("sub-")
            row = page.locator(f"#subs tr[data-id='{sub_id}']")
            await expect(row.locator(".fired")).to_have_text("never", timeout=10_000)

            event = Triple(
                source="test-synthetic",
                event_time=datetime(2026, 11, 20, 9, 0, tzinfo=UTC),
                head="PBOC",
                head_type="Institution",
                relation="SETS_POLICY",
                tail="MLF operation",
                tail_type="Policy",
                doc_id="e2e-doc-1",
            )
            await asyncio.to_thread(produce, iso.bootstrap, iso.topic("kg.triples"), [event])
            alert = page.locator(f"#alerts li[data-subscription='{sub_id}']")
            await expect(alert).to_be_visible(timeout=120_000)
            await expect(alert).to_contain_text("MLF")
            await alert.click()  # the evidence is one click away
            await expect(alert.locator("pre")).to_contain_text("e2e-doc-1")
            await expect(row.locator(".fired")).not_to_have_text("never", timeout=20_000)
            await page.screenshot(path=str(shots / "dashboard-subscriptions.png"), full_page=True)

            await row.locator("button.sub-remove").click()
            await expect(page.locator(f"#subs tr[data-id='{sub_id}']")).to_have_count(0)
            await browser.close()
        assert worker.poll() is None, (tmp_path / "worker" / "worker.log").read_text()[-3000:]
    finally:
        stop_pid(worker.pid)
        server.should_exit = True
        with contextlib.suppress(Exception):
            await asyncio.wait_for(serving, 10)
