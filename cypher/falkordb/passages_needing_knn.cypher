// Passages whose SIMILAR neighbours must be recomputed (a removed or replaced document held some
// of them), a page at a time in id order.
MATCH (p:Passage)-[:NEEDS_KNN]->(p)
WHERE p.id > $after
RETURN p.id AS id, p.embedding AS embedding
ORDER BY id
LIMIT $limit
