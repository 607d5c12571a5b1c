"""The catalogue of named, parameterised Cypher reads and maintenance statements.

The statements live in ``kg/data/queries.toml`` (one home for "which Cypher does livekg
run"); this module loads and checks them once. Values are always ``$parameters``; a
``{slot}`` is a fragment from the catalogue or an integer the caller has bounded, filled
by ``cypher(name, slot=...)``; a name slot (``name_slots``) takes a node label path or a
relationship type from the ontology (Cypher cannot take those as parameters). ``writes``
marks the statements that change the graph. Per-backend upserts stay in ``kg/graph/sink.py``
and the NL -> Cypher shapes in ``kg/cypher/shapes.toml``.
"""

from __future__ import annotations

import re
import tomllib
from functools import cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, model_validator

QUERIES_FILE = Path(__file__).resolve().parents[1] / "data" / "queries.toml"
_SLOT = re.compile(r"\{([a-z_]+)\}")
# A label path (``Organization:Company``) or a relationship type (``HAS_CEO``).
_NAME = re.compile(r"[A-Z][A-Za-z0-9_]*(?::[A-Z][A-Za-z0-9_]*)*")


class NamedQuery(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    concept: str
    description: str
    cypher: str
    slots: tuple[str, ...] = ()
    name_slots: tuple[str, ...] = ()  # the slots that take a label path or relationship type
    writes: bool = False

    @model_validator(mode="after")
    def _slots_declared(self) -> NamedQuery:
        used = {m for m in _SLOT.findall(self.cypher) if m in self.slots}
        if used != set(self.slots):
            raise ValueError(f"{self.name}: slots {sorted(self.slots)} but used {sorted(used)}")
        if not set(self.name_slots) <= set(self.slots):
            raise ValueError(f"{self.name}: name_slots {sorted(self.name_slots)} not all slots")
        return self


@cache
def catalogue(path: Path = QUERIES_FILE) -> dict[str, NamedQuery]:
    """Every named query, validated (loaded once per process)."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return {name: NamedQuery(name=name, **body) for name, body in data.items()}


def cypher(name: str, **slots: str | int) -> str:
    """The Cypher of ``name`` with its slots filled (integers, catalogue fragments and, in
    name slots, ontology names only: user values go in as parameters, never here)."""
    q = catalogue()[name]
    missing = set(q.slots) - set(slots)
    if missing or set(slots) - set(q.slots):
        raise ValueError(f"{name}: needs slots {sorted(q.slots)}, got {sorted(slots)}")
    for slot, value in slots.items():
        if slot in q.name_slots:
            if not isinstance(value, str) or not _NAME.fullmatch(value):
                raise ValueError(f"{name}: {slot} takes a label path or relationship type")
        elif not isinstance(value, int) and value not in _fragments():
            raise ValueError(f"{name}: a slot takes an integer or a catalogue fragment")
    return _SLOT.sub(lambda m: str(slots[m.group(1)]) if m.group(1) in slots else m.group(0),
                     q.cypher)  # fmt: skip


@cache
def _fragments() -> frozenset[str]:
    return frozenset(q.cypher for q in catalogue().values() if not q.slots)
