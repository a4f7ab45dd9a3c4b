// Passages whose SIMILAR neighbours must be recomputed (a removed or replaced document held some
// of them), a page at a time in id order. From the flags' index (every flag has flag: true), so
// it costs what is flagged, not what the graph holds (a pattern from the passages scans them).
MATCH ()-[f:NEEDS_KNN]->()
WHERE f.flag = true
WITH startNode(f) AS p
WHERE p.id > $after
RETURN p.id AS id, p.embedding AS embedding
ORDER BY id
LIMIT $limit
