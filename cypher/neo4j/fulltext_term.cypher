// The passages the full-text index matches for one query term (analysed, as the index does)
// among those the caller may read, at most $limit of them. kgp ranks by BM25 over these sets
// (with n, the passages the caller may read: count_readable_passages): Lucene's own score weighs
// every passage of the index, so it would reveal the others. One term per query, so that LIMIT
// stops the match early: a term more common than the ranking reads costs at most $limit
// document checks, whatever the graph's size.
CALL db.index.fulltext.queryNodes('passage_text', $term) YIELD node
OPTIONAL MATCH (d:Document {id: node.doc_id})
WITH node, d
WHERE $caller_admin OR any(g IN coalesce(d.groups, []) WHERE g IN $caller_groups)
RETURN node.id AS id
LIMIT $limit
