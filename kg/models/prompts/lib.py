"""The prompt library: every task module under ``kg.models.prompts`` and lookups by name.

Task modules are discovered (``pkgutil``), so adding a prompt module needs no edit
here. ``get("chat.simple")`` returns the latest version, ``get("chat.simple.v1")`` an
exact one.
"""

from __future__ import annotations

import importlib
import pkgutil
import re

import kg.models.prompts as _pkg
from kg.models.prompts.base import REGISTRY, PromptNotFound, PromptTemplate

_INFRA = {"base", "lib"}
_VERSIONED = re.compile(r"^(?P<key>.+)\.v(?P<version>\d+)$")
_loaded = False


def load_all() -> None:
    global _loaded
    if _loaded:
        return
    for mod in pkgutil.iter_modules(_pkg.__path__):
        if mod.name not in _INFRA and not mod.name.startswith("_"):
            importlib.import_module(f"{_pkg.__name__}.{mod.name}")
    _loaded = True


def get(name: str) -> PromptTemplate:
    load_all()
    if name in REGISTRY:
        return REGISTRY[name]
    versions = [t for t in REGISTRY.values() if t.key == name]
    if not versions:
        raise PromptNotFound(f"no prompt named {name!r}; known: {sorted(names())}")
    return max(versions, key=lambda t: t.version)


def names() -> list[str]:
    """Every registered id (``task.name.vN``)."""
    load_all()
    return sorted(REGISTRY)


def latest() -> dict[str, PromptTemplate]:
    """``task.name`` -> its highest version."""
    load_all()
    out: dict[str, PromptTemplate] = {}
    for tpl in REGISTRY.values():
        if tpl.key not in out or tpl.version > out[tpl.key].version:
            out[tpl.key] = tpl
    return out


def parse_id(prompt_id: str) -> tuple[str, int | None]:
    m = _VERSIONED.match(prompt_id)
    return (m["key"], int(m["version"])) if m else (prompt_id, None)
