// Passages matching the full-text query, best first, of documents the caller may read.
CALL db.idx.fulltext.queryNodes('Passage', $query) YIELD node, score
OPTIONAL MATCH (d:Document {id: node.doc_id})
WITH node, score, d
WHERE $caller_reads_all OR any(g IN coalesce(d.groups, []) WHERE g IN $caller_groups)
RETURN node.id AS id, score
ORDER BY score DESC, id
LIMIT $limit
