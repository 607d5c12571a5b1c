"""Every processor module exposes ``register(app, ctx)``; the worker registers them all."""

from __future__ import annotations

from streams.processors import graph_sink, kg_upkeep, normalize, sentiment

PROCESSORS = [normalize.register, graph_sink.register, kg_upkeep.register, sentiment.register]
