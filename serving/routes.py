"""Query API routes: thin shells over kg/cypher, the graph store and the live feeds."""

from __future__ import annotations

import asyncio
import json
import os
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Header, HTTPException, Path, Query, Request
from fastapi.responses import FileResponse
from pydantic import BaseModel, Field
from sse_starlette.sse import EventSourceResponse

from core import metrics
from core.errors import ServiceUnavailable
from kg.cypher import AskResult
from kg.cypher.execute import run_read_only
from kg.graph.queries import cypher
from kg.report import latest_report, reports_dir
from serving.services import Services

router = APIRouter()
EntityId = Annotated[str, Path(min_length=1, max_length=200)]


def services(request: Request) -> Services:
    return request.app.state.services


class AskRequest(BaseModel):
    question: str = Field(min_length=1, max_length=1000)
    revise: bool | None = Field(None, description="LLM revision (default: query.revise)")
    reword: bool | None = Field(
        None, description="an abstained question reworded by the served model (query.reword)"
    )
    as_of: datetime | None = Field(
        None,
        description="answer as the graph knew it at this ISO time (knowledge time; relative "
        "times count from it); default: now",
    )


class Entity(BaseModel):
    id: str
    labels: list[str]
    properties: dict[str, Any]


class GraphNode(BaseModel):
    id: str
    name: str | None = None
    label: str | None = None


class GraphEdge(BaseModel):
    source: str
    target: str
    type: str
    id: str | None = None
    valid_from: int | None = None
    valid_to: int | None = None


class Neighbourhood(BaseModel):
    center: str
    depth: int
    as_of: datetime | None = None
    nodes: list[GraphNode]
    edges: list[GraphEdge]


class SeriesPoint(BaseModel):
    t: int = Field(description="epoch milliseconds")
    value: float | None = None


class IndicatorSeries(BaseModel):
    id: str
    points: list[SeriesPoint]


class SentimentPointOut(BaseModel):
    t: int
    score: float
    label: str
    doc_id: str


class SentimentSeries(BaseModel):
    entity: str
    points: list[SentimentPointOut]
    mean: float | None = None


class SentimentEntity(BaseModel):
    entity: str
    points: int


class SentimentEntities(BaseModel):
    entities: list[SentimentEntity]


def _ms(d: datetime | None) -> int | None:
    if d is None:
        return None
    d = d if d.tzinfo else d.replace(tzinfo=UTC)
    return int(d.timestamp() * 1000)


async def _store(request: Request) -> Any:
    try:
        return await services(request).store()
    except ServiceUnavailable as exc:
        raise HTTPException(503, str(exc)) from exc


@router.post("/ask", response_model=AskResult, tags=["query"])
async def ask(body: AskRequest, request: Request) -> AskResult:
    """A question in English or Chinese -> Cypher (read-only), rows and a short answer."""
    try:
        qa = await services(request).qa()
    except ServiceUnavailable as exc:
        raise HTTPException(503, str(exc)) from exc
    result = await qa.ask(body.question, revise=body.revise, as_of=body.as_of, reword=body.reword)
    metrics.ASK_ANSWERS.labels(result.method).inc()
    return result


@router.get("/entities/{entity_id}", response_model=Entity, tags=["graph"])
async def entity(entity_id: EntityId, request: Request) -> Entity:
    store = await _store(request)
    rows = await run_read_only(store, cypher("entity_with_labels"), {"id": entity_id})
    if not rows:
        raise HTTPException(404, f"no entity {entity_id!r}")
    props = dict(rows[0]["e"])
    props.pop("_labels", None)
    return Entity(id=entity_id, labels=list(rows[0]["labels"]), properties=props)


@router.get("/entities/{entity_id}/neighbourhood", response_model=Neighbourhood, tags=["graph"])
async def neighbourhood(
    entity_id: EntityId,
    request: Request,
    depth: Annotated[int, Query(ge=1, le=3)] = 1,
    as_of: Annotated[datetime | None, Query(description="facts valid at this time")] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 200,
) -> Neighbourhood:
    """Entities within ``depth`` fact edges (facts valid at ``as_of``, default: now)."""
    store = await _store(request)
    at = _ms(as_of)
    validity = cypher("valid_now") if at is None else cypher("valid_at")
    cy = cypher("neighbourhood", depth=depth, validity=validity, limit=limit)
    rows = await run_read_only(store, cy, {"id": entity_id, "at": at}, row_limit=limit)
    if not rows:
        exists = await run_read_only(store, cypher("entity_exists"), {"id": entity_id})
        if not exists:
            raise HTTPException(404, f"no entity {entity_id!r}")
    nodes: dict[str, GraphNode] = {}
    edges = []
    for r in rows:
        for nid, name, labels in ((r["s"], r["sn"], r["sl"]), (r["t"], r["tn"], r["tl"])):
            label = [lb for lb in labels or [] if lb != "Entity"]
            nodes.setdefault(nid, GraphNode(id=nid, name=name, label=label[-1] if label else None))
        edges.append(
            GraphEdge(
                source=r["s"],
                target=r["t"],
                type=r["type"],
                id=r["id"],
                valid_from=r["vf"],
                valid_to=r["vt"],
            )
        )
    if entity_id not in nodes:
        rows = await run_read_only(store, cypher("entity_name"), {"id": entity_id})
        nodes[entity_id] = GraphNode(id=entity_id, name=rows[0]["name"] if rows else None)
    return Neighbourhood(
        center=entity_id, depth=depth, as_of=as_of, nodes=list(nodes.values()), edges=edges
    )


