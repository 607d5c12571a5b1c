"""Live views the API keeps of Kafka topics: the alerts feed (for SSE), sentiment
series per entity and the latest bond report.

One consumer thread (``streams.tail.TopicReader``, no consumer group, so the workers'
offsets are untouched) reads the alert topics from their last ``buffer`` records per
partition, ``sentiment.scored`` from its last ``sentiment_backlog`` records and
``reports.bond`` from its last record, then follows them. Events reach the event loop
through ``call_soon_threadsafe``.

SSE event ids are position vectors (``topic:partition:offset`` of every partition seen
up to that event, comma-joined), so ``Last-Event-ID`` resumes exactly, also against an
API process restarted since, as long as the events are still in its buffer.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
import time
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from core.records import to_epoch_ms
from core.topics import ALERT_TOPICS, REPORTS_BOND, SENTIMENT_SCORED
from streams.tail import Message, TopicReader

log = logging.getLogger(__name__)

Position = dict[tuple[str, int], int]  # (logical topic, partition) -> last offset seen


@dataclass(frozen=True, slots=True)
class AlertEvent:
    topic: str  # logical name (alerts.indicator ...)
    partition: int
    offset: int
    data: dict[str, Any]
    event_id: str
    received_at: float  # time.time() when the bridge got it


def for_subscriptions(ev: AlertEvent, ids: set[str] | frozenset[str]) -> bool:
    """SSE filter: the event is an alert of one of the subscriptions ``ids``."""
    return ev.data.get("subscription_id") in ids


def encode_position(pos: Position) -> str:
    return ",".join(f"{t}:{p}:{o}" for (t, p), o in sorted(pos.items()))


def decode_position(text: str | None) -> Position:
    """The inverse of ``encode_position``; malformed parts are ignored (start fresh)."""
    out: Position = {}
    for part in (text or "").split(","):
        bits = part.strip().rsplit(":", 2)
        if len(bits) == 3 and bits[1].isdigit() and bits[2].lstrip("-").isdigit():
            out[(bits[0], int(bits[1]))] = int(bits[2])
    return out


@dataclass
class SentimentPoint:
    t: int  # event time, epoch ms
    score: float
    label: str
    doc_id: str


@dataclass
class LiveFeeds:
    bootstrap: str
    prefix: str = ""
    buffer: int = 1000
    sentiment_backlog: int = 50_000
    max_points_per_entity: int = 5000
    alerts: deque[AlertEvent] = field(default_factory=deque)
    sentiment: dict[str, deque[SentimentPoint]] = field(default_factory=dict)
    latest_report: dict[str, Any] | None = None
    started: bool = False
    error: str | None = None

    def __post_init__(self) -> None:
        self.alerts = deque(maxlen=self.buffer)
        self._position: Position = {}
        self._subscribers: set[asyncio.Queue[AlertEvent]] = set()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ready = threading.Event()

    # -- lifecycle -------------------------------------------------------------------------
    async def start(self, timeout_s: float = 15.0) -> None:
        if self.started:
            return
        self._loop = asyncio.get_running_loop()
        self._thread = threading.Thread(target=self._run, name="api-feeds", daemon=True)
        self._thread.start()
        await asyncio.to_thread(self._ready.wait, timeout_s)
        self.started = True

    async def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            await asyncio.to_thread(self._thread.join, 5.0)

    def _logical(self, topic: str) -> str:
        return topic[len(self.prefix) :] if topic.startswith(self.prefix) else topic

    def _run(self) -> None:
        reader: TopicReader | None = None
        try:
            reader = TopicReader(self.bootstrap)
            reader.assign([self.prefix + t.name for t in ALERT_TOPICS], last=self.buffer)
            sentiment = TopicReader(self.bootstrap)
            sentiment.assign([self.prefix + SENTIMENT_SCORED.name], last=self.sentiment_backlog)
            reports = TopicReader(self.bootstrap)
            reports.assign([self.prefix + REPORTS_BOND.name], last=1)
        except Exception as exc:  # broker down or topics missing: the API still serves
            self.error = str(exc)
            log.warning("live feeds unavailable: %s", exc)
            self._ready.set()
            return
        readers = (reader, sentiment, reports)
        first = True
        try:
            while not self._stop.is_set():
                got = 0
                for r in readers:
                    msgs = r.poll(0.05 if not first else 0.5)
                    got += len(msgs)
                    if msgs:
                        self._handle(msgs)
                if first and got == 0:
                    first = False
                    self._ready.set()
        except Exception as exc:  # pragma: no cover - logged, feeds stop
            self.error = str(exc)
            log.exception("live feeds stopped")
        finally:
            self._ready.set()
            for r in readers:
                with contextlib.suppress(Exception):
                    r.close()

    def _handle(self, msgs: list[Message]) -> None:
        alerts: list[AlertEvent] = []
        now = time.time()
        for m in msgs:
            logical = self._logical(m.topic)
            try:
                data = json.loads(m.value or b"null")
            except ValueError:
                continue  # not ours to dead-letter: the workers do that
            if not isinstance(data, dict):
                continue
            if logical == SENTIMENT_SCORED.name:
                self._add_sentiment(data)
            elif logical == REPORTS_BOND.name:
                self.latest_report = {**data, "_offset": m.offset}
            else:
                self._position[(logical, m.partition)] = m.offset
                ev = AlertEvent(
                    logical, m.partition, m.offset, data, encode_position(self._position), now
                )
                alerts.append(ev)
        if alerts and self._loop is not None:
            self._loop.call_soon_threadsafe(self._publish, alerts)

    def _add_sentiment(self, data: dict[str, Any]) -> None:
        try:
            t = to_epoch_ms(datetime.fromisoformat(str(data["event_time"]).replace("Z", "+00:00")))
            point = SentimentPoint(
                t, float(data["score"]), str(data.get("label", "")), str(data.get("doc_id", ""))
            )
        except (KeyError, TypeError, ValueError):
            return
        for e in data.get("entities") or []:
            series = self.sentiment.get(e)
            if series is None:
                series = self.sentiment[e] = deque(maxlen=self.max_points_per_entity)
            series.append(point)

    def _publish(self, events: list[AlertEvent]) -> None:
        self.alerts.extend(events)
        for q in list(self._subscribers):
            for ev in events:
                if q.full():
                    with contextlib.suppress(asyncio.QueueEmpty):
                        q.get_nowait()  # a slow client loses the oldest, not the newest
                q.put_nowait(ev)

    # -- readers -----------------------------------------------------------------------
    def backlog(self, after: Position) -> list[AlertEvent]:
        return [e for e in self.alerts if e.offset > after.get((e.topic, e.partition), -1)]

    async def subscribe(self, last_event_id: str | None) -> AsyncIterator[AlertEvent]:
        """Buffered events after ``last_event_id`` (all buffered when None), then live."""
        q: asyncio.Queue[AlertEvent] = asyncio.Queue(maxsize=self.buffer)
        self._subscribers.add(q)
        try:
            seen = decode_position(last_event_id) if last_event_id else {}
            for ev in self.backlog(seen):
                seen[(ev.topic, ev.partition)] = ev.offset
                yield ev
            while True:
                ev = await q.get()
                if ev.offset <= seen.get((ev.topic, ev.partition), -1):
                    continue
                seen[(ev.topic, ev.partition)] = ev.offset
                yield ev
        finally:
            self._subscribers.discard(q)

    def sentiment_entities(self, limit: int) -> list[tuple[str, int]]:
        """(entity, points) for the ``limit`` entities with the most points, most first
        (ties by name, so the list is stable)."""
        counts = [(e, len(pts)) for e, pts in list(self.sentiment.items()) if pts]
        return sorted(counts, key=lambda c: (-c[1], c[0]))[:limit]

    def sentiment_series(
        self, entity: str, start_ms: int | None, end_ms: int | None
    ) -> list[SentimentPoint]:
        pts = list(self.sentiment.get(entity, ()))
        return sorted(
            (
                p
                for p in pts
                if (start_ms is None or p.t >= start_ms) and (end_ms is None or p.t < end_ms)
            ),
            key=lambda p: p.t,
        )
