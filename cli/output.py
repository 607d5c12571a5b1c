"""What every command shares: one-JSON-line output, errors as JSON, and the common options."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import Annotated, Any, NoReturn

import orjson
import typer

from core.errors import LivekgError
from core.settings import Settings

AlwaysJson = Annotated[bool, typer.Option("--json", help="(always JSON; kept for symmetry)")]
DataDir = Annotated[Path | None, typer.Option("--data-dir", help="State directory (default .data)")]
BaseUrl = Annotated[str | None, typer.Option(help="OpenAI-compatible /v1 URL")]


def emit_json(obj: Any) -> None:
    """Print ``obj`` as one compact JSON line on stdout (the command's last line)."""
    sys.stdout.write(orjson.dumps(obj, option=orjson.OPT_NON_STR_KEYS).decode() + "\n")
    sys.stdout.flush()


def fail(exc: Exception) -> NoReturn:
    """Print the error as one JSON line and exit 1."""
    emit_json({"ok": False, "error": type(exc).__name__, "message": str(exc)})
    raise typer.Exit(1) from exc


def run_or_fail(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run ``coro``; a livekg error (no graph, bad query...) ends the command via ``fail``."""
    try:
        return asyncio.run(coro)
    except LivekgError as exc:
        fail(exc)


def settings_for(data_dir: Path | None) -> Settings:
    """The settings, with ``--data-dir`` when given."""
    return Settings(data_dir=data_dir) if data_dir else Settings()
