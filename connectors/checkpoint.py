"""Per-source checkpoints: a high-water mark per stream, written only after delivery.

One JSON file per source under ``<data_dir>/connectors/``. Writes are atomic (temp
file, fsync, rename), so a crash leaves the previous checkpoint or the new one, never a
torn file. Besides each stream's cursor and opaque state (ETag...), the file keeps, per
physical topic and partition, the offset after the last record this source had
delivered at checkpoint time: on restart the runner scans only the log after those
offsets to find records delivered after the last checkpoint (see ``runner.recover``).
"""

from __future__ import annotations

import json
import os
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from core.records import utcnow


class StreamCheckpoint(BaseModel):
    cursor: str | None = None
    state: dict[str, Any] = Field(default_factory=dict)
    updated: datetime | None = None


class Checkpoint(BaseModel):
    source: str
    streams: dict[str, StreamCheckpoint] = Field(default_factory=dict)
    # physical topic -> partition (as str, JSON keys) -> next offset to scan on recovery
    offsets: dict[str, dict[str, int]] = Field(default_factory=dict)

    def stream(self, name: str) -> StreamCheckpoint:
        return self.streams.setdefault(name, StreamCheckpoint())


class CheckpointStore:
    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)

    def path(self, source: str) -> Path:
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in source)
        return self.directory / f"{safe}.json"

    def load(self, source: str) -> Checkpoint | None:
        p = self.path(source)
        if not p.is_file():
            return None
        return Checkpoint.model_validate_json(p.read_bytes())

    def save(self, cp: Checkpoint) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        target = self.path(cp.source)
        fd, tmp = tempfile.mkstemp(prefix=target.name, suffix=".tmp", dir=self.directory)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(cp.model_dump_json(indent=1).encode())
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        dirfd = os.open(self.directory, os.O_RDONLY)
        try:
            os.fsync(dirfd)
        finally:
            os.close(dirfd)

    def reset(self, source: str) -> bool:
        p = self.path(source)
        existed = p.is_file()
        p.unlink(missing_ok=True)
        return existed

    def summary(self, source: str) -> dict[str, Any]:
        cp = self.load(source)
        if cp is None:
            return {}
        return {name: s.cursor for name, s in cp.streams.items()}


def touch(sc: StreamCheckpoint, cursor: str | None, state: dict[str, Any] | None) -> None:
    if cursor is not None:
        sc.cursor = cursor
    if state is not None:
        sc.state = state
    sc.updated = utcnow()


def dumps(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, default=str)
