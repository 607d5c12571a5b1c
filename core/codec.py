"""Bytes <-> records, and dead letters for what cannot be decoded.

Agents consume raw bytes and decode here, so every failure (oversize, invalid UTF-8,
malformed JSON, schema violation) becomes a ``DeadLetter`` with a clear reason rather
than an exception inside the consumer.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable
from functools import cache
from typing import Any, TypeVar

from pydantic import ValidationError
from pydantic_core import SchemaValidator

from core.records import DeadLetter, Record, stable_id, utcnow

R = TypeVar("R", bound=Record)

# Raw bytes kept in a dead letter: base64 of this stays under Kafka's default 1 MB limit.
DLQ_MAX_RAW_BYTES = 512 * 1024


class DecodeFailure(Exception):
    """Why a payload was rejected; ``error_type`` is a short machine-readable tag."""

    def __init__(self, error_type: str, error: str) -> None:
        super().__init__(f"{error_type}: {error}")
        self.error_type = error_type
        self.error = error


def encode(record: Record) -> bytes:
    return record.__pydantic_serializer__.to_json(record)


def _is_derive_id(node: Any) -> bool:
    fn = (node.get("function") or {}).get("function") if isinstance(node, dict) else None
    return getattr(fn, "__func__", None) is Record._derive_id.__func__


def _without_derive_id(node: dict[str, Any]) -> dict[str, Any] | None:
    """The schema with the model's ``function-before(_derive_id)`` step removed, through
    a model-level ``function-after`` around it (``RawNews._has_text``); None if the
    schema has another shape."""
    inner = node.get("schema")
    if not isinstance(inner, dict):
        return None
    if node.get("type") == "model":
        if inner.get("type") == "function-before" and _is_derive_id(inner):
            return {**node, "schema": inner["schema"]}
        return None
    if node.get("type") == "function-after":
        stripped = _without_derive_id(inner)
        return None if stripped is None else {**node, "schema": stripped}
    return None


@cache
def _with_id_validator(model: type[R]) -> SchemaValidator | None:
    """``model``'s validator without its id-deriving step (``Record._derive_id``, a
    Python callback before validation that also makes pydantic build the payload as
    Python objects first), for payloads that carry their id, as every record livekg
    produces does. A payload it accepts has a non-blank string id, which the full
    validator would have kept as it is: the result is the same record. Anything it
    rejects goes through the full validator (derived id, or the reason). None when the
    schema is not of the expected shape (the full validator is used)."""
    schema = model.__pydantic_core_schema__
    stripped = _without_derive_id(dict(schema))
    if stripped is None:
        return None
    model_node = stripped if stripped.get("type") == "model" else stripped["schema"]
    return SchemaValidator(stripped, model_node.get("config"))


def decode(raw: bytes | None, model: type[R], *, max_bytes: int) -> R:
    """Validate one payload; raise ``DecodeFailure`` with the reason on any problem."""
    if raw is None:
        raise DecodeFailure("empty", "record has no value (tombstone)")
    if len(raw) > max_bytes:
        raise DecodeFailure("oversize", f"{len(raw)} bytes > limit {max_bytes}")
    fast = _with_id_validator(model)
    if fast is not None:
        try:
            record: R = fast.validate_json(raw)
            return record
        except ValidationError:
            pass  # the full validator derives a missing id or says what is wrong
    try:
        return model.model_validate_json(raw)
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_input=False)
        kinds = {e["type"] for e in errors}
        if kinds & {"json_invalid", "json_type"}:
            kind = "invalid_utf8" if _bad_utf8(raw) else "malformed_json"
            return _raise(kind, errors[0]["msg"])
        detail = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '<root>'}: {e['msg']}" for e in errors[:10]
        )
        raise DecodeFailure("schema", f"{model.__name__}: {detail}") from None


def construct_valid(model: type[R], rows: Iterable[dict[str, Any]]) -> list[R]:
    """Records from rows that are valid by construction: every field of ``model`` given,
    in the model's field order, each value already of its field's type (ids and times
    taken from validated records, UTC-aware datetimes). What ``model.model_construct``
    does, without its generic per-field loop; for outputs a sink builds per record
    (``kg.subscribe.changes``), where validating again cost ~3 us a record. A unit
    test checks the result equals, and serializes as, the validated record."""
    new, setattr_ = model.__new__, object.__setattr__
    out = []
    for row in rows:
        record = new(model)
        setattr_(record, "__dict__", row)
        setattr_(record, "__pydantic_fields_set__", set(row))
        setattr_(record, "__pydantic_extra__", None)
        setattr_(record, "__pydantic_private__", None)
        out.append(record)
    return out


def _bad_utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def _raise(kind: str, msg: str) -> R:  # type: ignore[type-var]
    raise DecodeFailure(kind, msg)


def dead_letter(
    *,
    topic: str,
    raw_value: bytes | None,
    raw_key: bytes | None,
    failure: DecodeFailure | Exception,
    partition: int = -1,
    offset: int = -1,
    source: str = "livekg",
) -> DeadLetter:
    """Wrap a failed payload. The id is stable per (topic, partition, offset)."""
    value = raw_value or b""
    if isinstance(failure, DecodeFailure):
        error_type, error = failure.error_type, failure.error
    else:
        error_type, error = type(failure).__name__, str(failure)[:2000]
    now = utcnow()
    kept = value[:DLQ_MAX_RAW_BYTES]
    return DeadLetter(
        id=stable_id("dlq", topic, partition, offset, value[:256]),
        source=source,
        event_time=now,
        ingest_time=now,
        topic=topic,
        partition=partition,
        offset=offset,
        error_type=error_type,
        error=error,
        raw_key_b64=base64.b64encode(raw_key).decode() if raw_key else None,
        raw_value_b64=base64.b64encode(kept).decode(),
        raw_size=len(value),
        raw_truncated=len(kept) < len(value),
        raw_sha256=hashlib.sha256(value).hexdigest(),
    )
