"""The model tier's stream agent (streams/processors/extract_llm.py) with a fake model:
only the tier's new facts go out, and a model that is down parks the batch."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest

from core.batch import Decoded, Inbound
from core.records import CleanDocument, DocKind
from core.runtime_state import Endpoints
from core.settings import Settings
from core.topics import KG_TRIPLES
from kg.models.llm_errors import LLMUnavailable
from streams.context import WorkerContext
from streams.processors.extract_llm import TierStage
from tests.fakes import FakeLLM

CALL = (
    "Operator: Our next question comes from Tam Rivers with Selkirk Research.\n\n"
    "Tam Rivers: Thanks. Could you talk about margins this quarter?\n\n"
    "Gil Harrow: Sure. At Brontide Foods, adjusted operating margin came in around 14.2% in "
    "the fourth quarter of 2023, and we feel good about the pipeline.\n"
)
# the slot form of the call profile (extract.slots.v4); CALL names its company in the answer
MARGIN = {"metric": "adjusted operating margin", "value": "14.2%", "company": "Brontide Foods"}


def _doc(i: int, text: str) -> CleanDocument:
    return CleanDocument(
        id=f"d{i}", source="test (synthetic)", event_time=datetime(2024, 2, 1, tzinfo=UTC),
        kind=DocKind.NEWS, raw_id=f"r{i}", title="", text=text, lang="en", content_hash=f"h{i}",
    )  # fmt: skip


def _stage(llm: FakeLLM) -> TierStage:
    settings = Settings().with_overrides(
        llm={"base_url": "http://gpu:8000/v1"}, extract={"use_nlp": False,
                                                        "tier": {"mode": "single"}})  # fmt: skip
    ep = Endpoints(kafka_bootstrap="x:1", falkordb_url=None, llm_base_url=None)
    return TierStage(WorkerContext(settings=settings, endpoints=ep), client=llm)


def _batch(*docs: CleanDocument) -> Decoded[CleanDocument]:
    return Decoded(
        records=list(docs),
        origins=[Inbound("extract.pending", b"{}", None, 0, i) for i in range(len(docs))],
    )


def test_only_the_tiers_new_facts_go_out() -> None:
    said = "At Brontide Foods, adjusted operating margin came in around 14.2% in the fourth quarter"
    stage = _stage(FakeLLM({"extract.slots": {"figures": [MARGIN]}, "extract.confirm": said}))
    out = asyncio.run(stage.handle(_batch(_doc(1, CALL))))
    triples = out.outputs[KG_TRIPLES.name]
    assert [(t.head, t.relation, t.tail) for t in triples] == [
        ("Brontide Foods", "DISCLOSES", "adjusted operating margin")
    ]
    assert all(t.mode == "auto" and t.prompt_version for t in triples)
    assert stage.queue.qsize() == 0  # nothing left waiting: the drain is idle


def test_a_model_that_is_down_parks_the_batch() -> None:
    stage = _stage(FakeLLM({"extract.slots": LLMUnavailable("down")}))
    with pytest.raises(LLMUnavailable):
        asyncio.run(stage.handle(_batch(_doc(1, CALL))))
