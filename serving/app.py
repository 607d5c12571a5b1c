"""The HTTP API (FastAPI): health, metrics, status and the dashboard.

Built by ``create_app()`` (``uvicorn serving.app:create_app --factory``); clients are
created in the lifespan and held on ``app.state``.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import Depends, FastAPI, HTTPException, Request, Response
from fastapi.responses import FileResponse
from fastapi.security import APIKeyHeader

from ops import metrics
from ops.settings import Settings
from ops.status import snapshot

STATIC = Path(__file__).parent / "static"
api_key_header = APIKeyHeader(name="X-API-Key", auto_error=False)


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.settings = settings
        metrics.UP.labels("api").set(1)
        yield
        metrics.UP.labels("api").set(0)
        for sink in app.state.social_sinks:
            sink.close()

    app = FastAPI(title="livekg", version="0.1.0", lifespan=lifespan)

    async def require_key(key: str | None = Depends(api_key_header)) -> None:
        if settings.api.api_keys and key not in settings.api.api_keys:
            raise HTTPException(status_code=401, detail="missing or invalid X-API-Key")

    @app.middleware("http")
    async def count_requests(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        response = await call_next(request)
        route = request.scope.get("route")
        path = getattr(route, "path", "unmatched")
        metrics.HTTP_REQUESTS.labels(request.method, path, str(response.status_code)).inc()
        return response

    @app.get("/healthz")
    async def healthz() -> dict[str, Any]:
        return {"ok": True, "time": time.time()}

    @app.get("/metrics", include_in_schema=False)
    async def prom() -> Response:
        body, ctype = metrics.render()
        return Response(content=body, media_type=ctype)

    @app.get("/api/status", dependencies=[Depends(require_key)])
    async def status() -> dict[str, Any]:
        return await snapshot(settings)

    _mount_ingest(app, settings, require_key)

    @app.get("/", include_in_schema=False)
    async def dashboard() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    return app


def _mount_ingest(app: FastAPI, settings: Settings, require_key: Callable[..., Any]) -> None:
    """The social-post webhook (connectors.social), producing to this stack's broker."""
    from connectors import social

    sinks: list[social.SocialSink] = []
    app.state.social_sinks = sinks  # closed by the lifespan

    def sink() -> social.SocialSink:
        if not sinks:
            from kg.errors import LivekgError
            from ops.runtime_state import endpoints

            try:
                bootstrap = endpoints(settings).kafka_bootstrap
            except LivekgError as exc:
                raise HTTPException(503, str(exc)) from exc
            sinks.append(social.SocialSink(bootstrap, settings.kafka.topic_prefix))
        return sinks[0]

    app.dependency_overrides[social.get_sink] = sink
    app.include_router(social.router, dependencies=[Depends(require_key)])
