"""kg's heavy packages load on first use only (kg/models/heavy.py): importing the modules the CLI,
the API and the stream lanes import must not load torch, transformers, scikit-learn,
scipy.sparse or ONNX."""

from __future__ import annotations

import subprocess
import sys

LIGHT = [
    "kg.sentiment.model",
    "kg.sentiment.service",
    "evaluation.train.sentiment",
    "kg.sentiment.encoder",
    "kg.sentiment.lexical",
    "kg.models.embed",
    "kg.models.llm",
    "kg.report.build",
    "kg.graph.static",
    "kg.subscribe.storage",
]
HEAVY = ["torch", "transformers", "sklearn", "scipy.sparse", "onnx", "onnxruntime"]


def test_importing_kg_loads_no_heavy_package() -> None:
    code = (
        "import importlib, sys\n"
        f"for m in {LIGHT!r}: importlib.import_module(m)\n"
        f"print(','.join(h for h in {HEAVY!r} if h in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300
    )
    assert out.stdout.strip() == ""


def test_a_heavy_loader_gives_the_package() -> None:
    from kg.models import heavy

    assert heavy.scipy_sparse().__name__ == "scipy.sparse"
    assert hasattr(heavy.sklearn_features().preprocessing, "normalize")
