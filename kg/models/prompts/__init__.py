"""Prompt templates: one module per task, versioned named functions, one registry.

Kept import-light on purpose: ``kg.models.prompts.lib`` discovers the task modules lazily, so
a task module may import ``kg.models.llm`` without an import cycle.
"""
