// The vectors of passages whose keys lie in [$from, $to), by key, at most $limit: what an index
// beside the graph has yet to add (written since it last caught up).
MATCH (p:Passage)
WHERE p.vkey >= $from AND p.vkey < $to
RETURN p.vkey AS key, p.embedding AS embedding
ORDER BY key
LIMIT $limit
