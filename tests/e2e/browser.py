"""Debian's Chromium for the browser tests (Playwright drives it; no browser download)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# the machine's network is closed: no background connections, no sandbox as root
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
needs_chromium = pytest.mark.skipif(
    not Path(CHROMIUM).exists(), reason="the chromium package is not installed"
)
