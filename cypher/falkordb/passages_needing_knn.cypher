// Passages whose SIMILAR neighbours must be recomputed (they lost some to a removed document,
// or had fewer than k), a page at a time in id order.
MATCH (p:Passage)
WHERE p.needs_knn = true AND p.id > $after
RETURN p.id AS id, p.embedding AS embedding
ORDER BY id
LIMIT $limit
