"""The question reader's builders, one per part of the query algebra (issue 41): series
(time windows, derived series, aggregates), entity sets (relations, negation, filters),
groups (ranking over groups) and chains; ``kg.cypher.synth.Synthesizer`` composes them.

Each builder is a mixin of ``Synthesizer``, moved out of synth.py verbatim; methods of the
other parts are reached through ``self``."""
