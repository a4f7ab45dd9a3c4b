// fulltext_term for the admin, who reads every passage: no document is checked (at 1M passages,
// 1.0 ms for a term with 2,001 matches against 5.5 ms with the check; admin only, see
// ADMIN_QUERIES).
CALL db.idx.fulltext.queryNodes('Passage', $term) YIELD node
WITH node.id AS id
LIMIT $limit
WITH collect(id) AS ids
RETURN CASE WHEN size(ids) >= $limit THEN [] ELSE ids END AS ids, size(ids) AS n
