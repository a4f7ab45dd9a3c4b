// Migration to schema 6: passages written before the full-text index held their terms
// (kgp.text.index_terms), in id order.
MATCH (p:Passage)
WHERE p.terms IS NULL AND p.id > $after
RETURN p.id AS id, p.text AS text
ORDER BY id
LIMIT $limit
