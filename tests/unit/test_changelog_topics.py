"""Every faust table's changelog topic is known before the worker joins its group."""

from __future__ import annotations

from pathlib import Path

from core.runtime_state import Endpoints
from core.settings import Settings
from core.topics import GRAPH_CHANGES
from streams.app import build_app
from streams.tables import changelog_topics


def test_every_table_has_its_compacted_changelog(tmp_path: Path) -> None:
    settings = Settings(
        data_dir=tmp_path,
        kafka={"topic_partitions": 3, "replication_factor": 2},
        streams={"store": "memory://"},
    )
    app, _ = build_app(settings, Endpoints(kafka_bootstrap="127.0.0.1:1", falkordb_url=None))
    topics = {t.topic: t for t in changelog_topics(app)}
    assert set(topics) == {f"{app.conf.id}-{name}-changelog" for name in app.tables}
    assert {"sentiment_entity_state", "indicator_alert_state", "subscription_state"} <= set(
        app.tables
    )
    for t in topics.values():
        assert t.replication_factor == 2
        assert t.config == {"cleanup.policy": "compact"}
    sub = topics[f"{app.conf.id}-subscription_state-changelog"]
    assert sub.num_partitions == GRAPH_CHANGES.partitions  # co-partitioned with its input
    sent = topics[f"{app.conf.id}-sentiment_entity_state-changelog"]
    assert sent.num_partitions == 3


def test_no_tables_no_topics(tmp_path: Path) -> None:
    settings = Settings(
        data_dir=tmp_path, streams={"store": "memory://", "processors": ["normalize"]}
    )
    app, _ = build_app(settings, Endpoints(kafka_bootstrap="127.0.0.1:1", falkordb_url=None))
    assert changelog_topics(app) == []
