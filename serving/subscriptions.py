"""Subscription routes: register, list, read, remove standing questions, and an SSE
stream of their alerts. Every route is scoped to the caller's API key: a key sees and
manages only its own subscriptions (another key's id answers 404, like a missing one).
The owner is a digest of the key (``kg.subscribe.model.owner_of``), never the key."""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, HTTPException, Query, Request
from fastapi.security import APIKeyHeader, APIKeyQuery
from sse_starlette.sse import EventSourceResponse

from core.errors import GraphError, ReadOnlyViolation, ServiceUnavailable, TransientGraphError
from kg.subscribe import service, storage
from kg.subscribe.model import Subscription, SubscriptionSpec, owner_of
from kg.subscribe.translate import TranslationError
from serving.feeds import for_subscriptions
from serving.services import Services

router = APIRouter(prefix="/subscriptions", tags=["subscriptions"])
_header = APIKeyHeader(name="X-API-Key", auto_error=False)
_query = APIKeyQuery(name="api_key", auto_error=False)


def owner(
    header: Annotated[str | None, Depends(_header)],
    query: Annotated[str | None, Depends(_query)],
) -> str:
    return owner_of(header or query)


def _services(request: Request) -> Services:
    return request.app.state.services


Owner = Annotated[str, Depends(owner)]


@router.post("", status_code=201, response_model=Subscription)
async def add(spec: SubscriptionSpec, request: Request, who: Owner) -> Subscription:
    """Register a standing question (NL ``question`` or read-only ``cypher``) and its
    condition; its current answer becomes the baseline. Idempotent per key and body."""
    svc = _services(request)
    q = request.app.state.settings.query
    try:
        return await service.register(
            await svc.store(), who, spec, qa=svc.qa, timeout_s=q.timeout_s, row_limit=q.row_limit
        )
    except TranslationError as exc:
        raise HTTPException(422, str(exc)) from exc
    except (TransientGraphError, ReadOnlyViolation):
        raise  # busy or down: 503, worth retrying; a write: 400 (the app's handlers)
    except GraphError as exc:  # the graph rejects the query itself (syntax, unknown function)
        raise HTTPException(422, f"the query does not run: {exc}") from exc


@router.get("", response_model=list[Subscription])
async def listing(request: Request, who: Owner) -> list[Subscription]:
    return await service.listing(await _services(request).store(), who)


@router.get("/stream", response_class=EventSourceResponse)
async def stream(
    request: Request,
    who: Owner,
    subscription: Annotated[list[str] | None, Query(max_length=100)] = None,
    last_event_id: Annotated[str | None, Header(alias="Last-Event-ID", max_length=4000)] = None,
) -> EventSourceResponse:
    """Alerts of the caller's subscriptions (or of the ``subscription`` ids named, which
    must be the caller's) as server-sent events."""
    svc = _services(request)
    own = {s.id for s in await service.listing(await svc.store(), who)}
    wanted = set(subscription or own)
    if not wanted <= own:
        raise HTTPException(404, "no such subscription")
    try:
        feeds = await svc.feeds()
    except ServiceUnavailable as exc:
        raise HTTPException(503, str(exc)) from exc

    async def events() -> Any:
        async for ev in feeds.subscribe(last_event_id):
            if await request.is_disconnected():
                break
            if for_subscriptions(ev, wanted):
                payload = {**ev.data, "topic": ev.topic}
                yield {"event": "alert", "id": ev.event_id, "data": json.dumps(payload)}

    keepalive = request.app.state.settings.query.sse_keepalive_s
    return EventSourceResponse(events(), ping=int(max(1, keepalive)))


@router.get("/{sub_id}", response_model=Subscription)
async def one(sub_id: str, request: Request, who: Owner) -> Subscription:
    got = await storage.get(await _services(request).store(), who, sub_id)
    if got is None:
        raise HTTPException(404, "no such subscription")
    return got


@router.delete("/{sub_id}")
async def remove(sub_id: str, request: Request, who: Owner) -> dict[str, str]:
    if not await service.remove(await _services(request).store(), who, sub_id):
        raise HTTPException(404, "no such subscription")
    return {"removed": sub_id}
