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
    """A day for people ("2025-07-30"), with the time only for an intraday point."""
    if isinstance(ms, int | float) and ms > 0:
        d = datetime.fromtimestamp(ms / 1000, UTC)
        if (d.hour, d.minute, d.second) == (0, 0, 0):
            return d.strftime("%Y-%m-%d")
        return d.strftime("%Y-%m-%d %H:%M UTC")
    return ""


def _unit(unit: str) -> str:
    return unit if unit in ("%", "") else f" {unit}"


def render(question: str, rows: list[dict[str, Any]], unit: str = "") -> str:
    """The rows as a sentence in the question's language: values with their unit and
    date ("4.12% on 2025-07-30" / "4.12%（2025-07-30）"), entities by name."""
    zh = bool(_ZH.search(question))
    if not rows:
        return "未知：图谱中没有找到答案。" if zh else "Not known: the graph has no answer to that."
    first = rows[0]
    if "count" in first and len(first) == 1:
        return f"{first['count']}" + ("个" if zh else "")
    if "valid_from" in first and len(first) == 1 and first["valid_from"] is not None:
        return f"自{first['valid_from']}起" if zh else f"since {first['valid_from']}"
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
                u = _unit(str(first.get("unit") or unit))
                lo, hi = _fmt(min(vals)), _fmt(max(vals))
                if zh:
                    return (
                        f"共{len(rows)}个值，从{_fmt(vals[0])}{u}到{_fmt(vals[-1])}{u}"
                        f"（最低{lo}{u}，最高{hi}{u}）"
                    )
                return (
                    f"{len(rows)} values from {_fmt(vals[0])}{u} to {_fmt(vals[-1])}{u} "
                    f"(min {lo}{u}, max {hi}{u})"
                )
        v = first["value"]
        if v is None:
            return "图谱中没有找到答案。" if zh else "The graph has no value for that."
        u = _unit(str(first.get("unit") or unit))
        when = _when(first.get("observed_at"))
        if zh:
            return f"{_fmt(v)}{u}" + (f"（{when}）" if when else "")
        return f"{_fmt(v)}{u}" + (f" on {when}" if when else "")
    parts = [f"{k}: {_fmt(v)}" for k, v in first.items() if v is not None]
    return (
        ("；" if zh else "; ").join(parts)
        if parts
        else ("图谱中没有找到答案。" if zh else "Not known.")
    )
