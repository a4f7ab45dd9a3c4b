// Migration to schema 6: whether a passage was written before the full-text index held each
// passage's terms (kgp.text.index_terms).
MATCH (p:Passage)
WHERE p.terms IS NULL
RETURN p.id AS id
LIMIT 1
