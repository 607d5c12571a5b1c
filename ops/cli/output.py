"""Machine-readable output helpers: benchmarks and evals end with exactly one JSON line."""

from __future__ import annotations

import sys
from typing import Any

import orjson


def emit_json(obj: Any) -> None:
    """Print ``obj`` as one compact JSON line on stdout (the command's last line)."""
    sys.stdout.write(orjson.dumps(obj, option=orjson.OPT_NON_STR_KEYS).decode() + "\n")
    sys.stdout.flush()
