"""``livekg replay``: records from a file into a raw topic."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ops.cli.groups import app
from ops.cli.output import emit_json
from ops.settings import Settings


@app.command()
def replay(
    file: Path,
    topic: Annotated[str, typer.Option(help="target topic, e.g. raw.news")],
    rate: Annotated[float | None, typer.Option(help="records per second (default: max)")] = None,
    data_dir: Annotated[Path | None, typer.Option("--data-dir")] = None,
) -> None:
    """Replay a JSONL file of records into TOPIC (validated first; invalid lines reported)."""
    from connectors.replay import replay_file
    from ops.runtime_state import endpoints

    s = Settings(data_dir=data_dir) if data_dir else Settings()
    report = replay_file(file, topic, endpoints(s).kafka_bootstrap, prefix=s.kafka.topic_prefix, rate=rate)
    emit_json({"topic": topic, "produced": report.produced, "invalid": report.invalid,
               "errors": report.errors[:20], "seconds": round(report.seconds, 3)})  # fmt: skip
