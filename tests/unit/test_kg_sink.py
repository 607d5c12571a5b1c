"""The sink's fast paths give exactly what the plain paths give (no services)."""

from __future__ import annotations

import asyncio
import gc
import hashlib
import re
from datetime import UTC, datetime, timedelta, timezone

import pytest

from core.batch import Inbound, decode_batch
from core.codec import encode
from core.records import GraphChange, IndicatorTick, Triple, stable_id, to_epoch_ms
from kg.graph import sink
from kg.graph.canonical import AliasIndex
from kg.graph.ontology import default_ontology
from kg.graph.store.falkor import params_header
from kg.graph.temporal import FactVersion, unpack_versions
from kg.subscribe.changes import change_id, tick_changes, triple_changes
from streams.processors.graph_sink import CollectorPause


def _old_stable_id(*parts: object) -> str:
    h = hashlib.sha1(usedforsecurity=False)
    for part in parts:
        h.update(str(part).encode("utf-8", "surrogatepass"))
        h.update(b"\x1f")
    return h.hexdigest()[:20]


def test_stable_id_is_unchanged() -> None:
    cases: list[tuple[object, ...]] = [
        (),
        ("a",),
        ("ab", "c"),
        ("fact", "AAPL", "HAS_CEO", "new:person:timcook", 1767225600000),
        ("Triple", " spaced ", None, ""),
        ("贵州茅台", "\ud800"),
        (datetime(2026, 1, 1, tzinfo=UTC), 0.5),
    ]
    for parts in cases:
        assert stable_id(*parts) == _old_stable_id(*parts)


def test_epoch_ms_shortcut_matches_to_epoch_ms() -> None:
    cst = timezone(timedelta(hours=8))
    for when in (
        datetime(2026, 1, 1, tzinfo=UTC),
        datetime(2026, 1, 1, 8, 0, 0, 123456, tzinfo=cst),
        datetime(1999, 12, 31, 23, 59, 59),  # naive: taken as UTC
    ):
        assert sink._ms(when) == to_epoch_ms(when)


def _triple(**kw: object) -> Triple:
    base: dict[str, object] = {
        "source": "test",
        "event_time": datetime(2026, 1, 1, tzinfo=UTC),
        "head": "Apple",
        "head_type": "Company",
        "relation": "PRODUCES",
        "tail": "iPhone",
        "tail_type": "Product",
        "doc_id": "d1",
    }
    base.update(kw)
    return Triple.model_validate(base)


NOW = {"ingest_time"}  # stamped at decode when the payload has none


def decode_triples(items: list[Inbound], *, max_bytes: int, agent: str):  # type: ignore[no-untyped-def]
    return decode_batch(items, lambda _t: Triple, max_bytes=max_bytes, agent=agent)


def _full(v: bytes | None) -> object:
    """The reference: the full model's own validation (no fast path)."""
    if v is None:
        return "empty"
    try:
        return Triple.model_validate_json(v).model_dump(exclude=NOW)
    except Exception as exc:
        return type(exc).__name__


def test_batch_decode_equals_full_model_validation() -> None:
    """The sink's decode gives the model's records and derived ids; failures go to the DLQ."""
    good = encode(_triple())
    no_id = (
        b'{"source":"s","event_time":"2026-01-01T00:00:00Z","head":" Apple ",'
        b'"head_type":"Company","relation":"PRODUCES","tail":"iPhone","tail_type":"Product"}'
    )
    null_doc = no_id[:-1] + b',"doc_id":null}'
    blank_id = no_id[:-1] + b',"id":"   "}'
    bad_conf = good.replace(b'"confidence":1.0', b'"confidence":7')
    payloads = [good, no_id, null_doc, blank_id, bad_conf, b"{nope", None, b"x" * 50]
    items = [Inbound(topic="kg.triples", value=v, offset=i) for i, v in enumerate(payloads)]
    out = decode_triples(items[:-1], max_bytes=10_000, agent="a")
    full = [_full(v) for v in payloads[:-1]]
    got: dict[int, object] = {
        o.offset: r.model_dump(exclude=NOW) for r, o in zip(out.records, out.origins, strict=True)
    }
    got.update({d.offset: d.error_type for d in out.dead})
    expected_dead = {"ValidationError": ("schema", "malformed_json"), "empty": ("empty",)}
    for i, ref in enumerate(full):
        if isinstance(ref, dict):
            assert got[i] == ref
        else:
            assert got[i] in expected_dead[str(ref)], (i, got[i], ref)
    plain = full
    assert got[1]["id"] == plain[1]["id"] and got[1]["id"] != got[2]["id"]  # raw-value ids
    assert sorted(got) == list(range(len(payloads) - 1))
    oversize = decode_triples(items[-1:], max_bytes=40, agent="a")
    assert oversize.dead[0].error_type == "oversize"


