"""A snapshot of the running system: services, per-topic counts, graph counts."""

from __future__ import annotations

import asyncio
from typing import Any

from core.errors import LivekgError
from core.runtime_state import endpoints, pid_alive, read_state
from core.settings import Settings
from kg.graph.store import open_store
from streams.admin import topic_counts


async def snapshot(settings: Settings) -> dict[str, Any]:
    state = read_state(settings.state_file)
    out: dict[str, Any] = {
        "data_dir": str(settings.data_dir),
        "services": {
            name: {"pid": s.pid, "port": s.port, "alive": pid_alive(s.pid)}
            | ({"kind": s.kind, "version": s.version} if s.kind else {})
            for name, s in (state.services.items() if state else [])
        },
        "running": bool(state and any(pid_alive(s.pid) for s in state.services.values())),
    }
    try:
        ep = endpoints(settings)
    except LivekgError as exc:
        out["error"] = str(exc)
        return out
    out["endpoints"] = ep.model_dump()
    broker = state.services.get("broker") if state else None
    out["broker"] = (
        {"kind": broker.kind, "version": broker.version, "bootstrap": ep.kafka_bootstrap}
        if broker is not None and broker.kind
        else {"kind": "external kafka", "version": None, "bootstrap": ep.kafka_bootstrap}
    )

    try:
        out["topics"] = await asyncio.to_thread(
            topic_counts, ep.kafka_bootstrap, prefix=settings.kafka.topic_prefix, timeout=5
        )
    except Exception as exc:  # broker trouble is reported, not raised
        out["topics_error"] = str(exc)

    try:
        store = open_store(settings, ep.falkordb_url)
        try:
            out["graph"] = {
                "backend": store.provider.value,
                "nodes": await store.label_counts(),
                "relationships": await store.relationship_counts(),
            }
        finally:
            await store.close()
    except LivekgError as exc:
        out["graph_error"] = str(exc)
    return out
