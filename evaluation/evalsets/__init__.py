"""Eval sets: frozen question, document and reference sets with their READMEs."""
