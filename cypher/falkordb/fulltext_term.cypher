// The passages the full-text index matches for one query term (stemmed by kgp, as the terms are)
// among those the caller may read, at most $limit of them, as one row: `ids` and their number
// `n`, and no ids when there are $limit (a term that common counts for nothing). kgp ranks by
// BM25 over these sets (with n, the passages the caller may read: count_readable_passages),
// because FalkorDB's own full-text score does not weigh a term's rarity (a common word outscored
// a rare name); counted over what the caller may read, the ranking reveals nothing of the other
// passages. One term per query, so that LIMIT stops the match early: a term more common than the
// ranking reads costs at most $limit document checks, whatever the graph's size. The caller's
// documents through HAS_PASSAGE (3.5 ms for 2,001 matches at 1M passages; 5.5 ms by the
// Document id index). A caller reading every passage (the admin; any caller in a covered read,
// kgp.stores.coverage) runs fulltext_term_all, which checks none.
// Not a CALL {} per term with LIMIT inside: with a procedure in the subquery, FalkorDB 4.16
// returned wrong counts (matches of one term counted for another).
CALL db.idx.fulltext.queryNodes('Passage', $term) YIELD node
MATCH (node)<-[:HAS_PASSAGE]-(d:Document)
WHERE $caller_reads_all OR any(g IN coalesce(d.groups, []) WHERE g IN $caller_groups)
WITH node.id AS id
LIMIT $limit
WITH collect(id) AS ids
RETURN CASE WHEN size(ids) >= $limit THEN [] ELSE ids END AS ids, size(ids) AS n
