"""Deterministic synthetic events for drills (marked synthetic; nothing from real sources).

News items about a small pool of tickers, with runs of good and bad headlines per
ticker so the sentiment state crosses its shift threshold and alerts fire.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from core.records import RawNews

BASE = datetime(2026, 3, 2, 9, tzinfo=UTC)
GOOD = ["surges to a record high after strong earnings", "beats estimates and raises guidance",
        "wins a major contract, shares rally", "upgraded to buy on robust growth"]  # fmt: skip
BAD = ["plunges after a profit warning", "misses estimates and cuts its outlook",
       "faces a fraud probe, shares tumble", "downgraded to sell on weak demand"]  # fmt: skip


def ticker(i: int, pool: int) -> str:
    return f"DRL{i % pool:03d}"


def news(
    n: int, *, pool: int = 40, start: int = 0, source: str = "drill-synthetic"
) -> list[RawNews]:
    out = []
    for i in range(start, start + n):
        tk = ticker(i, pool)
        run = (i // pool) // 6  # six items per ticker in a row share a tone
        words = (GOOD if run % 2 == 0 else BAD)[i % 4]
        out.append(
            RawNews(
                source=source,
                title=f"${tk} {words} (item {i})",
                body=f"Synthetic drill item {i} about {tk}.",
                url=f"https://drill.invalid/{i}",
                event_time=BASE + timedelta(minutes=i),
                entities=[tk],
            )
        )
    return out


def posts(n: int, *, start: int = 0) -> list[dict[str, object]]:
    """Webhook payloads (the JSON a social-post caller sends)."""
    return [
        {
            "id": f"drill-post-{i}",
            "source": "drill-webhook",
            "author": f"user{i % 17}",
            "text": f"${ticker(i, 40)} {(GOOD + BAD)[i % 8]} #{i}",
            "created_at": (BASE + timedelta(seconds=i)).isoformat(),
        }
        for i in range(start, start + n)
    ]
