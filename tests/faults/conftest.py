"""The fault drills share one private drill stack (broker and graph they may break)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from evaluation.drill.harness import DrillStack


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if "faults" in Path(str(item.fspath)).parts:
            item.add_marker(pytest.mark.integration)
            item.add_marker(pytest.mark.faults)


@pytest.fixture(scope="session")
def drill_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DrillStack]:
    stack = DrillStack(tmp_path_factory.mktemp("drills"))
    stack.start()
    try:
        yield stack
    finally:
        stack.stop()
