"""The sentiment processor's pure parts: text choice, per-entity fan-out, isolation, table."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from core.batch import Inbound
from core.records import CleanDocument, DocKind, SentimentLabel, content_hash
from kg.sentiment.service import ScoreOutput
from kg.sentiment.state import EntityState
from streams.processors.sentiment import SentimentTable, doc_text, score_docs, scores_for
from streams.tables import StagedWrites
from tests.fakes.records import sentiment_scores

T = datetime(2026, 3, 2, tzinfo=UTC)


def doc(i: int, text: str, entities: list[str], title: str = "") -> CleanDocument:
    return CleanDocument(
        id=f"d{i}",
        source="t",
        event_time=T,
        kind=DocKind.NEWS,
        raw_id=f"r{i}",
        title=title,
        text=text,
        lang="en",
        entities=entities,
        content_hash=content_hash(text),
    )


def test_doc_text_puts_title_first_and_bounds_length() -> None:
    assert doc_text(doc(0, "Body here.", [], title="Big news")) == "Big news. Body here."
    assert doc_text(doc(0, "Big news and more", [], title="Big news")) == "Big news and more"
    assert len(doc_text(doc(0, "x" * 50_000, []))) <= 1000


def test_scores_fan_out_per_entity() -> None:
    out = ScoreOutput(probabilities=[0.7, 0.2, 0.1], model_id="m", context_ids=["c"])
    scores = scores_for(doc(1, "t", ["A", "B", "A"]), out, max_entities=20)
    assert [s.entities for s in scores] == [["A"], ["B"]]
    assert [s.key() for s in scores] == ["A", "B"]
    assert len({s.id for s in scores}) == 2
    s = scores[0]
    assert s.label == SentimentLabel.NEGATIVE and abs(s.score + 0.6) < 1e-9
    assert s.context_ids == ["c"] and s.doc_id == "d1"
    lone = scores_for(doc(2, "t", []), out, max_entities=20)
    assert len(lone) == 1 and lone[0].key() == "d2"
    assert len(scores_for(doc(3, "t", [f"E{i}" for i in range(50)]), out, max_entities=5)) == 5


class FlakyEngine:
    """Fails whole batches; fails single items whose text contains 'boom'."""

    model_id = "flaky"

    async def score(self, items):  # type: ignore[no-untyped-def]
        if len(items) > 1:
            raise RuntimeError("batch failed")
        if "boom" in items[0].text:
            raise ValueError("bad item")
        return [ScoreOutput(probabilities=[0.1, 0.8, 0.1], model_id="flaky")]


async def test_score_docs_isolates_the_culprit() -> None:
    docs = [doc(0, "fine", ["A"]), doc(1, "boom", ["A"]), doc(2, "also fine", ["B"])]
    origins = [Inbound(topic="docs.clean", value=b"{}", partition=0, offset=i) for i in range(3)]
    scores, dead = await score_docs(FlakyEngine(), docs, origins, 20)  # type: ignore[arg-type]
    assert sorted(s.doc_id for s in scores) == ["d0", "d2"]
    assert len(dead) == 1 and dead[0].offset == 1 and "bad item" in dead[0].error


class FakeTable(dict):
    def __init__(self) -> None:
        super().__init__()
        self.data = self
        self.changelog: list[tuple[int, str, dict]] = []

    def send_changelog(self, partition: int, key: str, value: dict) -> None:
        self.changelog.append((partition, key, value))


def test_table_state_writes_data_and_changelog_partition() -> None:
    table = FakeTable()
    state = SentimentTable(table)  # type: ignore[arg-type]
    assert state.get("A") is None
    st = EntityState(entity_id="A", n=2, short=0.5, long=0.1)
    staged = StagedWrites(state)
    staged.set("A", st, partition=3)
    assert state.get("A") is None  # staged only
    write(staged)
    assert state.get("A") == st
    assert table.changelog[0][0] == 3 and table.changelog[0][1] == "A"


def write(staged: StagedWrites) -> None:
    """Apply a batch's staged writes as the agents do (changelog, then local store)."""
    asyncio.run(staged.write_acked())


def _scores(entity: str, tones: list[float]) -> list:
    return sentiment_scores(entity, tones, T)


def test_a_crash_around_the_state_write_neither_loses_nor_doubles_alerts() -> None:
    """Regression (100,000-event worker_kill drill: 53, then 30 alerts lost): a batch's
    states are written only after its alerts, and a score's copy is not folded twice."""
    from kg.sentiment.state import AlertRules
    from streams.processors.sentiment import fold_scores

    rules = AlertRules(shift_threshold=0.5, min_docs=3, alert_cooldown_s=600)
    scores = _scores("A", [0.05, 0.05, 0.05, 0.05, 0.9, 0.9, 0.9])  # good, then bad
    origins = [Inbound(topic="sentiment.scored", value=b"", partition=1, offset=100 + i)
               for i in range(len(scores))]  # fmt: skip
    state = SentimentTable(FakeTable())  # type: ignore[arg-type]
    first = fold_scores(StagedWrites(state), scores, origins, rules)
    assert first and state.get("A") is None  # nothing written before the alerts are sent
    # crash before the alerts were acknowledged: redelivered, the same alerts again
    staged = StagedWrites(state)
    again = fold_scores(staged, scores, origins, rules)
    assert [a.id for a in again] == [a.id for a in first]
    write(staged)
    written = state.get("A")
    assert written is not None and written.n == 7 and len(written.seen) == 7
    # crash after the write, before the commit: redelivered, folded once only; and the
    # upstream agent's re-sent copies (same ids, later offsets) are not folded twice
    for offset in (100, 300):
        staged = StagedWrites(state)
        later = [Inbound(topic="sentiment.scored", value=b"", partition=1, offset=offset + i)
                 for i in range(len(scores))]  # fmt: skip
        assert fold_scores(staged, scores, later, rules) == []
        write(staged)
        assert state.get("A") == written
    # the next record is folded as usual
    nxt = _scores("A", [0.9] * 8)[7:]
    staged = StagedWrites(state)
    fold_scores(staged, nxt, [Inbound(topic="sentiment.scored", value=b"", partition=1,
                                      offset=107)], rules)  # fmt: skip
    write(staged)
    assert state.get("A").n == 8  # type: ignore[union-attr]
