"""NL -> Cypher question answering over the knowledge graph (FinQA), read-only.

Public surface: ``CypherQA`` (ask a question), ``AskResult``, ``check_read_only`` and
``run_read_only`` (the two guarded ways to run a query that did not come from livekg).
"""

from kg.cypher.execute import QueryTimeout, run_read_only
from kg.cypher.guard import check_read_only, is_read_only
from kg.cypher.qa import AskResult, Citation, CypherQA, HybridAnswer, HybridAnswerer, LLMReviser

__all__ = [
    "AskResult",
    "Citation",
    "CypherQA",
    "HybridAnswer",
    "HybridAnswerer",
    "LLMReviser",
    "QueryTimeout",
    "check_read_only",
    "is_read_only",
    "run_read_only",
]
