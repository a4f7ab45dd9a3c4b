// The passages the full-text index matches for one query term (analysed, as the index does)
// among those the caller may read, at most $limit of them, as one row: `ids` and their number
// `n`, and no ids when there are $limit (a term that common counts for nothing). kgp ranks by
// BM25 over these sets (with n, the passages the caller may read: count_readable_passages):
// Lucene's own score weighs every passage of the index, so it would reveal the others. One term
// per query, so that LIMIT stops the match early: a term more common than the ranking reads
// costs at most $limit document checks, whatever the graph's size. The admin reads every
// passage: fulltext_term_all checks none.
CALL db.index.fulltext.queryNodes('passage_text', $term) YIELD node
MATCH (node)<-[:HAS_PASSAGE]-(d:Document)
WHERE $caller_reads_all OR any(g IN coalesce(d.groups, []) WHERE g IN $caller_groups)
WITH node.id AS id
LIMIT $limit
WITH collect(id) AS ids
RETURN CASE WHEN size(ids) >= $limit THEN [] ELSE ids END AS ids, size(ids) AS n
