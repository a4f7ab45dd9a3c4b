// Passages whose weakest SIMILAR edge scores at most $t (the relationship index on score is used
// because the source node has no label in the pattern).
MATCH (p)-[s:SIMILAR]->()
WHERE s.score <= $t
RETURN DISTINCT p.id AS id
