"""The linear head every embedding classifier ends in, and its softmax.

Below the classifiers (``model.py``), the encoders (``encoder.py``) and training, which
all build or load heads.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np


def meta_arrays(meta: Mapping[str, object]) -> dict[str, Any]:
    """``meta.<key>`` arrays for ``np.savez`` (typed Any: numpy's stubs read a ``**`` map
    of arrays as its boolean keywords)."""
    return {f"meta.{key}": np.asarray(v) for key, v in meta.items()}


def softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


class LinearHead:
    """Multinomial logistic regression on fixed embeddings: softmax(x W^T + b)."""

    def __init__(self, weight: np.ndarray, bias: np.ndarray, model_id: str = "head") -> None:
        self.weight = np.asarray(weight, dtype=np.float32)
        self.bias = np.asarray(bias, dtype=np.float32)
        self.model_id = model_id

    def proba(self, x: np.ndarray) -> np.ndarray:
        return softmax(x @ self.weight.T + self.bias)

    def save(self, path: Path, **meta: str | float | int) -> None:
        np.savez(
            path,
            weight=self.weight.astype(np.float16),
            bias=self.bias,
            **meta_arrays({"model_id": self.model_id, **meta}),
        )

    @classmethod
    def load(cls, path: Path) -> LinearHead:
        data = np.load(path, allow_pickle=False)
        return cls(data["weight"], data["bias"], str(data["meta.model_id"].item()))
