"""The HTTP API (FastAPI): questions, graph views, live feeds, the dashboard, health
and metrics.

Built by ``create_app()`` (``uvicorn serving.app:create_app --factory``); clients live
in one ``Services`` object on ``app.state`` and are built lazily, so health and metrics
answer even while the graph or broker is still starting. API keys (``X-API-Key``, or
``?api_key=`` for the browser's EventSource) guard everything but health, metrics, the
dashboard page and its static assets; each key has a rate limit; bodies over
``query.max_body_bytes`` get 413; errors are JSON ``{"error": {"status", "code",
"message"}}``. CORS is off unless ``query.cors_origins`` lists origins.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import Depends, FastAPI, HTTPException, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import FileResponse, JSONResponse
from fastapi.security import APIKeyHeader, APIKeyQuery
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException

from connectors import social
from core import metrics
from core.errors import GraphError, LivekgError, ReadOnlyViolation, ServiceUnavailable
from core.runtime_state import endpoints
from core.settings import Settings
from kg.cypher.execute import QueryTimeout
from serving.routes import router
from serving.security import CODES, ApiRateLimiter, BodyLimit, error_body, key_ok
from serving.services import WARM_QUESTIONS, Services
from serving.status import snapshot
from serving.subscriptions import router as subscriptions_router
from serving.warmup import own_client, settle_heap, warm_routes

STATIC = Path(__file__).parent / "static"
log = logging.getLogger(__name__)


class ErrorDetail(BaseModel):
    status: int
    code: str
    message: str
    details: list[dict[str, Any]] | None = None


class ErrorResponse(BaseModel):
    """Every error: ``{"error": {"status", "code", "message"}}``."""

    error: ErrorDetail


api_key_header = APIKeyHeader(name="X-API-Key", auto_error=False)
api_key_query = APIKeyQuery(name="api_key", auto_error=False)


def create_app(settings: Settings | None = None, services: Services | None = None) -> FastAPI:
    settings = settings or Settings()
    svc = services or Services(settings)
    limiter = ApiRateLimiter(settings.query.rate_limit_per_min)
    instance = uuid.uuid4().hex  # lets the warm-up recognise its own server

    async def warm_up(app: FastAPI) -> None:
        """Models and the retrieval index at start, then the warm-up requests through
        this app's own HTTP route (serving.warmup); ready after both."""
        try:
            if await svc.warm_ask():
                keys = settings.api.api_keys
                headers = {"X-API-Key": keys[0]} if keys else {}
                client = await own_client(app, instance, headers)
                try:
                    await warm_routes(client, WARM_QUESTIONS)
                finally:
                    await client.aclose()
                settle_heap()
        except Exception as exc:  # a warm-up failure leaves the path lazy, never the API down
            log.warning("warm-up through the API's route failed: %s", exc)
        finally:
            svc.mark_ask_ready()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        metrics.UP.labels("api").set(1)
        # models, the retrieval index and the route warm at start, not on the first question
        warm = asyncio.create_task(warm_up(app))
        yield
        if not warm.done():
            warm.cancel()
        metrics.UP.labels("api").set(0)
        for sink in app.state.social_sinks:
            sink.close()
        await svc.close()

    app = FastAPI(
        title="livekg",
        version="0.2.0",
        description="Live market knowledge: ask the graph, watch alerts. "
        "Send the API key as `X-API-Key` (or `?api_key=` for EventSource).",
        lifespan=lifespan,
        responses={
            400: {"model": ErrorResponse, "description": "refused (e.g. a write attempt)"},
            401: {"model": ErrorResponse, "description": "missing or invalid API key"},
            404: {"model": ErrorResponse, "description": "no such entity, indicator or report"},
            413: {"model": ErrorResponse, "description": "request body too large"},
            429: {"model": ErrorResponse, "description": "rate limit exceeded"},
            503: {"model": ErrorResponse, "description": "graph or broker unavailable"},
            504: {"model": ErrorResponse, "description": "query ran past its time limit"},
        },
    )
    app.state.settings = settings
    app.state.services = svc

    async def require_key(
        request: Request,
        header: str | None = Depends(api_key_header),
        query: str | None = Depends(api_key_query),
    ) -> None:
        key = header or query
        if settings.api.api_keys and not key_ok(key, settings.api.api_keys):
            raise HTTPException(status_code=401, detail="missing or invalid X-API-Key")
        client = key or (request.client.host if request.client else "?")
        allowed, retry = limiter.allow(client)
        if not allowed:
            raise HTTPException(
                429, "rate limit exceeded", headers={"Retry-After": str(max(1, int(retry + 0.999)))}
            )

    @app.middleware("http")
    async def count_requests(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        t0 = time.perf_counter()
        response = await call_next(request)
        route = request.scope.get("route")
        path = getattr(route, "path", "unmatched")
        metrics.HTTP_REQUESTS.labels(request.method, path, str(response.status_code)).inc()
        metrics.API_LATENCY.labels(request.method, path).observe(time.perf_counter() - t0)
        return response

    _errors(app)
    app.add_middleware(BodyLimit, max_bytes=settings.query.max_body_bytes)
    if settings.query.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.query.cors_origins,
            allow_methods=["GET", "POST"],
            allow_headers=["X-API-Key", "Content-Type", "Last-Event-ID"],
        )

    @app.get("/health", tags=["ops"])
    async def health() -> dict[str, Any]:
        """``ready``: questions are answered warm (the start-up warm-up has finished)."""
        return {"ok": True, "time": time.time(), "ready": svc.ask_ready(), "instance": instance}

    @app.get("/healthz", include_in_schema=False)
    async def healthz() -> dict[str, Any]:
        return {"ok": True, "time": time.time()}

    @app.get("/metrics", tags=["ops"], response_class=Response)
    async def prom() -> Response:
        body, ctype = metrics.render()
        return Response(content=body, media_type=ctype)

    @app.get("/api/status", dependencies=[Depends(require_key)], tags=["ops"])
    async def status() -> dict[str, Any]:
        return await snapshot(settings)

    app.include_router(router, dependencies=[Depends(require_key)])

    app.include_router(subscriptions_router, dependencies=[Depends(require_key)])
    _mount_ingest(app, settings, require_key)

    @app.get("/", include_in_schema=False)
    async def dashboard() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    return app


