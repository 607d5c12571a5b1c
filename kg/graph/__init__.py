"""The graph floor: ontology, stores (FalkorDB, Neo4j), the sink's writes, static loads,
validity chains, canonical names, quantities and the named queries - the only home of
livekg's Cypher. Imports nothing of kg's models or capabilities."""
