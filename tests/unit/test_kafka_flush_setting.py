"""The embedded Kafka's flush setting: by default no forced fsync (Kafka's own default;
a killed broker process loses nothing, docs/reliability.md), fsync every N on request."""

from pathlib import Path

from core.settings import KafkaSettings
from ops import kafka_server


def _props(flush: int) -> dict[str, str]:
    node = kafka_server.KafkaNode(node_id=1, port=9092, controller_port=9093, home=Path("/x"))
    return kafka_server.server_properties(
        node, kafka_server.voters([node]), flush_interval_messages=flush
    )


def test_default_leaves_flushing_to_the_os() -> None:
    assert KafkaSettings().flush_interval_messages == 0
    assert "log.flush.interval.messages" not in _props(KafkaSettings().flush_interval_messages)


def test_forced_fsync_every_n_records_when_asked() -> None:
    assert _props(1)["log.flush.interval.messages"] == "1"
    assert _props(500)["log.flush.interval.messages"] == "500"


def test_the_log_cleaner_map_is_small() -> None:
    """Kafka's default 128 MB dedupe buffer sat in the broker's heap (issue 31)."""
    assert int(_props(0)["log.cleaner.dedupe.buffer.size"]) == 16 * 1024 * 1024
