"""In-memory fakes of livekg's model seams for callers' unit tests.

from tests.fakes import FakeEmbedder, FakeLLM
"""

from tests.fakes.embed import FakeEmbedder
from tests.fakes.llm import FakeLLM, example_for_schema

__all__ = ["FakeEmbedder", "FakeLLM", "example_for_schema"]