def test_fact_cypher_props_and_string_encoding() -> None:
    assert "f += coalesce(r.props, {})" in sink.fact_cypher("PRODUCES", props=True)
    assert "props" not in sink.fact_cypher("PRODUCES")
    assert "$partition" in sink.fact_cypher("PRODUCES")
    # strings with and without characters to escape
    assert params_header({"x": ["a", 'b"c', "d\\e"]}) == 'CYPHER x=["a","b\\"c","d\\\\e"] '


def test_prepare_uses_given_checks() -> None:
    triples = [_triple(), _triple(relation="NOPE")]
    onto = default_ontology()
    checks = [sink.check_triple(t, onto) for t in triples]
    a = sink.prepare_triples(triples, onto, checks=checks)
    b = sink.prepare_triples(triples, onto)
    assert a.facts == b.facts and a.entities == b.entities
    assert [i for i, _ in a.rejected] == [1]


def test_known_entities_is_bounded() -> None:
    known = sink.KnownEntities(limit=3)
    known.update(["a", "b", "c"])
    assert "a" in known and len(known) == 3
    known.update(["d"])  # full: starts over rather than growing
    assert "a" not in known and "d" in known
    known.clear()
    assert len(known) == 0


def test_packed_chain_versions() -> None:
    assert unpack_versions(["f1,100,,,", "f2,200,300,250,f3", "f4,1.5e3,,,"]) == [
        FactVersion("f1", 100, None, None, None),
        FactVersion("f2", 200, 300, 250, "f3"),
        FactVersion("f4", 1500, None, None, None),
    ]


def test_fact_rows_carry_no_per_row_constants() -> None:
    """The partition is one parameter of the statement and extracted facts carry no
    empty ``props`` map: neither is encoded and parsed once per row."""
    prepared = sink.prepare_triples([_triple()], default_ontology(), partition="static")
    rows = [r for by_id in prepared.facts.values() for r in by_id.values()]
    assert rows and all("partition" not in r and "props" not in r for r in rows)
    assert prepared.partition == "static"


def test_an_empty_alias_index_is_used_not_replaced() -> None:
    """``AliasIndex`` has a length, so an empty one is falsy: it must still be the one
    that resolves (and caches), not a fresh index per batch."""
    onto = default_ontology()
    index = AliasIndex(onto)
    assert not index
    sink.prepare_triples([_triple()], onto, index)
    assert index._cache  # resolutions landed in the given index


def test_chain_statement_is_one_write_of_changed_facts_only() -> None:
    cypher = sink.chain_cypher("HAS_CEO")
    assert cypher.count("UNWIND $heads") == 1 and ":HAS_CEO]" in cypher
    assert "ORDER BY f.valid_from, f.id" in cypher  # resolve_chain's order and tie-break
    assert "WHERE coalesce(f.valid_to, -1) <> coalesce(vt, -1)" in cypher


def test_every_merge_key_of_the_sink_has_an_index() -> None:
    """Each ``MERGE``/``MATCH`` on ``{id: ...}`` in the sink's statements is backed by
    an index created at start (``ensure_schema``), or every write scans its label."""
    indexed = {(i.label, i.prop) for i in sink.INDEXES}
    texts = [sink.INDICATORS_CYPHER, sink.TICKS_CYPHER, sink.LATEST_CYPHER, sink.DOCS_CYPHER,
             sink.fact_cypher("X"), sink.chain_cypher("X"),
             sink.entity_cypher("Company", ontology=default_ontology())]  # fmt: skip
    keyed = set()
    for text in texts:
        for label, prop in re.findall(r"\(\w*:(\w+)[\w:]* \{\{?(\w+):", text):
            keyed.add((label, prop))
    assert keyed >= {("Entity", "id"), ("Observation", "id"), ("Document", "id")}
    assert keyed <= indexed, keyed - indexed


def test_fact_id_is_the_generic_stable_id() -> None:
    for parts in (("AAPL", "HAS_CEO", "new:person:timcook", 1767225600000),
                  ("贵州茅台", "PRODUCES", "new:product:茅台酒", None),
                  ("a\ud800", "R", "b", 0)):  # fmt: skip
        head, rel, tail, vf = parts
        expected = stable_id("fact", head, rel, tail, "" if vf is None else vf)
        assert sink.fact_id(head, rel, tail, vf) == expected


