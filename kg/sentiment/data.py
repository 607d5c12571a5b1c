"""Labelled data in the four evaluation formats, and the training set from ../shared/data.

Formats (issue 6): ``twitter`` CSV ``text,label`` (0 bearish, 1 bullish, 2 neutral);
``fpb`` lines ``sentence@label`` in latin-1; ``fiqa`` the FiQA task-1 JSON (score
< -0.1 negative, < 0.1 neutral, else positive, the rule FinGPT/Zhang et al. use);
``finfe`` a JSON list of ``[text, label]`` (0 negative, 1 neutral, 2 positive).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from core.records import SentimentLabel

NEG, NEU, POS = SentimentLabel.NEGATIVE, SentimentLabel.NEUTRAL, SentimentLabel.POSITIVE
TWITTER_LABELS = {"0": NEG, "1": POS, "2": NEU}
FINFE_LABELS = {0: NEG, 1: NEU, 2: POS}
FIQA_NEG_BELOW, FIQA_NEU_BELOW = -0.1, 0.1


class DataFormat(StrEnum):
    TWITTER = "twitter"
    FPB = "fpb"
    FIQA = "fiqa"
    FINFE = "finfe"


class Example(BaseModel):
    text: str
    label: SentimentLabel
    source: str = ""


def fiqa_label(score: float) -> SentimentLabel:
    if score < FIQA_NEG_BELOW:
        return NEG
    if score < FIQA_NEU_BELOW:
        return NEU
    return POS


def parse_twitter(raw: str, source: str = "twitter") -> list[Example]:
    reader = csv.DictReader(io.StringIO(raw))
    out = []
    for row in reader:
        label = str(row.get("label", "")).strip()
        if label not in TWITTER_LABELS:
            raise ValueError(f"twitter: unknown label {label!r}")
        out.append(Example(text=row["text"], label=TWITTER_LABELS[label], source=source))
    return out


def parse_fpb(raw: str, source: str = "fpb") -> list[Example]:
    out = []
    for line in raw.splitlines():
        if not line.strip():
            continue
        text, sep, label = line.rpartition("@")
        label = label.strip().lower()
        if not sep or label not in {"positive", "neutral", "negative"}:
            raise ValueError(f"fpb: bad line {line[:80]!r}")
        out.append(Example(text=text.strip(), label=SentimentLabel(label), source=source))
    return out


def parse_fiqa(raw: str, source: str = "fiqa") -> list[Example]:
    """FiQA task 1: ``{id: {sentence, info: [{sentiment_score, ...}]}}``; first aspect's score.

    A list of ``{sentence, score}`` rows (the Hugging Face redistribution) is accepted too.
    """
    data = json.loads(raw)
    rows: Iterable[dict[str, Any]] = data.values() if isinstance(data, dict) else data
    out = []
    for row in rows:
        if "info" in row:
            score = float(row["info"][0]["sentiment_score"])
        else:
            score = float(row["score"] if "score" in row else row["sentiment_score"])
        out.append(Example(text=row["sentence"], label=fiqa_label(score), source=source))
    return out


def parse_finfe(raw: str, source: str = "finfe") -> list[Example]:
    data = json.loads(raw)
    out = []
    for item in data:
        if isinstance(item, dict):
            text, label = item["text"], item["label"]
        else:
            text, label = item[0], item[1]
        if int(label) not in FINFE_LABELS:
            raise ValueError(f"finfe: unknown label {label!r}")
        out.append(Example(text=str(text), label=FINFE_LABELS[int(label)], source=source))
    return out


def load_examples(path: Path | str, fmt: DataFormat | str) -> list[Example]:
    path = Path(path)
    fmt = DataFormat(fmt)
    if fmt is DataFormat.FPB:
        return parse_fpb(path.read_text(encoding="latin-1"), path.name)
    raw = path.read_text(encoding="utf-8-sig")
    parser = {
        DataFormat.TWITTER: parse_twitter,
        DataFormat.FIQA: parse_fiqa,
        DataFormat.FINFE: parse_finfe,
    }[fmt]
    return parser(raw, path.name)


FIQA_FILES = (
    "task1_headline_ABSA_train.json",
    "task1_headline_ABSA_test.json",
    "task1_post_ABSA_train.json",
    "task1_post_ABSA_test.json",
)


def shared_training_set(data_dir: Path) -> list[Example]:
    """Twitter financial news (train split) + all FiQA task-1 sentences, as Zhang et al. 4.1.1."""
    out = load_examples(
        data_dir / "twitter_financial_news_sentiment" / "sent_train.csv", DataFormat.TWITTER
    )
    for name in FIQA_FILES:
        out += load_examples(data_dir / "fiqa_sentiment" / name, DataFormat.FIQA)
    return out


FINFE_DIR = "finfe_train"
FINFE_FILE = "train_list.json"


def finfe_training_set(data_dir: Path) -> list[Example]:
    """FinFE (BBT-FinCUGE) train split: 16,157 Chinese financial social-media posts.

    Its repository declares no licence (``finfe_train/SOURCE.txt``): it is used for training
    only, never committed, and ``livekg train sentiment --no-finfe`` leaves it out. Rows
    carry source ``finfe_train`` so the stratified split keeps them a group of their own.
    """
    rows = load_examples(data_dir / FINFE_DIR / FINFE_FILE, DataFormat.FINFE)
    return [e.model_copy(update={"source": "finfe_train"}) for e in rows]


TRAINSETS = Path(__file__).resolve().parent / "trainsets"


def bundled_training_set(folder: Path = TRAINSETS) -> list[Example]:
    """The team's hand-written Chinese training sets (finfe format; see trainsets/README.md).

    No Chinese labelled data is available here, so these are what the multilingual
    encoder learns Chinese investor-forum and news register from.
    """
    out: list[Example] = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        out += load_examples(path, DataFormat.FINFE)
    return out
