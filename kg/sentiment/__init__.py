"""Financial sentiment: CPU and LLM classifiers, their training, retrieval context and the
per-entity state that raises alerts."""
