"""Short natural-language answers from rows (no model: the rows are the answer)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

_ZH = re.compile(r"[\u3400-\u9fff]")
MAX_NAMES = 12


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4f}".rstrip("0").rstrip(".")
    return str(v)


def _when(ms: Any) -> str:
    if isinstance(ms, int | float) and ms > 0:
        return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M UTC")
    return ""


def render(question: str, rows: list[dict[str, Any]]) -> str:
    zh = bool(_ZH.search(question))
    if not rows:
        return "图谱中没有找到答案。" if zh else "The graph has no answer to that."
    first = rows[0]
    if "count" in first and len(first) == 1:
        return f"{first['count']}"
    if "name" in first:
        names = [str(r.get("name") or r.get("id")) for r in rows]
        more = len(names) - MAX_NAMES
        text = ("、" if zh else ", ").join(names[:MAX_NAMES])
        if more > 0:
            text += f" 等{len(names)}个" if zh else f" and {more} more"
        return text
    if "value" in first:
        if len(rows) > 1 and "observed_at" in first:
            vals = [r["value"] for r in rows if isinstance(r.get("value"), int | float)]
            if vals:
                return (
                    f"{len(rows)} values from {_fmt(vals[0])} to {_fmt(vals[-1])} "
                    f"(min {_fmt(min(vals))}, max {_fmt(max(vals))})"
                )
        v = first["value"]
        if v is None:
            return "图谱中没有找到答案。" if zh else "The graph has no value for that."
        unit = first.get("unit") or ""
        when = _when(first.get("observed_at"))
        return f"{_fmt(v)}{unit}" + (f" ({when})" if when else "")
    parts = [f"{k}: {_fmt(v)}" for k, v in first.items() if v is not None]
    return "; ".join(parts) if parts else ("图谱中没有找到答案。" if zh else "Not known.")
