// How many entries the vector index holds: Neo4j removes a deleted node's vector, so the live
// passages (no orphans).
MATCH (p:Passage)
RETURN count(p) AS live, 0 AS orphans
