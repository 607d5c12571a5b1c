"""``livekg subscribe add|list|remove``: standing questions that fire alerts
(docs/subscriptions.md). They act on the graph directly, as the API does, scoped to an
API key (``--api-key`` or ``LIVEKG_API_KEY``; without one, the keyless owner)."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from pydantic import ValidationError

from cli.groups import bench_app, subscribe_app
from cli.kg_cmds import graph_store
from cli.output import AlwaysJson, emit_json, run_or_fail
from core.settings import Settings
from evaluation.bench.kg import graph_service
from evaluation.bench.subscriptions import run_subscriptions_bench
from evaluation.bench.subscriptions_broker import run_through_broker
from kg.cypher import CypherQA
from kg.subscribe import service
from kg.subscribe.model import SubscriptionSpec, owner_of
from ops.runtime import services

KeyOpt = Annotated[
    str | None,
    typer.Option("--api-key", envvar="LIVEKG_API_KEY", help="whose subscriptions (API key)"),
]


def _json_arg(text: str | None, what: str) -> dict[str, Any]:
    if not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise typer.BadParameter(f"{what} is not JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise typer.BadParameter(f"{what} must be a JSON object")
    return value


@subscribe_app.command("add")
def add(
    name: Annotated[str, typer.Argument(help="a name for the subscription")],
    question: Annotated[str | None, typer.Option("--question", "-q", help="natural language")] = (
        None
    ),
    cypher: Annotated[str | None, typer.Option("--cypher", help="read-only Cypher")] = None,
    params: Annotated[str | None, typer.Option("--params", help="JSON object")] = None,
    condition: Annotated[
        str, typer.Option("--condition", help="answer_changed|new_rows|threshold|count_window")
    ] = "answer_changed",
    options: Annotated[
        str | None,
        typer.Option(
            "--options",
            help='condition fields as JSON, e.g. {"column": "spread_bp", "threshold": 0}',
        ),
    ] = None,
    webhook: Annotated[str | None, typer.Option("--webhook", help="POST each alert here")] = None,
    api_key: KeyOpt = None,
    json_out: AlwaysJson = True,
) -> None:
    """Register a standing question; prints the subscription (its id, the query it runs)."""
    del json_out
    try:
        spec = SubscriptionSpec(
            name=name,
            question=question,
            cypher=cypher,
            params=_json_arg(params, "--params"),
            condition={"kind": condition, **_json_arg(options, "--options")},
            webhook=webhook,
        )
    except ValidationError as exc:
        emit_json({"ok": False, "error": "invalid", "message": str(exc)})
        raise typer.Exit(2) from exc
    sub = run_or_fail(_add(Settings(), spec, api_key))
    emit_json({"ok": True, "subscription": sub.model_dump(mode="json")})


async def _add(settings: Settings, spec: Any, api_key: str | None) -> Any:
    async with graph_store(settings) as store:

        async def qa() -> CypherQA:
            return CypherQA(store, await CypherQA.load_lexicon(store))

        q = settings.query
        return await service.register(
            store, owner_of(api_key), spec, qa=qa, timeout_s=q.timeout_s, row_limit=q.row_limit
        )


@subscribe_app.command("list")
def listing(api_key: KeyOpt = None, json_out: AlwaysJson = True) -> None:
    """This key's subscriptions with when each last fired."""
    del json_out

    async def go() -> list[dict[str, Any]]:
        async with graph_store(Settings()) as store:
            subs = await service.listing(store, owner_of(api_key))
        return [s.model_dump(mode="json") for s in subs]

    emit_json({"ok": True, "subscriptions": run_or_fail(go())})


@subscribe_app.command("remove")
def remove(
    sub_id: Annotated[str, typer.Argument(help="subscription id")],
    api_key: KeyOpt = None,
    json_out: AlwaysJson = True,
) -> None:
    """Remove one of this key's subscriptions (exit 1 when it has none of that id)."""
    del json_out

    async def go() -> bool:
        async with graph_store(Settings()) as store:
            return await service.remove(store, owner_of(api_key), sub_id)

    removed = run_or_fail(go())
    emit_json({"ok": removed, "removed": sub_id if removed else None})
    if not removed:
        raise typer.Exit(1)


@bench_app.command("subscriptions")
def bench_subscriptions(
    subscriptions: Annotated[int, typer.Option(help="subscriptions registered")] = 10_000,
    limit: Annotated[int | None, typer.Option(help="first N stream records only")] = None,
    through_broker: Annotated[
        bool,
        typer.Option(help="alerts from a real worker through the broker (change -> alert read)"),
    ] = False,
    rate: Annotated[float, typer.Option(help="--through-broker: changes per second")] = 10.0,
    json_out: AlwaysJson = True,
) -> None:
    """Graph change -> alert latency with many subscriptions, the fraction evaluated per
    change, beside the same run's one matching query run directly (docs/subscriptions.md)."""
    del json_out
    settings = Settings()
    if through_broker:
        with services(settings) as (used, ep):
            result = run_through_broker(
                used, ep, subscriptions=subscriptions, limit=limit, rate=rate
            )
    else:
        with graph_service(settings) as ep:
            result = run_subscriptions_bench(settings, ep, subscriptions=subscriptions, limit=limit)
    emit_json(result)
