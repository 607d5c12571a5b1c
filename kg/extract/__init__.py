"""Knowledge extraction: chunking, LLM-free extractors, LLM modes, verification, metrics.

Public surface: ``Extractor`` (document -> verified ``Triple`` records), ``ExtractDoc``,
``Mode``, ``chunk_text`` and ``quality.report``. See docs/extraction.md.
"""

from kg.extract.chunking import Chunk, chunk_text
from kg.extract.pipeline import DocResult, ExtractDoc, Extractor
from kg.extract.types import Candidate, DocContext, Mode

__all__ = [
    "Candidate",
    "Chunk",
    "DocContext",
    "DocResult",
    "ExtractDoc",
    "Extractor",
    "Mode",
    "chunk_text",
]
