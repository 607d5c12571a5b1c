"""Training of the product's own models (``livekg train ...``)."""
