"""Debian's Chromium for the browser tests (Playwright drives it; no browser download)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

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

# Chinese text renders with a CJK font, not as boxes: two different characters drawn in
# the page's own font differ from each other and from a code point no font has (tofu)
CJK_RENDERS_JS = """(sample) => {
  const font = getComputedStyle(document.body).fontFamily;
  const draw = (t) => {
    const c = document.createElement("canvas"); c.width = 48; c.height = 48;
    const x = c.getContext("2d"); x.font = `36px ${font}`; x.fillText(t, 4, 38);
    return x.getImageData(0, 0, 48, 48).data.filter((_, i) => i % 4 === 3).join(",");
  };
  const glyphs = [...new Set(sample)].map(draw), tofu = draw("\\u{10FFFD}"), blank = draw(" ");
  return glyphs.every((g) => g !== tofu && g !== blank) && new Set(glyphs).size === glyphs.length;
}"""


def watch_failures(page: Any) -> list[str]:
    """Every console error, uncaught page error, failed request and 4xx/5xx response of
    ``page`` from now on (the dashboard must load without one)."""
    seen: list[str] = []
    page.on("console", lambda m: seen.append(f"console {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: seen.append(f"page error {e}"))
    page.on("requestfailed", lambda r: seen.append(f"failed {r.url} {r.failure}"))
    page.on("response", lambda r: seen.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    return seen
