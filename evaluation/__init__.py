"""Measurement beside the product: benchmarks with their same-run references, fault
drills, eval sets, scorers and training. It imports the product; the product never
imports it (an import-linter contract)."""
