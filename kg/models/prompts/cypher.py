"""LLM revision of a synthesized Cypher query (FinQA, "LLM-based Revision").

The model sees only the relevant part of the schema (the concepts and relations around
the question's entities) and few-shot examples written for livekg's ontology (the seed
used 36; these are 16). Its answer is accepted by ``kg.cypher.revise`` only if the
query passes the read-only guard and runs.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from kg.models.prompts.base import ChatMessage, Context, assistant, prompt, system, user


class RevisedCypher(BaseModel):
    """One read-only Cypher query answering the question."""

    # No max_length: llama.cpp turns a length bound into a grammar with one optional
    # step per character (slow to build and sample); the reviser checks the length.
    cypher: str = Field(description="the corrected read-only Cypher query", min_length=1)


FEW_SHOT: tuple[tuple[str, str], ...] = (
    (
        "Who is the CEO of Apple?",
        "MATCH (c:Entity {id: $a0})-[f:HAS_CEO]->(t:Person) WHERE f.valid_to IS NULL "
        "RETURN DISTINCT t.id AS id, t.name AS name",
    ),
    (
        "Which companies belong to the Banks industry?",
        "MATCH (t:Company)-[f:BELONGS_TO]->(a:Entity {id: $a0}) WHERE f.valid_to IS NULL "
        "RETURN DISTINCT t.id AS id, t.name AS name ORDER BY id",
    ),
    (
        "How many companies are listed on NASDAQ?",
        "MATCH (t:Company) WHERE t.exchange = 'NASDAQ' RETURN count(DISTINCT t) AS count",
    ),
    ("What is the ticker of Moutai?", "MATCH (e:Entity {id: $a0}) RETURN e.ticker AS ticker"),
    (
        "What is the latest value of the US 10Y Treasury yield?",
        "MATCH (i:Indicator {id: $a0}) RETURN i.last_value AS value",
    ),
    (
        "What was the highest China 10Y yield on 2026-11-20?",
        "MATCH (i:Indicator {id: $a0})-[:HAS_OBSERVATION]->(o:Observation) "
        "WHERE o.observed_at >= $from AND o.observed_at < $to RETURN max(o.value) AS value",
    ),
    (
        "Average DR007 last week?",
        "MATCH (i:Indicator {id: $a0})-[:HAS_OBSERVATION]->(o:Observation) "
        "WHERE o.observed_at >= $from RETURN avg(o.value) AS value",
    ),
    (
        "Which bonds are issued by the Ministry of Finance?",
        "MATCH (t:Bond)-[f:ISSUED_BY]->(a:Entity {id: $a0}) WHERE f.valid_to IS NULL "
        "RETURN DISTINCT t.id AS id, t.name AS name ORDER BY id",
    ),
    (
        "Which funds hold Kweichow Moutai?",
        "MATCH (t:Fund)-[f:HAS_STAKE_IN]->(a:Entity {id: $a0}) WHERE f.valid_to IS NULL "
        "RETURN DISTINCT t.id AS id, t.name AS name ORDER BY id",
    ),
    (
        "Which companies does the fund managed by Zhang Kun hold?",
        "MATCH (p:Entity {id: $a0})-[f1:MANAGES]->(x:Fund)-[f2:HAS_STAKE_IN]->(t:Company) "
        "WHERE f1.valid_to IS NULL AND f2.valid_to IS NULL RETURN DISTINCT t.id AS id, "
        "t.name AS name ORDER BY id",
    ),
    (
        "哪些银行在中国上市？",
        "MATCH (t:Company)-[f0:BELONGS_TO]->(a0:Entity {id: $a0}) MATCH (t)-[f1:LISTED_IN]->"
        "(a1:Entity {id: $a1}) WHERE f0.valid_to IS NULL AND f1.valid_to IS NULL "
        "RETURN DISTINCT t.id AS id, t.name AS name ORDER BY id",
    ),
    (
        "人工智能概念有几家公司？",
        "MATCH (t:Company)-[f:BELONGS_TO]->(a:Entity {id: $a0}) WHERE f.valid_to IS NULL "
        "RETURN count(DISTINCT t) AS count",
    ),
    (
        "Which indicator tracks the 10-year US Treasury note?",
        "MATCH (t:Indicator)-[f:TRACKS]->(a:Entity {id: $a0}) RETURN DISTINCT t.id AS id, "
        "t.name AS name",
    ),
    (
        "Which US bond has the longest tenor?",
        "MATCH (t:Bond)-[f:LISTED_IN]->(a:Entity {id: $a0}) WHERE f.valid_to IS NULL "
        "RETURN t.id AS id, t.name AS name, t.tenor_years AS tenor_years "
        "ORDER BY tenor_years DESC LIMIT 1",
    ),
    (
        "Which companies are in the same industry as Intel?",
        "MATCH (a:Entity {id: $a0})-[f1:BELONGS_TO]->(x:Industry)<-[f2:BELONGS_TO]-(t:Company) "
        "WHERE t.id <> $a0 RETURN DISTINCT t.id AS id, t.name AS name ORDER BY id",
    ),
    (
        "Who chairs the central bank that sets the loan prime rate?",
        "MATCH (x:Institution)-[f1:SETS_POLICY]->(a:Entity {id: $a0}) "
        "MATCH (x)-[f2:HAS_CHAIRMAN]->(t:Person) RETURN DISTINCT t.id AS id, t.name AS name",
    ),
)

RULES = (
    "You fix Cypher queries for a financial knowledge graph (Neo4j 5 / FalkorDB).\n"
    "Rules: read-only (MATCH, OPTIONAL MATCH, WITH, WHERE, RETURN, ORDER BY, LIMIT only); "
    "use the parameters given ($a0, $a1 ... are entity ids, $from/$to epoch milliseconds); "
    "never write values into the query; entity rows are returned as `t.id AS id, t.name "
    "AS name`, numbers as `value`, counts as `count`; facts currently valid have "
    "`f.valid_to IS NULL`. The query is checked with EXPLAIN and kept only if it runs and "
    'returns rows of the asked kind. Answer with JSON {"cypher": "..."} only.'
)


@prompt("cypher", "revise", version=1, inputs=("question", "schema", "cypher", "params"))
def revise_v1(ctx: Context) -> list[ChatMessage]:
    msgs: list[ChatMessage] = [system(RULES)]
    for q, c in FEW_SHOT[: int(ctx.get("shots") or len(FEW_SHOT))]:
        msgs.append(user(f"Question: {q}"))
        msgs.append(assistant('{"cypher": "' + c.replace('"', '\\"') + '"}'))
    msgs.append(
        user(
            f"Schema (relevant part):\n{ctx['schema']}\n\nQuestion: {ctx['question']}\n"
            f"Parameters: {ctx['params']}\nDraft query (may be wrong or empty):\n"
            f"{ctx['cypher']}\n\nReturn the corrected query."
        )
    )
    return msgs
