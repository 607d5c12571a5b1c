from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from core.settings import Settings
from serving.app import create_app


def client(settings: Settings) -> httpx.AsyncClient:
    app = create_app(settings)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t")


async def test_health_metrics_dashboard(tmp_path: Path) -> None:
    async with client(Settings(data_dir=tmp_path)) as c:
        assert (await c.get("/healthz")).json()["ok"] is True
        assert "<title>livekg dashboard</title>" in (await c.get("/")).text
        await c.get("/healthz")
        metrics = (await c.get("/metrics")).text
        assert 'livekg_http_requests_total{method="GET",route="/healthz",status="200"}' in metrics
        assert "/ingest/social" in (await c.get("/openapi.json")).text


async def test_status_reports_missing_services_instead_of_failing(tmp_path: Path) -> None:
    async with client(Settings(data_dir=tmp_path)) as c:
        body = (await c.get("/api/status")).json()
    assert body["running"] is False
    assert "livekg up" in body["error"]


@pytest.mark.parametrize("key,code", [(None, 401), ("wrong", 401), ("s3cret", 200)])
async def test_api_keys(tmp_path: Path, key: str | None, code: int) -> None:
    settings = Settings(data_dir=tmp_path, api={"api_keys": ["s3cret"]})
    headers = {"X-API-Key": key} if key else {}
    async with client(settings) as c:
        assert (await c.get("/api/status", headers=headers)).status_code == code
        assert (await c.get("/healthz")).status_code == 200  # health stays open
        posted = await c.post("/ingest/social", json={"text": "$AAPL up"}, headers=headers)
        # without a key: refused; with one: accepted for delivery, but no broker runs here
        assert posted.status_code == (401 if code == 401 else 503)
