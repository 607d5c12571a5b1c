"""The ground floor: what every livekg package stands on, importing none of ours.

The event contract (``records``: one model per topic, ids; ``topics``: the catalog;
``codec`` and ``batch``: bytes -> record or dead letter), ``settings``, the ``metrics``
registry, the ``errors`` tree and the embedded ``runtime_state``. connectors, streams,
kg, serving and ops import from here; this package imports nothing above it
(enforced by the import-linter contracts in pyproject.toml).
"""
