// The passages the full-text index matches for one query term (stemmed, as the index does)
// among those the caller may read, at most $limit of them. kgp ranks by BM25 over these sets
// (with n, the passages the caller may read: count_readable_passages), because FalkorDB's own
// full-text score does not weigh a term's rarity (a common word outscored a rare name); counted
// over what the caller may read, the ranking reveals nothing of the other passages. One term per
// query, so that LIMIT stops the match early: a term more common than the ranking reads (a few
// thousand passages) costs at most $limit document checks, whatever the graph's size (one query
// for all terms checked every match: 218 ms a question at 496,000 passages, 73 ms this way).
// Not a CALL {} per term with LIMIT inside: with a procedure in the subquery, FalkorDB 4.16
// returned wrong counts (matches of one term counted for another).
CALL db.idx.fulltext.queryNodes('Passage', $term) YIELD node
OPTIONAL MATCH (d:Document {id: node.doc_id})
WITH node, d
WHERE $caller_admin OR any(g IN coalesce(d.groups, []) WHERE g IN $caller_groups)
RETURN node.id AS id
LIMIT $limit