@router.get("/indicators/{indicator_id}/series", response_model=IndicatorSeries, tags=["graph"])
async def indicator_series(
    indicator_id: EntityId,
    request: Request,
    from_: Annotated[datetime | None, Query(alias="from")] = None,
    to: Annotated[datetime | None, Query()] = None,
    limit: Annotated[int, Query(ge=1, le=5000)] = 2000,
) -> IndicatorSeries:
    """Instant observations and daily closes of an indicator, oldest first."""
    store = await _store(request)
    params = {"id": indicator_id, "from": _ms(from_) or 0, "to": _ms(to) or 2**62}
    cy = cypher("indicator_series")
    rows = await run_read_only(store, cy, params, row_limit=limit)
    if not rows:
        exists = await run_read_only(store, cypher("entity_exists"), {"id": indicator_id})
        if not exists:
            raise HTTPException(404, f"no indicator {indicator_id!r}")
    points = [SeriesPoint(t=int(r["t"]), value=r["value"]) for r in reversed(rows)]
    return IndicatorSeries(id=indicator_id, points=points)


@router.get("/sentiment", response_model=SentimentSeries, tags=["live"])
async def sentiment(
    request: Request,
    entity: Annotated[str, Query(min_length=1, max_length=200)],
    from_: Annotated[datetime | None, Query(alias="from")] = None,
    to: Annotated[datetime | None, Query()] = None,
) -> SentimentSeries:
    """Document sentiment scores about an entity (from ``sentiment.scored``), oldest first."""
    try:
        feeds = await services(request).feeds()
    except ServiceUnavailable as exc:
        raise HTTPException(503, str(exc)) from exc
    pts = feeds.sentiment_series(entity, _ms(from_), _ms(to))
    out = [SentimentPointOut(t=p.t, score=p.score, label=p.label, doc_id=p.doc_id) for p in pts]
    mean = sum(p.score for p in pts) / len(pts) if pts else None
    return SentimentSeries(entity=entity, points=out, mean=mean)


@router.get("/sentiment/entities", response_model=SentimentEntities, tags=["live"])
async def sentiment_entities(
    request: Request, limit: Annotated[int, Query(ge=1, le=50)] = 5
) -> SentimentEntities:
    """The entities with the most sentiment scores in the live window, most first: the
    dashboard's default list is the data's, not a guess."""
    try:
        feeds = await services(request).feeds()
    except ServiceUnavailable as exc:
        raise HTTPException(503, str(exc)) from exc
    top = feeds.sentiment_entities(limit)
    return SentimentEntities(entities=[SentimentEntity(entity=e, points=n) for e, n in top])


def _stored_report(request: Request) -> Any:
    s = request.app.state.settings
    return latest_report(reports_dir(s.data_dir, s.report))


@router.get("/reports/latest", tags=["live"])
async def latest_bond_report(
    request: Request,
    lang: Annotated[str, Query(pattern="^(en|zh)$", description="text language")] = "en",
    empty_ok: Annotated[
        bool, Query(description="200 with {} before the first report instead of 404")
    ] = False,
) -> dict[str, Any]:
    """The newest bond-market report (headline, tables, curve shape, policy, drivers with
    citations, conclusions with signals, text): the stored one (with its chart) when this
    API shares the worker's data directory, else the newest on ``reports.bond``; 404
    before the first one (``{}`` with ``empty_ok``)."""
    doc = await asyncio.to_thread(_stored_report, request)
    if doc is not None:
        out = doc.model_dump(mode="json", exclude={"html", "markdown", "sections", "triples"})
        if lang != (doc.lang or "en") and doc.extra.get(f"text_{lang}"):
            out["text"], out["lang"] = doc.extra[f"text_{lang}"], lang
        out["chart_url"] = "/reports/latest/chart" if doc.chart else None
        return out
    try:
        feeds = await services(request).feeds()
    except ServiceUnavailable as exc:
        raise HTTPException(503, str(exc)) from exc
    if feeds.latest_report is None:
        if empty_ok:  # the dashboard: "no report yet" is a state, not a failed request
            return {}
        raise HTTPException(404, "no bond report yet")
    return feeds.latest_report


@router.get(
    "/reports/latest/chart",
    tags=["live"],
    response_class=FileResponse,
    responses={
        200: {
            "content": {"image/svg+xml": {}, "image/png": {}},
            "description": "the report's chart",
        }
    },
)
async def latest_bond_report_chart(request: Request) -> FileResponse:
    """The chart (PNG) of the newest stored bond report."""
    doc = await asyncio.to_thread(_stored_report, request)
    if doc is None or not doc.chart or not await asyncio.to_thread(os.path.isfile, doc.chart):
        raise HTTPException(404, "no report chart yet")
    media = "image/svg+xml" if doc.chart.endswith(".svg") else "image/png"
    return FileResponse(doc.chart, media_type=media)


@router.get(
    "/alerts/stream",
    tags=["live"],
    response_class=EventSourceResponse,
    responses={200: {"content": {"text/event-stream": {}}, "description": "alert events"}},
)
async def alerts_stream(
    request: Request,
    last_event_id: Annotated[str | None, Header(alias="Last-Event-ID", max_length=4000)] = None,
) -> EventSourceResponse:
    """Server-sent events from the alert topics; ``Last-Event-ID`` resumes after it."""
    try:
        feeds = await services(request).feeds()
    except ServiceUnavailable as exc:
        raise HTTPException(503, str(exc)) from exc
    keepalive = request.app.state.settings.query.sse_keepalive_s

    async def events() -> Any:
        async for ev in feeds.subscribe(last_event_id):
            if await request.is_disconnected():
                break
            payload = {**ev.data, "topic": ev.topic}
            yield {"event": "alert", "id": ev.event_id, "data": json.dumps(payload)}

    return EventSourceResponse(events(), ping=int(max(1, keepalive)))
