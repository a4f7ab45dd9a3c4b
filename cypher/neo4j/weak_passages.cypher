// Passages whose weakest SIMILAR edge scores at most $t (through the relationship index on score).
MATCH (p:Passage)-[s:SIMILAR]->()
WHERE s.score <= $t
RETURN DISTINCT p.id AS id
