// How many passages the caller may read (every passage for the admin): BM25's n for the
// caller's full-text ranking. kgp keeps it a little while per caller (GraphStore.readable_passages).
MATCH (p:Passage)
WITH count(p) AS everything
OPTIONAL MATCH (d:Document)
WHERE NOT $caller_reads_all AND any(g IN coalesce(d.groups, []) WHERE g IN $caller_groups)
OPTIONAL MATCH (d)-[:HAS_PASSAGE]->(q:Passage)
WITH everything, count(q) AS readable
RETURN CASE WHEN $caller_reads_all THEN everything ELSE readable END AS n
