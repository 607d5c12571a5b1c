"""Documents to measure on: JSONL/text files, and a deterministic dev/test split of the
shared market corpus (../shared/data/market_corpus, never committed).

The split is by a hash of the file name: ``sha1(name) % 5 == 0`` is test (held out,
never looked at while writing patterns), the rest is dev. The corpus's own 10-K index
names the filer of each section, which becomes the document's ``company``.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from kg.extract.pipeline import ExtractDoc

DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "market_corpus"
_FRONT = re.compile(r"^---\n(.*?)\n---\n", re.S)


def split_of(name: str) -> str:
    return "test" if int(hashlib.sha1(name.encode()).hexdigest(), 16) % 5 == 0 else "dev"


def corpus_docs(root: Path | None = None, split: str = "dev") -> list[ExtractDoc]:
    root = (root or DEFAULT_CORPUS).resolve()
    docs: list[ExtractDoc] = []
    index = root / "sec_10k" / "index.csv"
    if index.is_file():
        with index.open(encoding="utf-8") as fh:
            for row in csv.DictReader(fh):
                if split_of(row["file"]) != split:
                    continue
                text = (root / "sec_10k" / row["file"]).read_text(encoding="utf-8")
                docs.append(ExtractDoc(
                    id=row["file"], text=text, kind="filing", company=row["company"],
                    form_type="10-K", lang="en",
                    event_time=datetime(int(row["fiscal_year"]), 12, 31, tzinfo=UTC),
                ))  # fmt: skip
    for path in sorted((root / "sec_8k").glob("*.txt")):
        if split_of(path.name) == split:
            docs.append(ExtractDoc(id=path.name, text=path.read_text(encoding="utf-8"),
                                   kind="filing", form_type="8-K", lang="en"))  # fmt: skip
    for path in sorted((root / "fomc_statements").glob("*.md")):
        if split_of(path.name) != split:
            continue
        raw = path.read_text(encoding="utf-8")
        m = _FRONT.match(raw)
        meta = (
            dict(line.split(": ", 1) for line in m.group(1).splitlines() if ": " in line)
            if m
            else {}
        )
        when = datetime.fromisoformat(meta["date"]).replace(tzinfo=UTC) if "date" in meta else None
        body = raw[m.end() :] if m else raw
        title = meta.get("title", "")
        docs.append(
            ExtractDoc(
                id=path.name, text=body, kind="news", title=title, lang="en", event_time=when
            )
        )
    return docs


def file_docs(path: Path) -> Iterator[ExtractDoc]:
    """A JSONL of documents (one JSON object a line), or one text/Markdown document."""
    if path.suffix == ".jsonl":
        with path.open(encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.strip():
                    yield ExtractDoc.model_validate(json.loads(line))
        return
    data = path.read_bytes()
    text = data.decode("utf-8", errors="replace")
    yield ExtractDoc(
        id=path.name, text=text, kind="filing" if "ITEM" in text[:2000].upper() else "news"
    )


def load(spec: str) -> list[ExtractDoc]:
    """``corpus:dev`` / ``corpus:test`` or a file path."""
    if spec.startswith("corpus:"):
        return corpus_docs(split=spec.split(":", 1)[1])
    return list(file_docs(Path(spec)))
