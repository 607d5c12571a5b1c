"""Social posts: an HTTP webhook (push) and a JSON feed poller (pull) -> ``raw.social``.

The text is kept verbatim (cashtags and tickers included); cashtags are also listed in
``entities`` so the post is keyed by the first one.

Webhook: ``router`` is a self-contained FastAPI router (``POST /ingest/social``) the
API mounts. It validates the posts, produces them and answers only after the broker
acknowledged every one (202), so a client that got a 2xx never loses a post; invalid
posts are refused with 422 and never reach the topic. The sink it uses is a FastAPI
dependency (``get_sink``) so tests and the API can override it.
"""

from __future__ import annotations

import asyncio
import threading
from datetime import datetime
from typing import Annotated, Any
from urllib.parse import urlsplit

from confluent_kafka import KafkaError, KafkaException, Producer
from fastapi import APIRouter, Depends, HTTPException
from pydantic import BaseModel, Field, ValidationError

from connectors.base import Batch
from connectors.feeds import FeedPoller, parse_json_feed
from connectors.replay import producer
from connectors.runner import kafka_bootstrap
from connectors.text import cashtags
from core.metrics import CONNECTOR_ERRORS, CONNECTOR_PRODUCED, CONNECTOR_ROWS
from core.records import MAX_TEXT_CHARS, Id, Name, RawSocialPost, stable_id, utcnow
from core.settings import Settings

MAX_POSTS_PER_REQUEST = 1000


class PostIn(BaseModel):
    """What a webhook caller sends (tweet-like; extra fields are ignored)."""

    id: str | None = Field(default=None, max_length=200)
    source: Name = "webhook"  # the record's own constraints, so the API schema states them
    author: str = ""
    text: str = Field(min_length=1, max_length=MAX_TEXT_CHARS)
    url: str = ""
    lang: str | None = None
    created_at: datetime | None = None
    entities: list[Id] = Field(default_factory=list, max_length=200)


class IngestResult(BaseModel):
    accepted: int
    ids: list[str]
    topic: str


def to_record(post: PostIn) -> RawSocialPost:
    tags = cashtags(post.text)
    entities = list(dict.fromkeys([*(e.upper() for e in post.entities), *tags]))
    return RawSocialPost.model_validate(
        {
            "id": post.id or None,
            "source": post.source,
            "author": post.author,
            "text": post.text,
            "url": post.url,
            "lang": post.lang,
            "event_time": post.created_at or utcnow(),
            "entities": entities,
        }
    )


class SocialSink:
    """Produces validated posts and waits for the broker's acknowledgement."""

    def __init__(self, bootstrap: str, prefix: str = "") -> None:
        self.topic = prefix + "raw.social"
        self._bootstrap = bootstrap
        self.producer = self._new_producer()
        self.replaced = 0  # producers replaced after a fatal error
        self._lock = threading.Lock()

    def _new_producer(self) -> Producer:
        return producer(self._bootstrap, **{"linger.ms": 1})

    def _send(self, records: list[RawSocialPost]) -> None:
        failures: list[KafkaError] = []

        def on_delivery(err: Any, _msg: Any) -> None:
            if err is not None:
                failures.append(err)

        with self._lock:  # one flush at a time: a flush waits for every queued message
            try:
                for r in records:
                    self.producer.produce(
                        self.topic,
                        key=r.key().encode(),
                        value=r.__pydantic_serializer__.to_json(r),
                        on_delivery=on_delivery,
                    )
                remaining = self.producer.flush(30)
            except KafkaException as exc:
                if exc.args and isinstance(exc.args[0], KafkaError):
                    failures.append(exc.args[0])
                remaining = -1
            if any(isinstance(f, KafkaError) and f.fatal() for f in failures):
                # an idempotent producer that failed fatally (e.g. sequence numbers the
                # restarted broker no longer knows) never recovers: the caller gets a 503
                # and retries on a fresh producer
                self.producer.purge()
                self.producer = self._new_producer()
                self.replaced += 1
        if remaining or failures:
            shown = [str(f) for f in failures[:3]]
            raise RuntimeError(f"{remaining} undelivered, failures: {shown}")

    async def send(self, records: list[RawSocialPost]) -> None:
        await asyncio.to_thread(self._send, records)

    def close(self, timeout: float = 10.0) -> None:
        self.producer.flush(timeout)


_sink: SocialSink | None = None


def get_sink() -> SocialSink:
    """The process-wide sink, built from settings on first use (override in tests)."""
    global _sink
    if _sink is None:
        s = Settings()
        _sink = SocialSink(kafka_bootstrap(s), s.kafka.topic_prefix)
    return _sink


router = APIRouter(prefix="/ingest", tags=["ingest"])


@router.post("/social", status_code=202, response_model=IngestResult)
async def ingest_social(
    payload: PostIn | list[PostIn],
    sink: Annotated[SocialSink, Depends(get_sink)],
) -> IngestResult:
    """Accept one post or a list; 202 only once the broker acknowledged all of them."""
    posts = payload if isinstance(payload, list) else [payload]
    if len(posts) > MAX_POSTS_PER_REQUEST:
        raise HTTPException(413, f"at most {MAX_POSTS_PER_REQUEST} posts per request")
    try:
        records = [to_record(p) for p in posts]
    except ValidationError as exc:
        CONNECTOR_ERRORS.labels("webhook", "ValidationError").inc()
        raise HTTPException(422, exc.errors(include_url=False, include_context=False)) from exc
    CONNECTOR_ROWS.labels("webhook").inc(len(records))
    try:
        await sink.send(records)
    except Exception as exc:  # broker down: tell the caller to retry, lose nothing
        CONNECTOR_ERRORS.labels("webhook", type(exc).__name__).inc()
        raise HTTPException(503, f"could not deliver to the broker: {exc}") from exc
    CONNECTOR_PRODUCED.labels("webhook", "raw.social").inc(len(records))
    return IngestResult(accepted=len(records), ids=[r.id for r in records], topic="raw.social")


class SocialFeedConnector(FeedPoller):
    """Polls JSON post feeds (JSON Feed 1.x or a list of post objects) -> ``raw.social``."""

    topics = ("raw.social",)
    default_name = "social-feed"
    default_interval_s = 60.0
    accept = "application/feed+json, application/json"

    async def fetch(self, stream: str, cursor: str | None, state: dict[str, Any]) -> Batch:
        batch, entries = await self.poll(stream, state, lambda r: parse_json_feed(r.json()))
        host = urlsplit(stream).hostname or stream
        fetched = utcnow()
        for e in entries:
            text = (
                (e.title + "\n" + e.body).strip() if e.title and e.title not in e.body else e.body
            )
            when = e.published or fetched
            batch.add(
                "raw.social",
                f"{when.isoformat()}|{e.guid}",
                RawSocialPost,
                {
                    "id": stable_id("social", host, e.guid) if e.guid else None,
                    "source": f"social:{host}",
                    "author": e.author,
                    "text": text,
                    "url": e.url,
                    "event_time": when,
                    "entities": cashtags(text),
                },
            )
        return batch
