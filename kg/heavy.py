"""kg's heavy third-party packages, each imported here, once, on first use.

torch, transformers, scikit-learn and ONNX take seconds and hundreds of MB to import,
and only training, the encoder classifiers and the lexical models need them: the CLI,
the API and the light stream lanes start without them. A caller asks for one inside the
function that needs it (``torch = heavy.torch()``); every other import is at the top of
its module. Annotations use ``if TYPE_CHECKING: import torch``.
"""

from __future__ import annotations

import contextlib
from types import ModuleType


def torch() -> ModuleType:
    """``torch`` (``torch.nn``, ``torch.onnx`` and ``torch.ao`` are its attributes)."""
    import torch  # optional: heavy (seconds, ~1 GB); training and the torch encoders only

    return torch


def transformers() -> ModuleType:
    """``transformers`` (a lazy module: its model classes load on attribute access), with
    ``transformers.initialization`` loaded where this version has it."""
    import transformers  # optional: heavy (imports torch); the encoder bases only

    with contextlib.suppress(ImportError):  # newer versions only (``no_init_weights``)
        import transformers.initialization
    return transformers


def sklearn() -> ModuleType:
    """``sklearn`` with the submodules kg uses loaded (``linear_model``, ``preprocessing``,
    ``feature_extraction.text``)."""
    # optional: heavy (seconds); the lexical models and the embedding heads only
    import sklearn.feature_extraction.text
    import sklearn.linear_model
    import sklearn.preprocessing

    return sklearn


def scipy_sparse() -> ModuleType:
    """``scipy.sparse`` (the lexical models' feature matrices)."""
    import scipy.sparse  # optional: heavy (~1 s); the lexical models only

    return scipy.sparse


def onnx() -> ModuleType:
    """``onnx`` (reads exported graphs when choosing which MatMuls stay float)."""
    import onnx  # optional: only when an int8 copy of an export is made

    return onnx


def onnxruntime() -> ModuleType:
    """``onnxruntime`` with ``onnxruntime.quantization`` loaded."""
    # optional: only the encoder classifiers run ONNX
    import onnxruntime
    import onnxruntime.quantization

    return onnxruntime
