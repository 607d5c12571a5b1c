"""Consumer lag arithmetic and the idle poll pause (pure parts of streams.lag and
streams.kafka_compat)."""

from __future__ import annotations

from streams.kafka_compat import IDLE_AFTER_S, idle_pause
from streams.lag import partition_lag


def test_lag_counts_from_the_commit_or_else_from_the_log_start() -> None:
    assert partition_lag(high=100, low=0, committed=60) == 40
    assert partition_lag(high=100, low=30, committed=-1001) == 70  # nothing committed yet
    assert partition_lag(high=100, low=0, committed=100) == 0
    assert partition_lag(high=5, low=0, committed=9) == 0  # never negative


def test_the_idle_pause_only_grows_after_a_quiet_second() -> None:
    assert idle_pause(0.02, 0.25, 0.0) == 0.02  # a busy stream: no extra latency
    assert idle_pause(0.02, 0.25, IDLE_AFTER_S - 0.01) == 0.02
    assert idle_pause(0.02, 0.25, IDLE_AFTER_S) == 0.25
    assert idle_pause(0.02, 0.0, 10.0) == 0.02  # idle pause off
