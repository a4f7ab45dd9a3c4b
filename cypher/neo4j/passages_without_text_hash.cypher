// Migration to schema 2: passages written before kgp stored a hash of each text, in id order.
MATCH (p:Passage)
WHERE p.text_hash IS NULL AND p.id > $after
RETURN p.id AS id, p.text AS text
ORDER BY id
LIMIT $limit
