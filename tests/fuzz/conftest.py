"""Report how many hostile inputs each parser was fuzzed with."""

from __future__ import annotations

import pytest

from tests.fuzz.hostile import COUNTS


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if COUNTS:
        terminalreporter.section("fuzzed inputs per parser")
        for name, n in sorted(COUNTS.items()):
            terminalreporter.write_line(f"{name}: {n}")


@pytest.fixture(autouse=True)
def _quiet_connector_logs() -> None:
    """Every rejected input logs a warning; thousands of them only slow the run."""
    import logging

    for name in ("connectors", "streams", "tenacity"):
        logging.getLogger(name).setLevel(logging.ERROR)
