"""The model floor: the LLM client and its embedded runtime, embeddings, heavy-model
loading and the prompts. It is handed what it needs (an ontology's relation list, a
schema slice) and imports nothing of kg.graph or the capabilities."""
