// Passages whose SIMILAR neighbours must be recomputed (they lost some to a removed document).
MATCH (p:Passage)
WHERE p.needs_knn = true
RETURN p.id AS id, p.embedding AS embedding
ORDER BY id
LIMIT $limit
