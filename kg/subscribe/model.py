"""What a user registers: a standing question (NL or read-only Cypher with parameters)
plus the condition that makes its answer worth an alert."""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from core.records import stable_id

MAX_CYPHER_CHARS = 4000
MAX_PARAM_ITEMS = 1000


class ConditionKind(StrEnum):
    ANSWER_CHANGED = "answer_changed"  # the set of rows differs from the previous answer
    NEW_ROWS = "new_rows"  # rows not in the previous answer appeared
    THRESHOLD = "threshold"  # a value column crosses a threshold (above/below)
    COUNT_WINDOW = "count_window"  # more than ``count`` rows of one key within ``window_s``


class Condition(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kind: ConditionKind = ConditionKind.ANSWER_CHANGED
    column: str | None = Field(default=None, description="threshold: the value column")
    threshold: float | None = None
    direction: Literal["above", "below"] = "below"
    count: int | None = Field(default=None, ge=0, description="count_window: fires when > count")
    window_s: float | None = Field(default=None, gt=0)
    key_column: str | None = Field(default=None, description="count_window: rows grouped by it")
    time_column: str | None = Field(default=None, description="count_window: epoch ms column")

    @model_validator(mode="after")
    def _complete(self) -> Condition:
        need: dict[ConditionKind, tuple[str, ...]] = {
            ConditionKind.THRESHOLD: ("column", "threshold"),
            ConditionKind.COUNT_WINDOW: ("count", "window_s", "key_column", "time_column"),
        }
        missing = [f for f in need.get(self.kind, ()) if getattr(self, f) is None]
        if missing:
            raise ValueError(f"condition {self.kind.value} needs {', '.join(missing)}")
        return self


class SubscriptionSpec(BaseModel):
    """The request: exactly one of ``question`` (natural language, translated by the
    query service) and ``cypher`` (read-only, checked by the guard)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=200)
    question: str | None = Field(default=None, max_length=1000)
    cypher: str | None = Field(default=None, max_length=MAX_CYPHER_CHARS)
    params: dict[str, Any] = Field(default_factory=dict)
    condition: Condition = Field(default_factory=Condition)
    webhook: str | None = Field(default=None, max_length=2000, pattern=r"^https?://")
    severity: Literal["info", "warning", "critical"] = "info"

    @model_validator(mode="after")
    def _one_query(self) -> SubscriptionSpec:
        has_question = bool(self.question and self.question.strip())
        if has_question == bool(self.cypher and self.cypher.strip()):
            raise ValueError("give exactly one of question (natural language) and cypher")
        for k, v in self.params.items():
            if isinstance(v, list) and len(v) > MAX_PARAM_ITEMS:
                raise ValueError(f"parameter {k!r} has more than {MAX_PARAM_ITEMS} items")
        return self


class Subscription(SubscriptionSpec):
    """A registered subscription: ``cypher``/``params`` are what runs (for an NL one,
    the translation's), ``baseline`` the answer state at registration (so a condition
    that already held then does not fire)."""

    id: str
    owner: str  # a digest of the API key, never the key
    created_at: int  # epoch ms
    translated_from: str | None = None
    baseline: dict[str, Any] = Field(default_factory=dict)
    last_fired_at: int | None = None
    last_alert_id: str | None = None

    @model_validator(mode="after")
    def _one_query(self) -> Subscription:  # overrides the request's check
        if not (self.cypher and self.cypher.strip()):
            raise ValueError("a registered subscription holds the query it runs")
        return self


def subscription_id(owner: str, spec: SubscriptionSpec) -> str:
    """Same owner and same request, same id: registering twice is idempotent."""
    body = json.dumps(spec.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)
    return "sub-" + stable_id("subscription", owner, body)


def owner_of(api_key: str | None) -> str:
    """Who owns a subscription: a digest of the API key (``anonymous`` without keys)."""
    return "key-" + stable_id("api-key", api_key) if api_key else "anonymous"
