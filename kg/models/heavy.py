"""kg's heavy third-party packages, each imported here, once, on first use.

torch, transformers, scikit-learn, scipy.sparse and ONNX take from a fraction of a second
to seconds and hundreds of MB to import, and only training, the encoder classifiers and
the lexical models need them: the CLI, the API and the light stream lanes start without
them. A caller asks for one inside the function that needs it (``torch = heavy.torch()``);
every other import is at the top of its module. Each function loads only what its
callers need (inference never loads the training-only parts). Annotations use
``if TYPE_CHECKING: import torch``.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from types import ModuleType
from typing import Any


def torch() -> ModuleType:
    """``torch`` (``torch.nn``, ``torch.onnx`` and ``torch.ao`` are its attributes)."""
    import torch  # optional: heavy (seconds, ~1 GB); training and the torch encoders only

    return torch


def transformers() -> ModuleType:
    """``transformers`` (a lazy module: its model classes load on attribute access)."""
    import transformers  # optional: heavy (imports torch); the encoder bases only

    return transformers


def transformers_no_init_weights() -> Callable[[], AbstractContextManager[Any]] | None:
    """``transformers``' context that skips random weight init; None in versions without it."""
    try:
        from transformers.initialization import no_init_weights  # optional: newer versions
    except ImportError:
        return None
    return no_init_weights


def transformers_bidirectional_mask() -> Callable[..., Any]:
    """``transformers.masking_utils.create_bidirectional_mask``: the attention mask an
    encoder's layers take, built as the model's own forward builds it (for the attention
    implementation in its config), for code that runs the layers one by one."""
    from transformers.masking_utils import create_bidirectional_mask  # optional: heavy

    return create_bidirectional_mask


def sklearn_features() -> ModuleType:
    """``sklearn`` with ``feature_extraction.text`` and ``preprocessing`` loaded (the
    lexical models' features, at inference too)."""
    # optional: heavy (seconds); the lexical models only
    import sklearn.feature_extraction.text
    import sklearn.preprocessing

    return sklearn


def sklearn_linear_model() -> ModuleType:
    """``sklearn.linear_model`` (training the lexical models and the e5 head only)."""
    import sklearn.linear_model  # optional: heavy; training only

    return sklearn.linear_model


def scipy_sparse() -> ModuleType:
    """``scipy.sparse`` (the lexical models' feature matrices)."""
    import scipy.sparse  # optional: heavy (~1 s); the lexical models only

    return scipy.sparse


def onnx() -> ModuleType:
    """``onnx`` (reads exported graphs when choosing which MatMuls stay float)."""
    import onnx  # optional: only when an int8 copy of an export is made

    return onnx


def onnxruntime() -> ModuleType:
    """``onnxruntime`` (the encoder classifiers' inference sessions)."""
    import onnxruntime  # optional: only the encoder classifiers run ONNX

    return onnxruntime


def onnxruntime_quantization() -> ModuleType:
    """``onnxruntime.quantization`` (imports onnx; only when an int8 copy is made)."""
    import onnxruntime.quantization  # optional: once per artifact, when quantizing

    return onnxruntime.quantization