def test_changes_from_the_sinks_endpoints_equal_changes_resolved_again() -> None:
    """The change records built from the ids the sink wrote under are the ones the alias
    index gives when asked again (and a rejected triple has none)."""
    onto = default_ontology()
    index = AliasIndex(onto)
    index.add("AAPL", "Company", "Apple Inc.", ["Apple"], ["AAPL"])
    triples = [_triple(), _triple(relation="NOPE"), _triple(head="Apple Inc", tail="Apple")]
    checks = [sink.check_triple(t, onto) for t in triples]
    prepared = sink.prepare_triples(triples, onto, index, checks=checks)
    assert prepared.endpoints[1] is None and prepared.endpoints[0] == (
        "AAPL",
        prepared.endpoints[0][1],
    )
    fast = triple_changes(triples, checks, onto, index, prepared.endpoints)
    slow = triple_changes(triples, checks, onto, index)
    dump = [c.model_dump(exclude={"ingest_time"}) for c in fast]
    assert dump == [c.model_dump(exclude={"ingest_time"}) for c in slow]
    assert len(fast) == 2 and fast[0].entity_ids[0] == "AAPL"
    assert fast[0].labels is not fast[1].labels  # each record has its own list


def test_change_id_is_the_generic_stable_id() -> None:
    for record_id in ("abc", "贵州茅台-1", "x\ud800"):
        assert change_id(record_id) == stable_id("graph-change", record_id)


def test_change_records_built_without_validation_equal_validated_ones() -> None:
    """``triple_changes`` builds its records with ``construct_valid`` (not validated a
    second time): each equals, and serializes exactly as, the same record validated."""
    onto = default_ontology()
    index = AliasIndex(onto)
    triples = [_triple(), _triple(doc_id=None, head="贵州茅台", tail="茅台酒")]
    checks = [sink.check_triple(t, onto) for t in triples]
    prepared = sink.prepare_triples(triples, onto, index, checks=checks)
    changes = triple_changes(triples, checks, onto, index, prepared.endpoints)
    assert len(changes) == 2 and changes[1].doc_ids == []
    for change in changes:
        validated = GraphChange.model_validate(change.model_dump())
        assert change == validated
        assert encode(change) == encode(validated)
        assert list(change.__dict__) == list(GraphChange.model_fields)  # field order


def test_tick_change_records_equal_validated_ones() -> None:
    tick = IndicatorTick(
        source="t", indicator_id="CN10Y", value=1.8, event_time=datetime(2026, 1, 1, tzinfo=UTC)
    )
    (change,) = tick_changes([tick])
    validated = GraphChange.model_validate(change.model_dump())
    assert change == validated and encode(change) == encode(validated)
    assert change.entity_ids == ["CN10Y"] and change.kind == "tick"


async def test_the_collector_is_paused_across_overlapping_batches_and_restored() -> None:
    """``collector_paused`` (the triple sink's batches): off while any batch runs, back
    on when the last one ends, even by an exception; never turned on if it was off."""
    pause = CollectorPause()
    was = gc.isenabled()
    gc.enable()
    try:
        first_in, second_done = asyncio.Event(), asyncio.Event()
        seen: list[bool] = []

        async def first() -> None:
            with pause():
                first_in.set()
                await second_done.wait()
                seen.append(gc.isenabled())  # the second ended: still paused for us

        async def second() -> None:
            await first_in.wait()
            with pause():
                seen.append(gc.isenabled())
            second_done.set()

        await asyncio.gather(first(), second())
        assert seen == [False, False] and gc.isenabled() and pause.holders == 0
        with pytest.raises(RuntimeError), pause():
            raise RuntimeError("batch failed")
        assert gc.isenabled()
        gc.disable()
        with pause():
            pass
        assert not gc.isenabled()  # it was off before: left off
    finally:
        (gc.enable if was else gc.disable)()


def _generic_literal(v: object) -> str:
    """The encoding rules spelt out plainly (the reference for the inlined row maps)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "null"
    if isinstance(v, str):
        return '"' + str(v).replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, int):
        return str(int(v))
    if isinstance(v, float):
        return repr(float(v))
    if isinstance(v, dict):
        return "{" + ",".join(f"`{k}`:" + _generic_literal(x) for k, x in v.items()) + "}"
    assert isinstance(v, list | tuple)
    return "[" + ",".join(_generic_literal(x) for x in v) + "]"


def test_row_maps_encode_as_the_generic_literal() -> None:
    class Name(str):
        pass

    row = {"id": "f1", "quote": 'a"b', "slash": "c\\d", "n": 7, "none": None, "ok": True,
           "no": False, "x": 0.5, "ids": ["a", 'b"'], "mixed": [1, "a", None], "empty": [],
           "props": {"unit": "USD", "value": 1.25}, "sub": Name("s"), "zh": "贵州茅台"}  # fmt: skip
    rows = [row, {"id": "f2", "n": -1}]
    assert params_header({"rows": rows}) == f"CYPHER rows={_generic_literal(rows)} "
    assert params_header({"m": row}) == f"CYPHER m={_generic_literal(row)} "
