// fulltext_term for the admin, who reads every passage: no document is checked (admin only,
// see ADMIN_QUERIES).
CALL db.index.fulltext.queryNodes('passage_text', $term) YIELD node
WITH node.id AS id
LIMIT $limit
WITH collect(id) AS ids
RETURN CASE WHEN size(ids) >= $limit THEN [] ELSE ids END AS ids, size(ids) AS n
