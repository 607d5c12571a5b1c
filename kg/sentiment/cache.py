"""Where models and derived files that are not committed live: the livekg cache folder."""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    """``$LIVEKG_CACHE_DIR``, else ``$XDG_CACHE_HOME/livekg`` (``~/.cache/livekg``)."""
    root = os.environ.get("LIVEKG_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "livekg"
    )
    return Path(root)