def _errors(app: FastAPI) -> None:
    def reply(
        status: int, message: str, headers: dict[str, str] | None = None, **extra: Any
    ) -> JSONResponse:
        code = CODES.get(status, "error")
        return JSONResponse(error_body(status, code, message, **extra), status, headers=headers)

    @app.exception_handler(HTTPException)
    async def http_error(_: Request, exc: HTTPException) -> JSONResponse:
        return reply(exc.status_code, str(exc.detail), getattr(exc, "headers", None))

    @app.exception_handler(StarletteHTTPException)
    async def starlette_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        return reply(exc.status_code, str(exc.detail), getattr(exc, "headers", None))

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        details = [{"loc": list(e.get("loc", ())), "msg": e.get("msg", "")} for e in exc.errors()]
        return reply(422, "invalid request", details=details)

    @app.exception_handler(ReadOnlyViolation)
    async def read_only(_: Request, exc: ReadOnlyViolation) -> JSONResponse:
        return reply(400, f"refused: {exc}")

    @app.exception_handler(QueryTimeout)
    async def timeout(_: Request, exc: QueryTimeout) -> JSONResponse:
        return reply(504, str(exc))

    @app.exception_handler(ServiceUnavailable)
    async def unavailable(_: Request, exc: ServiceUnavailable) -> JSONResponse:
        return reply(503, str(exc))

    @app.exception_handler(GraphError)
    async def graph_error(_: Request, exc: GraphError) -> JSONResponse:
        return reply(503, f"graph error: {exc}")


def _mount_ingest(app: FastAPI, settings: Settings, require_key: Callable[..., Any]) -> None:
    """The social-post webhook (connectors.social), producing to this stack's broker."""
    sinks: list[social.SocialSink] = []
    app.state.social_sinks = sinks  # closed by the lifespan

    def sink() -> social.SocialSink:
        if not sinks:
            try:
                bootstrap = endpoints(settings).kafka_bootstrap
            except LivekgError as exc:
                raise HTTPException(503, str(exc)) from exc
            sinks.append(social.SocialSink(bootstrap, settings.kafka.topic_prefix))
        return sinks[0]

    app.dependency_overrides[social.get_sink] = sink
    app.include_router(social.router, dependencies=[Depends(require_key)])
