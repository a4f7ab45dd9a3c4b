// Migration to schema 2: the needs_knn property becomes a NEEDS_KNN self-relationship, and every
// passage is flagged, so the next sync recomputes each one's exact k nearest (graphs written
// before schema 2 linked old passages only to what existed when they were written).
MATCH (p:Passage)
MERGE (p)-[:NEEDS_KNN {flag: true}]->(p)
WITH p
WHERE p.needs_knn IS NOT NULL
SET p.needs_knn = null
RETURN count(p) AS cleared
