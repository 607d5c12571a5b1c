"""Standing questions (subscriptions) evaluated as the graph changes.

Pure logic: the subscription model (``model``), what a query reads and the index from
labels / relationship types / entity ids to subscriptions (``reads``, ``index``), the
conditions and answer diffs (``conditions``), the alert payload (``alert``), change
records from sink writes (``changes``), NL translation (``translate``) and storage as
``:Subscription`` nodes (``storage``). The faust shell is
``streams/processors/subscriptions.py``; docs/subscriptions.md.
"""
